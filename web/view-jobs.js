// view-jobs.js: the job history: every job, a page at a time (GET /jobs
// keyset paging, so jobs older than the newest 100 are reachable), filtered
// by state, recipe, machine and text, with created time and duration. The
// filters and the page live in the URL (#/jobs?state=failed&recipe=redis),
// so a view can be linked and survives a reload.
import { api } from './api.js';
import { h, clear, fmtTime, fmtDur } from './dom.js';
import { subscribe } from './state.js';
import { progressBar, progressText } from './view-fleet.js';

const PAGE = 100;
const STATES = ['queued', 'running', 'done', 'failed', 'cancelled'];
const KEYS = ['state', 'recipe', 'machine', 'q', 'before', 'limit'];

function parse(query) {
	const p = new URLSearchParams(query || '');
	return Object.fromEntries(KEYS.map((k) => [k, p.get(k) || '']));
}

function hashOf(f) {
	const p = new URLSearchParams();
	for (const k of KEYS) if (f[k]) p.set(k, f[k]);
	const s = p.toString().replace(/%2C/g, ',');
	return '#/jobs' + (s ? '?' + s : '');
}

function duration(j) {
	const t0 = j.started_at;
	if (!t0) return null;
	return (j.finished_at || Date.now() / 1000) - t0;
}

export function jobsView(root) {
	// read from the hash itself: the router's decoding would turn a q
	// holding "%26" into a "&" that splits the query
	const f = parse(location.hash.split('?').slice(1).join('?'));
	const states = STATES.map((s) => h('label', { class: 'chip' },
		h('input', { type: 'checkbox', value: s, checked: f.state.split(',').includes(s), 'data-state': s }), ' ', s));
	const recipe = h('input', { type: 'text', id: 'h-recipe', value: f.recipe, placeholder: 'recipe', 'aria-label': 'recipe' });
	const machine = h('input', { type: 'text', id: 'h-machine', value: f.machine, placeholder: 'machine', 'aria-label': 'machine' });
	const q = h('input', { type: 'text', id: 'h-q', value: f.q, placeholder: 'id, name or recipe contains', 'aria-label': 'text' });
	const form = h('form', { id: 'history-filters', class: 'row' }, h('span', { class: 'row', id: 'h-states' }, states),
		recipe, machine, q, h('button', { type: 'submit' }, 'Filter'), h('a', { href: '#/jobs', class: 'button' }, 'Clear'));
	const err = h('p', { class: 'err', id: 'history-error' });
	const body = h('tbody', {});
	const more = h('div', { class: 'row', id: 'history-paging' });
	root.append(h('section', {}, h('h2', {}, 'Job history'), form, err,
		h('div', { class: 'scroll' }, h('table', { id: 'history' },
			h('thead', {}, h('tr', {}, ['id', 'recipe', 'name', 'state', 'progress', 'created', 'duration'].map((t) => h('th', {}, t)))),
			body)), more));

	form.addEventListener('submit', (ev) => {
		ev.preventDefault();
		location.hash = hashOf({ state: states.map((l) => l.firstChild).filter((c) => c.checked).map((c) => c.value).join(','),
			recipe: recipe.value.trim(), machine: machine.value.trim(), q: q.value.trim(), before: '', limit: f.limit });
	});

	let jobs = [];
	async function load() {
		err.textContent = '';
		const p = new URLSearchParams({ limit: String(PAGE) });
		for (const k of KEYS) if (f[k]) p.set(k, f[k]);	// a limit in the URL wins
		try {
			const r = await api('/jobs?' + p.toString());
			jobs = r.jobs;
			render(r.next_before);
		} catch (e) {
			// the API names the refused filter: show it at that field
			err.textContent = (e.field ? e.field + ': ' : '') + e.message;
			for (const [k, el] of [['recipe', recipe], ['machine', machine], ['q', q]]) el.setAttribute('aria-invalid', e.field === k ? 'true' : 'false');
			clear(body);
			clear(more);
		}
	}

	function render(next) {
		clear(body, jobs.length ? jobs.map((j) => {
			const d = duration(j);
			return h('tr', { 'data-job': j.id, 'data-state': j.state },
				h('td', {}, h('a', { href: '#/job/' + j.id }, String(j.id))),
				h('td', {}, j.recipe || ''), h('td', { class: 'name' }, j.name || '—'),
				h('td', {}, h('span', { class: 'badge', 'data-state': j.state || '' }, j.state || '?')),
				h('td', { class: 'prog' }, progressBar(j), h('span', { class: 'small' }, progressText(j))),
				h('td', { class: 'time', 'data-t': j.created_at || '' }, fmtTime(j.created_at)),
				h('td', { class: 'num', 'data-s': d == null ? '' : d.toFixed(1) }, d == null ? '—' : fmtDur(d)));
		}) : h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No job matches.')));
		clear(more,
			f.before ? h('a', { class: 'button', id: 'history-newest', href: hashOf({ ...f, before: '' }) }, 'Newest') : null,
			next != null ? h('a', { class: 'button', id: 'history-older', href: hashOf({ ...f, before: String(next) }) }, 'Older') : null,
			h('span', { class: 'small' }, jobs.length ? `jobs ${jobs[0].id}…${jobs[jobs.length - 1].id}` : ''));
	}

	// The first page follows new and changing jobs; older pages stay put.
	let timer = null;
	const off = subscribe((kind) => {
		if (f.before || (kind !== 'job' && kind !== 'all')) return;
		clearTimeout(timer);
		timer = setTimeout(load, 500);
	});
	load();
	return { unmount() { off(); clearTimeout(timer); } };
}
