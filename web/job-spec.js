// job-spec.js: what a job was asked to do, from GET /jobs/{id}'s spec (as
// run): recipe and preset, machines, matrix, knobs, repetitions, kernels,
// cmdline, params and a suite's entries, one labelled line each, and why it
// failed (the runs' errors, grouped), shown at the top of the job page.
import { h } from './dom.js';

const compact = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

function axes(m) {
	return Object.entries(m || {}).map(([k, vs]) => `${k}: ${Array.isArray(vs) ? vs.map(compact).join(', ') : compact(vs)}`).join(' · ');
}

function reps(r) {
	if (!r) return null;
	return Object.entries(r).map(([k, v]) => `${k} ${compact(v)}`).join(', ');
}

// [label, text] pairs of a job (or a suite entry) that are set.
function fields(j) {
	const out = [];
	const add = (k, v) => { if (v != null && v !== '' && !(typeof v === 'object' && !Object.keys(v).length)) out.push([k, v]); };
	add('recipe', j.recipe && (j.preset ? `${j.recipe} (preset ${j.preset})` : j.recipe));
	add('machines', j.machines && compact(j.machines));
	add('matrix', j.matrix && axes(j.matrix));
	add('knobs', j.knobs && Object.entries(j.knobs).map(([k, v]) => `${k}=${compact(v)}`).join(', '));
	add('repetitions', reps(j.repetitions));
	add('kernels', j.kernels && (Array.isArray(j.kernels) ? j.kernels.map(compact).join(', ') : compact(j.kernels)));
	add('cmdline', j.cmdline && compact(j.cmdline));
	add('params', j.params && Object.entries(j.params).map(([k, v]) => `${k}=${compact(v)}`).join(', '));
	for (const k of Object.keys(j))
		if (!['recipe', 'preset', 'name', 'machines', 'matrix', 'knobs', 'repetitions', 'kernels', 'cmdline', 'params', 'suite'].includes(k))
			add(k, compact(j[k]));
	return out;
}

export function specView(job) {
	const j = job && job.spec && job.spec.job;
	if (!j) return h('p', { class: 'small' }, 'spec not loaded');
	const rows = fields(j);
	const dl = h('dl', { class: 'kv spec', id: 'job-spec' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-key': k }, v)]));
	if (Array.isArray(j.suite)) {
		dl.append(h('dt', {}, 'suite'), h('dd', { 'data-key': 'suite' }, h('ol', { class: 'suite' },
			j.suite.map((e, i) => h('li', { 'data-entry': i }, fields(e).map(([k, v]) => `${k}: ${v}`).join(' — '))))));
	}
	return dl;
}

// Why runs failed, each distinct error once with its runs; null if none.
export function failureView(job, runs) {
	const bad = runs.filter((r) => r.state === 'failed' || r.state === 'lost' || r.state === 'boot-failed');
	if (!bad.length) return job && job.state === 'failed' ? h('div', { class: 'failure', id: 'job-reason' }, 'The job failed.') : null;
	const by = new Map();
	for (const r of bad.sort((a, b) => a.id - b.id)) {
		// the runner's boot errors already begin "boot-failed: "
		const e = r.error || 'no reason recorded';
		const k = e.startsWith(r.state + ': ') ? e : `${r.state}: ${e}`;
		if (!by.has(k)) by.set(k, []);
		by.get(k).push(r);
	}
	const list = [...by.entries()];
	return h('div', { class: 'failure', id: 'job-reason', role: 'alert' },
		h('strong', {}, `${bad.length} of ${runs.length} run${runs.length === 1 ? '' : 's'} did not succeed`),
		h('ul', {}, list.slice(0, 5).map(([k, rs]) => h('li', {}, k, h('span', { class: 'small' },
			` (run${rs.length > 1 ? 's' : ''} ${rs.slice(0, 6).map((r) => r.id).join(', ')}${rs.length > 6 ? ', …' : ''}; ${rs[0].label || 'cell ' + rs[0].cell_index})`)))),
		list.length > 5 ? h('div', { class: 'small' }, `and ${list.length - 5} other reasons in the runs table`) : null);
}
