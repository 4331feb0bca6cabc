// charts.js: hand-written SVG charts of a report. Bars are the cell means
// with their 95% CI as error bars (numbers from the report JSON, not
// recomputed); the scatter is every sample of every cell, coloured by boot,
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
	// Long labels are cut; the full text stays in the tooltip.
	const max = Math.max(3, Math.floor(bw / 6));
	const shown = label.length > max ? label.slice(0, max - 1) + '…' : label;
	g.append(svg('text', { x, y: yb + 14, 'text-anchor': 'middle', class: 'tick' }, shown,
		svg('title', {}, label)));
}

// metric: one entry of report.metrics ({name, unit, rows:[{cell, mean, ci_lo, ci_hi, ...}]})
export function barChart(metric) {
	const rows = metric.rows;
	const H = 240, bottom = H - 28;
	const vals = rows.flatMap((r) => [r.mean, r.ci_lo, r.ci_hi]).filter(Number.isFinite);
	let [lo, hi] = niceRange(Math.min(0, ...vals), Math.max(0, ...vals));
	if (!vals.length) [lo, hi] = [0, 1];
	const y = (v) => bottom - ((v - lo) / (hi - lo)) * (bottom - PAD_T);
	const band = (W - PAD_L - PAD_R) / Math.max(1, rows.length);
	const bw = Math.max(4, band * 0.6);
	const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart bars', role: 'img',
		'aria-label': `${metric.name}: mean per cell with 95% CI`, 'data-metric': metric.name });
	const g = svg('g', {});
	root.append(g);
	axisY(g, y, lo, hi, PAD_T, bottom, metric.unit);
	rows.forEach((r, i) => {
		const cx = PAD_L + band * i + band / 2;
		if (Number.isFinite(r.mean)) {
			const y0 = y(Math.max(lo, 0)), y1 = y(r.mean);
			const bar = svg('rect', { x: cx - bw / 2, y: Math.min(y0, y1), width: bw, height: Math.max(1, Math.abs(y0 - y1)),
				class: 'bar' + (r.is_baseline ? ' baseline' : ''), 'data-cell': r.cell, 'data-mean': r.mean });
			bar.append(svg('title', {}, `${r.cell}: mean ${fmtNum(r.mean)}` +
				(Number.isFinite(r.ci_lo) ? ` [${fmtNum(r.ci_lo)}, ${fmtNum(r.ci_hi)}]` : '') + ` n=${r.n}`));
			g.append(bar);
		}
		if (Number.isFinite(r.ci_lo) && Number.isFinite(r.ci_hi)) {
			const a = y(r.ci_lo), b = y(r.ci_hi), cw = Math.min(10, bw / 3);
			g.append(svg('path', { d: `M${cx},${a}V${b}M${cx - cw},${a}H${cx + cw}M${cx - cw},${b}H${cx + cw}`, class: 'err' }));
		}
		labelX(g, cx, bottom, r.cell, band * 0.9);
	});
	g.append(svg('line', { x1: PAD_L, x2: W - PAD_R, y1: y(Math.max(lo, 0)), y2: y(Math.max(lo, 0)), class: 'axis' }));
	return root;
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
