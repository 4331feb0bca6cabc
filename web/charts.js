// charts.js: hand-written SVG charts of a report. Bars are the cell means
// with their 95% CI as error bars, one row per cell with its whole label,
// and the % change against the baseline with the CI of the change (numbers
// from the report JSON, not recomputed); the scatter is every sample of every cell, coloured by boot,
// so outliers and boot-to-boot spread show.
import { svg, fmtNum } from './dom.js';

const PAD_L = 56, PAD_R = 12, PAD_T = 12;
let W = 640;

// Charts are drawn at the width they are shown at, so text stays legible.
export function setWidth(px) { W = Math.max(300, Math.min(720, Math.round(px))); }
const BOOT_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

// Axis ticks: short, with SI suffixes (2M, 500k, 0.05).
function fmtTick(v) {
	const a = Math.abs(v);
	if (a >= 1e9) return +(v / 1e9).toPrecision(3) + 'G';
	if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
	if (a >= 1e4) return +(v / 1e3).toPrecision(3) + 'k';
	return fmtNum(v);
}

function niceRange(lo, hi) {
	if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
	if (lo === hi) { const d = Math.abs(lo) || 1; return [lo - d / 2, hi + d / 2]; }
	const pad = (hi - lo) * 0.05;
	return [lo - pad, hi + pad];
}

function ticks(lo, hi, n = 5) {
	const step0 = (hi - lo) / n;
	const mag = 10 ** Math.floor(Math.log10(step0));
	const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0) || step0;
	const out = [];
	for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-12; v += step) out.push(v);
	return out;
}

function axisY(g, y, lo, hi, top, bottom, unit) {
	for (const t of ticks(lo, hi)) {
		const yy = y(t);
		g.append(svg('line', { x1: PAD_L - 4, x2: W - PAD_R, y1: yy, y2: yy, class: 'grid' }),
			svg('text', { x: PAD_L - 6, y: yy + 4, 'text-anchor': 'end', class: 'tick' }, fmtTick(t)));
	}
	g.append(svg('line', { x1: PAD_L, x2: PAD_L, y1: top, y2: bottom, class: 'axis' }));
	if (unit) g.append(svg('text', { x: 4, y: top + 10, class: 'tick' }, unit));
}

function labelX(g, x, yb, label, bw) {
	// The scatter's column labels are cut; the full text stays in the
	// tooltip (and whole in the bar charts beside it).
	const max = Math.max(3, Math.floor(bw / 6));
	const shown = label.length > max ? label.slice(0, max - 1) + '…' : label;
	g.append(svg('text', { x, y: yb + 14, 'text-anchor': 'middle', class: 'tick' }, shown,
		svg('title', {}, label)));
}

const CH = 6.2;		// px per character of an 11 px label
const LINE = 13;	// px per label line

// A label as lines of at most n characters, broken at spaces when it can.
function wrap(label, n) {
	const out = [];
	let cur = '';
	for (const w of label.split(' ')) {
		for (let rest = w; rest.length;) {
			const room = cur ? n - cur.length - 1 : n;
			if (rest.length <= room) { cur = cur ? cur + ' ' + rest : rest; rest = ''; }
			else if (cur) { out.push(cur); cur = ''; }
			else { out.push(rest.slice(0, n)); rest = rest.slice(n); }
		}
	}
	if (cur) out.push(cur);
	return out.length ? out : [''];
}

// Horizontal rows, each cell's whole label on the left (wrapped, never
// cut), so that long labels stay readable at any width.
function rowsFrame(labels, cls, aria, name, extraRight) {
	const maxChars = Math.max(8, Math.floor((W * 0.42) / CH));
	const lines = labels.map((l) => wrap(l, maxChars));
	const longest = Math.max(4, ...lines.flat().map((l) => l.length));
	const padL = Math.min(W * 0.45, longest * CH + 12);
	const rowH = lines.map((ls) => Math.max(20, ls.length * LINE + 6));
	const top = PAD_T, H = top + rowH.reduce((a, b) => a + b, 0) + 30;
	const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart ' + cls, role: 'img', 'aria-label': aria, 'data-metric': name });
	const g = svg('g', {});
	root.append(g);
	const ys = [];
	let y = top;
	lines.forEach((ls, i) => {
		ys.push(y + rowH[i] / 2);
		const t = svg('text', { x: padL - 6, y: y + rowH[i] / 2 - ((ls.length - 1) * LINE) / 2 + 4, 'text-anchor': 'end', class: 'tick rowlabel', 'data-label': labels[i] });
		ls.forEach((l, k) => t.append(svg('tspan', { x: padL - 6, dy: k ? LINE : 0 }, l)));
		g.append(t);
		y += rowH[i];
	});
	return { root, g, ys, x0: padL, x1: W - PAD_R - (extraRight || 0), bottom: y, H };
}

function axisX(g, x, lo, hi, top, bottom, unit, fmt = fmtTick) {
	for (const t of ticks(lo, hi)) {
		const xx = x(t);
		g.append(svg('line', { x1: xx, x2: xx, y1: top, y2: bottom, class: 'grid' }),
			svg('text', { x: xx, y: bottom + 14, 'text-anchor': 'middle', class: 'tick' }, fmt(t)));
	}
	if (unit) g.append(svg('text', { x: W - PAD_R, y: bottom + 26, 'text-anchor': 'end', class: 'tick' }, unit));
}

// metric: one entry of report.metrics ({name, unit, rows:[{cell, mean, ci_lo, ci_hi, ...}]}).
// A CI reaching below zero is drawn and said so beside the bar.
export function barChart(metric) {
	const rows = metric.rows;
	const vals = rows.flatMap((r) => [r.mean, r.ci_lo, r.ci_hi]).filter(Number.isFinite);
	let [lo, hi] = niceRange(Math.min(0, ...vals), Math.max(0, ...vals));
	if (!vals.length) [lo, hi] = [0, 1];
	const f = rowsFrame(rows.map((r) => r.cell), 'bars', `${metric.name}: mean per cell with 95% CI`, metric.name);
	const x = (v) => f.x0 + ((v - lo) / (hi - lo)) * (f.x1 - f.x0);
	axisX(f.g, x, lo, hi, PAD_T, f.bottom, metric.unit);
	rows.forEach((r, i) => {
		const cy = f.ys[i], bh = 12;
		if (Number.isFinite(r.mean)) {
			const x0 = x(Math.max(lo, 0)), x1 = x(r.mean);
			const bar = svg('rect', { x: Math.min(x0, x1), y: cy - bh / 2, width: Math.max(1, Math.abs(x1 - x0)), height: bh,
				class: 'bar' + (r.is_baseline ? ' baseline' : ''), 'data-cell': r.cell, 'data-mean': r.mean });
			bar.append(svg('title', {}, `${r.cell}: mean ${fmtNum(r.mean)}` +
				(Number.isFinite(r.ci_lo) ? ` [${fmtNum(r.ci_lo)}, ${fmtNum(r.ci_hi)}]` : '') + ` n=${r.n}`));
			f.g.append(bar);
		}
		if (Number.isFinite(r.ci_lo) && Number.isFinite(r.ci_hi)) {
			const a = x(r.ci_lo), b = x(r.ci_hi), cw = 5;
			f.g.append(svg('path', { d: `M${a},${cy}H${b}M${a},${cy - cw}V${cy + cw}M${b},${cy - cw}V${cy + cw}`, class: 'err' }));
			if (r.ci_lo < 0 && r.mean > 0)
				f.g.append(svg('text', { x: f.x1, y: cy + 4, 'text-anchor': 'end', class: 'tick note below0', 'data-cell': r.cell },
					'CI below 0: too few or too noisy samples', svg('title', {}, `${r.cell}: the 95% CI of the mean reaches ${fmtNum(r.ci_lo)}, below 0, with n=${r.n}: the mean is not pinned down`)));
		}
	});
	f.g.append(svg('line', { x1: x(Math.max(lo, 0)), x2: x(Math.max(lo, 0)), y1: PAD_T, y2: f.bottom, class: 'axis' }));
	return f.root;
}

const pct = (v) => (v > 0 ? '+' : '') + fmtTick(v) + '%';

// The % change of each cell against its baseline with the CI of the change;
// ▲/▼ by sign, coloured by the report's better/worse mark; a CI that
// includes 0 is said to be no clear change. Null without comparisons.
export function changeChart(metric) {
	const rows = metric.rows.filter((r) => r.compare && Number.isFinite(r.compare.pct_change));
	if (!rows.length) return null;
	const bounded = (c) => !c.pct_ci_unbounded && Number.isFinite(c.pct_ci_lo) && Number.isFinite(c.pct_ci_hi);
	const vals = rows.flatMap((r) => [r.compare.pct_change, ...(bounded(r.compare) ? [r.compare.pct_ci_lo, r.compare.pct_ci_hi] : [])]);
	const [lo, hi] = niceRange(Math.min(0, ...vals), Math.max(0, ...vals));
	const f = rowsFrame(rows.map((r) => `${r.cell} vs ${r.baseline_cell || 'baseline'}`), 'change',
		`${metric.name}: % change against the baseline with 95% CI`, metric.name, 96);
	const x = (v) => f.x0 + ((v - lo) / (hi - lo)) * (f.x1 - f.x0);
	axisX(f.g, x, lo, hi, PAD_T, f.bottom, '% change', pct);
	rows.forEach((r, i) => {
		const c = r.compare, cy = f.ys[i];
		const kind = !c.significant ? 'ns' : c.mark === '* better' ? 'better' : c.mark === '* worse' ? 'worse' : 'neutral';
		const x0 = x(0), x1 = x(c.pct_change);
		const bar = svg('rect', { x: Math.min(x0, x1), y: cy - 6, width: Math.max(1, Math.abs(x1 - x0)), height: 12,
			class: 'chg ' + kind, 'data-cell': r.cell, 'data-pct': c.pct_change });
		bar.append(svg('title', {}, `${r.cell}: ${pct(c.pct_change)}` + (bounded(c) ? ` [${pct(c.pct_ci_lo)}, ${pct(c.pct_ci_hi)}]` : ' (CI unbounded)') +
			` p=${fmtNum(c.welch_p)}`));
		f.g.append(bar);
		if (bounded(c)) {
			const a = x(c.pct_ci_lo), b = x(c.pct_ci_hi);
			f.g.append(svg('path', { d: `M${a},${cy}H${b}M${a},${cy - 5}V${cy + 5}M${b},${cy - 5}V${cy + 5}`, class: 'err' }));
		}
		const arrow = c.pct_change > 0 ? '▲' : c.pct_change < 0 ? '▼' : '';
		const crosses = bounded(c) && c.pct_ci_lo < 0 && c.pct_ci_hi > 0;
		const word = kind === 'better' || kind === 'worse' ? `${arrow} ${kind}` : kind === 'neutral' ? arrow
			: !bounded(c) ? 'CI unbounded' : crosses ? 'CI includes 0' : 'not significant';
		f.g.append(svg('text', { x: W - PAD_R, y: cy + 4, 'text-anchor': 'end', class: 'tick mark ' + kind, 'data-cell': r.cell }, word));
	});
	f.g.append(svg('line', { x1: x(0), x2: x(0), y1: PAD_T, y2: f.bottom, class: 'axis' }));
	return f.root;
}

// cells: [{label, samples:[{boot, iteration, value}]}] of one metric
export function scatter(metricName, unit, cells) {
	const H = 220, bottom = H - 28;
	const vals = cells.flatMap((c) => c.samples.map((s) => s.value)).filter(Number.isFinite);
	const [lo, hi] = niceRange(Math.min(...vals), Math.max(...vals));
	const y = (v) => bottom - ((v - lo) / (hi - lo)) * (bottom - PAD_T);
	const band = (W - PAD_L - PAD_R) / Math.max(1, cells.length);
	const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart scatter', role: 'img',
		'aria-label': `${metricName}: every sample, coloured by boot`, 'data-metric': metricName });
	const g = svg('g', {});
	root.append(g);
	axisY(g, y, lo, hi, PAD_T, bottom, unit);
	const boots = [...new Set(cells.flatMap((c) => c.samples.map((s) => s.boot)))].sort((a, b) => a - b);
	cells.forEach((c, i) => {
		const x0 = PAD_L + band * i;
		const nb = Math.max(1, boots.length);
		c.samples.forEach((s, k) => {
			if (!Number.isFinite(s.value)) return;
			const bi = boots.indexOf(s.boot);
			// Boots side by side within the cell's band, a little jitter by iteration.
			const x = x0 + band * (0.2 + 0.6 * ((bi + 0.5) / nb)) + ((k % 5) - 2) * 1.5;
			const dot = svg('circle', { cx: x, cy: y(s.value), r: 3, class: 'dot',
				fill: BOOT_COLOURS[bi % BOOT_COLOURS.length], 'data-boot': s.boot });
			dot.append(svg('title', {}, `${c.label} boot ${s.boot} iteration ${s.iteration}: ${fmtNum(s.value)}`));
			g.append(dot);
		});
		labelX(g, x0 + band / 2, bottom, c.label, band * 0.9);
	});
	if (boots.length > 1) {
		boots.forEach((b, i) => {
			g.append(svg('circle', { cx: W - PAD_R - 70, cy: PAD_T + 6 + i * 12, r: 3, fill: BOOT_COLOURS[i % BOOT_COLOURS.length] }),
				svg('text', { x: W - PAD_R - 62, y: PAD_T + 10 + i * 12, class: 'tick' }, 'boot ' + b));
		});
	}
	return root;
}
