// view-repros.js: every reproduction (GET /reproductions), newest first, a
// page at a time (keyset paging: ?before= in the URL, as the job history
// has): whose bundle (origin lab, signature), rerun or compare, its job's
// state and progress, and a link to its page (view-repro.js) with the
// verdicts. The first page follows job changes; older pages stay put.
import { api } from './api.js';
import { h, clear, fmtTime } from './dom.js';
import { subscribe } from './state.js';

const PAGE = 100;

function parse(query) {
	const p = new URLSearchParams(query || '');
	return { before: /^\d+$/.test(p.get('before') || '') ? p.get('before') : '' };
}
const hashOf = (before) => '#/reproductions' + (before ? '?before=' + before : '');
const origin = (o) => (o && typeof o === 'object' ? String(o.lab || o.name || o.host || JSON.stringify(o)) : '—');

export function reprosView(root) {
	const f = parse(location.hash.split('?').slice(1).join('?'));
	const err = h('p', { class: 'err', id: 'repros-error' });
	const body = h('tbody', {});
	const more = h('div', { class: 'row', id: 'repros-paging' });
	root.append(h('section', {}, h('h2', {}, 'Reproductions'),
		h('p', { class: 'hint' }, 'Bundles from other labs rerun (or compared) here; the verdicts are on each reproduction\'s page. ',
			'Post one with ', h('code', {}, 'benchfleet reproduce BUNDLE'), '.'),
		err,
		h('div', { class: 'scroll' }, h('table', { id: 'repros' },
			h('thead', {}, h('tr', {}, ['id', 'recipe', 'from', 'signature', 'mode', 'job', 'state', 'runs', 'created'].map((t) => h('th', {}, t)))),
			body)), more));

	async function load() {
		err.textContent = '';
		const p = new URLSearchParams({ limit: String(PAGE) });
		if (f.before) p.set('before', f.before);
		try {
			const r = await api('/reproductions?' + p.toString());
			render(r.reproductions || [], r.next_before);
		} catch (e) {
			err.textContent = e.message;
			clear(body);
			clear(more);
		}
	}

	function render(rows, next) {
		clear(body, rows.length ? rows.map((x) => {
			const trust = x.trust && typeof x.trust === 'object' ? x.trust : {};
			return h('tr', { 'data-repro': x.id, 'data-state': x.job_state || '' },
				h('td', {}, h('a', { href: '#/reproductions/' + x.id }, String(x.id))),
				h('td', {}, x.recipe || ''),
				h('td', { class: 'name' }, origin(x.origin)),
				h('td', {}, h('span', { class: 'badge', 'data-state': trust.state === 'signed' ? 'done' : 'failed', 'data-trust': trust.state || '' },
					trust.state || 'unknown'), x.override ? h('span', { class: 'small err' }, ' override') : null),
				h('td', {}, x.mode || '—'),
				h('td', {}, h('a', { href: '#/job/' + x.job_id }, String(x.job_id))),
				h('td', {}, h('span', { class: 'badge', 'data-state': x.job_state || '' }, x.job_state || '?')),
				h('td', { class: 'num' }, `${x.runs_done}/${x.runs_total}` + (x.runs_failed ? ` (${x.runs_failed} failed)` : '')),
				h('td', { class: 'time', 'data-t': x.created_at || '' }, fmtTime(x.created_at)));
		}) : h('tr', {}, h('td', { colspan: 9, class: 'empty' }, f.before ? 'No older reproduction.' : 'No reproduction yet.')));
		clear(more,
			f.before ? h('a', { class: 'button', id: 'repros-newest', href: hashOf('') }, 'Newest') : null,
			next != null ? h('a', { class: 'button', id: 'repros-older', href: hashOf(String(next)) }, 'Older') : null,
			h('span', { class: 'small' }, rows.length ? `reproductions ${rows[0].id}…${rows[rows.length - 1].id}` : ''));
	}

	let timer = null;
	const off = subscribe((kind) => {
		if (f.before || (kind !== 'job' && kind !== 'all')) return;
		clearTimeout(timer);
		timer = setTimeout(load, 500);
	});
	load();
	return { unmount() { off(); clearTimeout(timer); } };
}
