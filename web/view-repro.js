// view-repro.js: one reproduction (GET /reproductions/{id}): whose bundle
// it is and whether its signature is trusted, the verdict grid (a row per
// cell, a column per metric, coloured reproduced / differs /
// inconclusive; metrics down, cells across), each verdict's original and reproduced means with their
// 95% CIs and the difference's CI, and the stored environment diff
// (bundle's lab vs here). Every value is the API's, shown as text.
import { api } from './api.js';
import { h, clear, fmtNum } from './dom.js';
import { subscribe } from './state.js';

const side = (s) => (s && s.mean != null ? `${fmtNum(s.mean)} [${fmtNum(s.ci_lo)}, ${fmtNum(s.ci_hi)}] n=${s.n}` : '—');
const pctCI = (m) => (m.delta_pct == null ? '—'
	: `${m.delta_pct > 0 ? '+' : ''}${fmtNum(m.delta_pct)}% [${fmtNum(m.delta_lo)}, ${fmtNum(m.delta_hi)}]`);
const str = (v) => (v == null ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function trustView(rep) {
	const t = rep.trust || {};
	const state = t.state || (rep.signature === 'unsigned' ? 'unsigned' : 'unknown');
	return h('div', { class: 'row', id: 'repro-trust' },
		h('span', { class: 'badge', 'data-state': state === 'signed' ? 'done' : 'failed', 'data-trust': state }, state),
		h('span', {}, t.text || rep.signature || ''),
		rep.override ? h('span', { class: 'err' }, ` rerun without a trusted signature by ${rep.override_by || 'an admin'}`) : null);
}

// Metrics down, cells across: a job has few cells and, with its counters,
// many metrics.
function grid(rep) {
	const cells = rep.cells || [];
	const metrics = [...new Set(cells.flatMap((c) => (c.metrics || []).map((m) => m.metric)))];
	return h('div', { class: 'scroll' }, h('table', { id: 'verdicts', class: 'verdicts' },
		h('thead', {}, h('tr', {}, h('th', {}, 'metric'), cells.map((c) => h('th', {}, c.label)))),
		h('tbody', {}, metrics.map((name) => h('tr', { 'data-metric': name },
			h('td', { class: 'name' }, name),
			cells.map((c) => {
				const m = (c.metrics || []).find((x) => x.metric === name);
				if (!m) return h('td', { class: 'empty' }, '—');
				return h('td', { class: 'verdict', 'data-verdict': m.verdict, 'data-metric': name, 'data-cell': c.cell_index,
					title: `${c.label} ${m.metric}: original ${side(m.original)}; reproduced ${side(m.reproduced)}; ${m.detail || ''}` }, m.verdict);
			}))))));
}

function detail(rep) {
	const rows = (rep.cells || []).flatMap((c) => (c.metrics || []).map((m) => ({ c, m })));
	return h('div', { class: 'scroll' }, h('table', { id: 'repro-detail' },
		h('thead', {}, h('tr', {}, ['cell', 'metric', 'original (95% CI)', 'reproduced (95% CI)', 'Δ % (95% CI)', 'verdict', 'why'].map((t) => h('th', {}, t)))),
		h('tbody', {}, rows.map(({ c, m }) => h('tr', { 'data-cell': c.cell_index, 'data-metric': m.metric },
			h('td', { class: 'name' }, c.label), h('td', {}, m.metric + (m.unit ? ` (${m.unit})` : '')),
			h('td', { class: 'num', 'data-mean': str(m.original && m.original.mean) }, side(m.original)),
			h('td', { class: 'num', 'data-mean': str(m.reproduced && m.reproduced.mean) }, side(m.reproduced)),
			h('td', { class: 'num' }, pctCI(m)),
			h('td', { class: 'verdict', 'data-verdict': m.verdict }, m.verdict),
			h('td', { class: 'small' }, m.detail || ''))))));
}

function envDiff(rep) {
	const d = rep.environment_diff || [];
	if (!d.length) return h('p', { id: 'repro-env', class: 'small', 'data-n': 0 }, 'No difference between the bundle\'s environment and this lab\'s.');
	return h('div', { class: 'scroll' }, h('table', { id: 'repro-env', 'data-n': d.length },
		h('thead', {}, h('tr', {}, ['field', 'bundle\'s lab', 'here'].map((t) => h('th', {}, t)))),
		h('tbody', {}, d.map((x) => h('tr', {}, h('td', { class: 'mono' }, x.field), h('td', { class: 'mono' }, str(x.bundle)),
			h('td', { class: 'mono' }, str(x.here)))))));
}

export function reproView(root, [idText]) {
	const id = Number(idText);
	const title = h('h2', {}, `reproduction ${id}`);
	const err = h('p', { class: 'err', id: 'repro-error' });
	const body = h('div', { id: 'repro' }, h('p', {}, 'Loading…'));
	root.append(h('section', {}, h('div', { class: 'titlebar' }, title), err, body));

	async function load() {
		err.textContent = '';
		try {
			const rep = await api(`/reproductions/${id}`);
			title.textContent = `reproduction ${id}` + (rep.mode ? ` (${rep.mode})` : '');
			const s = rep.summary || {};
			clear(body,
				h('p', {}, h('span', { class: 'badge', 'data-state': rep.state === 'done' ? 'done' : 'running' }, rep.state || '?'), ' ',
					rep.job_id ? h('a', { href: `#/job/${rep.job_id}` }, `job ${rep.job_id}`) : null,
					rep.state !== 'done' ? ` · ${rep.runs_done ?? 0}/${rep.runs_total ?? '?'} runs` : null),
				h('h3', {}, 'Signature'), trustView(rep),
				rep.state === 'done' ? [
					h('h3', {}, 'Verdicts'),
					h('p', { id: 'repro-summary', class: 'small' }, `${s.reproduced ?? 0} reproduced · ${s.differs ?? 0} differ · ${s.inconclusive ?? 0} inconclusive`),
					grid(rep),
					h('h3', {}, 'Original vs reproduced'), detail(rep),
					h('h3', {}, 'Environment: bundle\'s lab vs here'), envDiff(rep),
					rep.notes && rep.notes.length ? h('ul', { class: 'small' }, [].concat(rep.notes).map((n) => h('li', {}, str(n)))) : null,
				] : h('p', { class: 'hint' }, 'The verdicts come when the rerun has ended.'));
		} catch (e) {
			err.textContent = e.status === 404 ? `There is no reproduction ${id}.` : e.message;
			clear(body);
		}
	}
	load();
	// a rerun's page follows its job to the end
	const off = subscribe((kind, d) => { if (kind === 'job' && d && !(d.state === 'queued' || d.state === 'running')) load(); });
	return { unmount: off };
}
