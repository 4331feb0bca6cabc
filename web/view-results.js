// view-results.js: a job's results. Per metric: the bar chart of cell
// means with 95% CI error bars, the per-sample scatter by boot, and the
// comparison table against the chosen baseline — every number as
// GET /jobs/{id}/report?format=json&baseline=AXIS:VALUE gives it, never
// recomputed here. Then each run's environment: kernel, boot id, and the
// knob read-backs and fingerprints where the store has them.
import { api } from './api.js';
import { h, clear, fmtNum } from './dom.js';
import { barChart, scatter, setWidth } from './charts.js';
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

function table(metric) {
	const head = ['cell', 'n', 'mean', 'CoV %', '95% CI', 'baseline', '% change', '95% CI of change', 'p', ''];
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
				h('td', { class: 'sig' }, c && c.significant ? '*' : ''));
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

export function resultsView(root, [idText, baselineParam]) {
	const id = Number(idText);
	const baseline = baselineParam || '';
	const title = h('h2', {}, `job ${id}: results`);
	const pick = h('select', { id: 'baseline', 'aria-label': 'baseline' });
	const body = h('div', { id: 'results' }, h('p', {}, 'Loading…'));
	const err = h('p', { class: 'err', id: 'results-error' });
	root.append(h('section', {},
		h('div', { class: 'titlebar' }, title, h('span', { class: 'spacer' }),
			h('label', {}, 'Baseline ', pick), h('a', { href: '#/job/' + id, class: 'button' }, 'Job')),
		err, body));
	pick.addEventListener('change', () => {
		location.hash = `#/job/${id}/results` + (pick.value ? '?baseline=' + encodeURIComponent(pick.value) : '');
	});

	async function load() {
		err.textContent = '';
		try {
			const q = '?format=json' + (baseline ? '&baseline=' + encodeURIComponent(baseline) : '');
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
						h('figure', {}, barChart(m), h('figcaption', {}, 'mean per cell, 95% CI')),
						h('figure', {}, scatter(m.name, m.unit, cells), h('figcaption', {}, 'every sample, by boot'))),
					table(m));
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
