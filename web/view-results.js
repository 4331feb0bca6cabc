// view-results.js: a job's results. Per metric: the bar chart of cell
// means with 95% CI error bars, the per-sample scatter by boot, and the
// comparison table against the chosen baseline — every number as
// GET /jobs/{id}/report?format=json&baseline=AXIS:VALUE gives it, never
// recomputed here. Then each run's environment: kernel, boot id, and the
// knob read-backs and fingerprints where the store has them. The report
// exports as the coordinator renders it (copy as text or markdown,
// download CSV), each chart as an SVG file.
import { api } from './api.js';
import { copyText, download, svgText, fileSafe } from './export.js';
import { h, clear, fmtNum } from './dom.js';
import { barChart, changeChart, scatter, setWidth } from './charts.js';
import { state, subscribe } from './state.js';

// Axis value as written after "AXIS:" in ?baseline= (as the API does).
const axisStr = (v) => (typeof v === 'string' ? v : typeof v === 'boolean' ? String(v) : JSON.stringify(v));

function num(x, cls) {
	return h('td', { class: 'num' + (cls ? ' ' + cls : ''), 'data-raw': x == null ? '' : String(x) }, fmtNum(x));
}

function ci(lo, hi, unbounded) {
	if (unbounded) return h('td', { class: 'num' }, 'unbounded');
	if (lo == null || hi == null) return h('td', { class: 'num' }, 'n/a');
	return h('td', { class: 'num', 'data-lo': String(lo), 'data-hi': String(hi) }, `[${fmtNum(lo)}, ${fmtNum(hi)}]`);
}

// A significant change: ▲ up or ▼ down, coloured by the report's mark
// (better, worse, or neither for a counter), never by significance alone.
function mark(c) {
	if (!c || !c.significant) return h('td', { class: 'sig' }, '');
	const kind = c.mark === '* better' ? 'better' : c.mark === '* worse' ? 'worse' : 'neutral';
	const arrow = c.pct_change > 0 ? '▲' : c.pct_change < 0 ? '▼' : '';
	return h('td', { class: 'sig ' + kind, 'data-mark': c.mark, title: `significant: ${kind === 'neutral' ? 'a counter, no better or worse' : kind}` },
		arrow + (kind === 'neutral' ? '' : ' ' + kind));
}

// The report's warnings that name a cell ("cell LABEL: ..." or "cell LABEL
// run N: ..."), so each shows beside that cell's numbers.
export function cellWarnings(warnings, label) {
	return (warnings || []).filter((w) => w.startsWith(`cell ${label}: `) || w.startsWith(`cell ${label} run `));
}

function table(metric, warnings) {
	const head = ['cell', 'n', 'mean', 'CoV %', '95% CI', 'baseline', '% change', '95% CI of change', 'p', '', 'evidence'];
	return h('div', { class: 'scroll' }, h('table', { class: 'report', 'data-metric': metric.name },
		h('thead', {}, h('tr', {}, head.map((t) => h('th', {}, t)))),
		h('tbody', {}, metric.rows.map((r) => {
			const c = r.compare;
			return h('tr', { 'data-cell': r.cell, class: r.is_baseline ? 'is-baseline' : '' },
				h('td', { class: 'name' }, r.cell),
				num(r.n), num(r.mean), num(r.cov_pct), ci(r.ci_lo, r.ci_hi),
				h('td', {}, r.is_baseline ? '(baseline)' : r.baseline_cell || '—'),
				c ? num(c.pct_change) : h('td', {}, '—'),
				c ? ci(c.pct_ci_lo, c.pct_ci_hi, c.pct_ci_unbounded) : h('td', {}, '—'),
				c ? num(c.welch_p) : h('td', {}, '—'),
				mark(c),
				h('td', { class: 'cell-evidence' }, cellWarnings(warnings, r.cell).map((w) => h('div', { class: 'warn' }, '⚠ ' + w))));
		}))));
}

function kv(obj) {
	if (obj == null || typeof obj !== 'object') return null;
	return h('dl', { class: 'kv' }, Object.entries(obj).map(([k, v]) =>
		[h('dt', {}, k), h('dd', {}, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))]));
}

// The agent's knob report {"before","requested","after"} (agent/knobset.h):
// what was asked, what was read back, and what it was before; a read-back
// that differs from the request is marked.
function knobs(k) {
	if (k == null || typeof k !== 'object') return null;
	if (!k.requested && !k.after) return kv(k);
	const req = k.requested || {}, after = k.after || {}, before = k.before || {};
	const str = (v) => (v === undefined ? '—' : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
	const names = [...new Set([...Object.keys(req), ...Object.keys(after)])].sort();
	return h('table', { class: 'knobs' },
		h('thead', {}, h('tr', {}, ['knob', 'requested', 'read back', 'before'].map((t) => h('th', {}, t)))),
		h('tbody', {}, names.map((n) => h('tr', { class: n in req && str(req[n]) !== str(after[n]) ? 'mismatch' : '' },
			h('td', {}, n), h('td', { class: 'mono' }, str(req[n])), h('td', { class: 'mono' }, str(after[n])),
			h('td', { class: 'mono' }, str(before[n]))))));
}

function environment(runs) {
	const extra = (r) => r.knobs || r.readback || r.knob_readback || r.fingerprint || null;
	const machines = [...new Set(runs.map((r) => r.machine).filter(Boolean))];
	return h('section', { id: 'environment' },
		h('h3', {}, 'Environment of each run'),
		h('div', { class: 'scroll' }, h('table', {},
			h('thead', {}, h('tr', {}, ['run', 'cell', 'boot', 'machine', 'hostname', 'kernel', 'boot id', 'knob read-backs / fingerprint'].map((t) => h('th', {}, t)))),
			h('tbody', {}, runs.map((r) => h('tr', {},
				h('td', {}, String(r.id)), h('td', {}, r.label || ''), h('td', {}, String(r.boot)),
				h('td', {}, r.machine || '—'), h('td', {}, r.hostname || '—'), h('td', { class: 'mono' }, r.kernel || '—'),
				h('td', { class: 'mono' }, r.boot_id || '—'),
				h('td', {}, knobs(r.knobs), kv(r.readback || r.knob_readback), kv(r.fingerprint),
					extra(r) ? null : '—')))))),
		machines.some((m) => state.machines.get(m) && state.machines.get(m).fingerprint)
			? h('div', {}, h('h3', {}, 'Machine fingerprints'), machines.map((m) => {
				const fp = state.machines.get(m) && state.machines.get(m).fingerprint;
				return fp ? h('div', {}, h('h4', {}, m), kv(fp)) : null;
			}))
			: null);
}

// A chart with its caption and a button that downloads it as SVG.
function figure(chart, caption, file) {
	return h('figure', {}, chart, h('figcaption', {}, caption, ' ',
		h('button', { type: 'button', class: 'svg-download', 'data-file': file,
			on: { click: () => download(file, 'image/svg+xml', svgText(chart)) } }, 'SVG')));
}

export function resultsView(root, [idText, baselineParam]) {
	const id = Number(idText);
	const baseline = baselineParam || '';
	const title = h('h2', {}, `job ${id}: results`);
	const pick = h('select', { id: 'baseline', 'aria-label': 'baseline' });
	const body = h('div', { id: 'results' }, h('p', {}, 'Loading…'));
	const err = h('p', { class: 'err', id: 'results-error' });
	const status = h('span', { id: 'export-status', class: 'small', role: 'status' });
	// The report as the coordinator renders it, in its default layout.
	const rendered = (fmt) => api(`/jobs/${id}/report?format=${fmt}` + (baseline ? '&baseline=' + encodeURIComponent(baseline) : ''));
	const exportAs = (fmt, what) => async () => {
		status.textContent = '';
		try {
			const text = await rendered(fmt);
			if (fmt === 'csv') {
				download(`job-${id}-report.csv`, 'text/csv', text);
				status.textContent = 'CSV downloaded';
			} else if (await copyText(text)) {
				status.textContent = `${what} copied (${text.length} characters)`;
			} else {
				status.textContent = `the browser refused the clipboard: ${what} below`;
				body.prepend(h('textarea', { class: 'export-text', readonly: true, rows: 10, 'aria-label': what }, text));
			}
		} catch (e) {
			status.textContent = e.field ? `${e.field}: ${e.message}` : e.message;
		}
	};
	const exports = h('div', { class: 'exports' },
		h('button', { id: 'copy-text', type: 'button', on: { click: exportAs('text', 'text') } }, 'Copy as text'),
		h('button', { id: 'copy-markdown', type: 'button', on: { click: exportAs('markdown', 'markdown') } }, 'Copy as markdown'),
		h('button', { id: 'download-csv', type: 'button', on: { click: exportAs('csv', 'CSV') } }, 'Download CSV'),
		status);
	root.append(h('section', {},
		h('div', { class: 'titlebar' }, title, h('span', { class: 'spacer' }),
			h('label', {}, 'Baseline ', pick), h('a', { href: '#/job/' + id, class: 'button' }, 'Job')),
		exports, err, body));
	pick.addEventListener('change', () => {
		// the baseline stays readable in the URL: ?baseline=thp_enabled:never
		location.hash = `#/job/${id}/results` + (pick.value ? '?baseline=' + encodeURIComponent(pick.value).replace(/%3A/g, ':') : '');
	});

	async function load() {
		err.textContent = '';
		try {
			// the charts and table read the row layout's JSON
			const q = '?format=json&columns=none' + (baseline ? '&baseline=' + encodeURIComponent(baseline) : '');
			const [job, report, runs] = await Promise.all([api('/jobs/' + id), api(`/jobs/${id}/report${q}`), api(`/jobs/${id}/runs`)]);
			title.textContent = `job ${id}: ${job.recipe}${job.name ? ' — ' + job.name : ''}: results`;
			const matrix = (job.spec && job.spec.job && job.spec.job.matrix) || {};
			clear(pick, h('option', { value: '' }, 'none'), Object.entries(matrix).flatMap(([axis, vals]) =>
				(Array.isArray(vals) ? vals : []).map((v) => {
					const o = h('option', { value: axis + ':' + axisStr(v) }, axis + ' = ' + axisStr(v));
					if (o.value === baseline) o.selected = true;
					return o;
				})));
			last = [job, report, runs.runs];
			render(...last);
		} catch (e) {
			err.textContent = e.field ? `${e.field}: ${e.message}` : e.message;
			clear(body);
		}
	}

	function render(job, report, runs) {
		const byCell = new Map();
		for (const r of runs) {
			if (!byCell.has(r.cell_index)) byCell.set(r.cell_index, { label: r.label, runs: [] });
			byCell.get(r.cell_index).runs.push(r);
		}
		const wide = body.clientWidth > 800;
		setWidth(wide ? (body.clientWidth - 8) / 2 : body.clientWidth);
		const cellList = [...byCell.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
		clear(body,
			job.state !== 'done' ? h('p', { class: 'hint' }, `The job is ${job.state}; numbers cover the runs done so far.`) : null,
			// the report's evidence checks (THP that did not happen, a
			// setting that drifted, a failed expectation), before any number
			report.warnings && report.warnings.length ? h('div', { id: 'evidence', class: 'evidence', role: 'alert' },
				h('h3', {}, 'Evidence warnings'),
				h('ul', {}, report.warnings.map((w) => h('li', {}, w)))) : null,
			report.metrics.map((m) => {
				const cells = cellList.map((c) => ({ label: c.label, samples: c.runs.filter((r) => r.state === 'done')
					.flatMap((r) => (r.samples || []).filter((s) => s.metric === m.name)) }));
				return h('section', { class: 'metric', 'data-metric': m.name },
					h('h3', {}, m.name, m.unit ? ` (${m.unit})` : '', h('span', { class: 'small' }, m.direction === 'none' ? ' counter: no better or worse' : m.higher_better ? ' higher is better' : ' lower is better')),
					h('div', { class: 'charts' },
						figure(barChart(m), 'mean per cell, 95% CI', `job-${id}-${fileSafe(m.name)}-means.svg`),
						changeChart(m) ? figure(changeChart(m), `% change vs ${baseline || 'the baseline'}, 95% CI`, `job-${id}-${fileSafe(m.name)}-change.svg`) : null,
						figure(scatter(m.name, m.unit, cells), 'every sample, by boot', `job-${id}-${fileSafe(m.name)}-samples.svg`)),
					table(m, report.warnings));
			}),
			report.legend && report.legend.length ? h('ul', { class: 'legend small' }, report.legend.map((l) => h('li', {}, l))) : null,
			environment(runs));
	}

	let last = null, timer = null;
	const onResize = () => {
		clearTimeout(timer);
		timer = setTimeout(() => { if (last) render(...last); }, 100);
	};
	window.addEventListener('resize', onResize);
	load();
	const off = subscribe((kind, d) => {
		if (kind === 'job' && d.id === id && !(d.state === 'queued' || d.state === 'running')) load();
	});
	return { unmount() { off(); window.removeEventListener('resize', onResize); clearTimeout(timer); } };
}
