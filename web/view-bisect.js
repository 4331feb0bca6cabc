// view-bisect.js: bisections (GET /bisections, docs/api.md "Bisections").
// The list, and one bisection's log: its interval, each step's commit,
// verdict and numbers (means, % change vs good and vs bad with the 95% CI,
// n), the first bad commit, the machine time. Both read the store again on
// every `bisection` event (and on job events, for a step's progress), so
// the log is live. Every value goes in as text (dom.js).
import { api } from './api.js';
import { h, clear, fmtTime, fmtDur, fmtNum } from './dom.js';
import { subscribe } from './state.js';

const short = (s) => (typeof s === 'string' ? s.slice(0, 12) : '—');
const badge = (st) => h('span', { class: 'badge', 'data-state': st === 'cancelled' ? 'cancelled' : st || '' }, st || '?');

function pct(c) {
	if (!c || c.pct == null) return 'n/a';
	const s = (c.pct >= 0 ? '+' : '') + fmtNum(c.pct) + '%';
	if (c.lo95 == null || c.hi95 == null) return s + ' [no CI]';
	return s + ' [' + fmtNum(c.lo95) + ', ' + fmtNum(c.hi95) + ']' + (c.significant ? ' *' : '');
}

// Re-read on bisection (and job) events, at most every 500 ms.
function live(load, kinds) {
	let timer = null;
	const off = subscribe((kind) => {
		if (!kinds.includes(kind) && kind !== 'all') return;
		clearTimeout(timer);
		timer = setTimeout(load, 500);
	});
	return { unmount() { off(); clearTimeout(timer); } };
}

export function bisectsView(root) {
	const err = h('p', { class: 'err', id: 'bisects-error' });
	const body = h('tbody', {});
	root.append(h('section', {}, h('h2', {}, 'Bisections'),
		h('p', { class: 'hint' }, 'A regression bisected between two kernel commits, each step judged with statistics. ',
			'Start one with ', h('code', {}, 'POST /api/v1/bisections'), ' (docs/api.md).'),
		err,
		h('div', { class: 'scroll' }, h('table', { id: 'bisects' },
			h('thead', {}, h('tr', {}, ['id', 'state', 'good', 'bad', 'recipe', 'metric', 'commits', 'first bad', 'machine time', 'created'].map((t) => h('th', {}, t)))),
			body))));

	async function load() {
		err.textContent = '';
		try {
			const r = await api('/bisections');
			const rows = r.bisections || [];
			clear(body, rows.length ? rows.map((b) => h('tr', { 'data-bisection': b.id, 'data-state': b.state || '' },
				h('td', {}, h('a', { href: '#/bisections/' + b.id }, String(b.id))),
				h('td', {}, badge(b.state)),
				h('td', { class: 'name' }, String(b.good || '')),
				h('td', { class: 'name' }, String(b.bad || '')),
				h('td', {}, String(b.recipe || '')),
				h('td', {}, String(b.metric || '')),
				h('td', { class: 'num' }, b.commits == null ? '—' : String(b.commits)),
				h('td', { class: 'name' }, b.first_bad ? short(b.first_bad.commit) + ' ' + (b.first_bad.subject || '') : '—'),
				h('td', { class: 'num' }, fmtDur(b.machine_s)),
				h('td', { class: 'time' }, fmtTime(b.created_at))))
				: h('tr', {}, h('td', { colspan: 10, class: 'empty' }, 'No bisection yet.')));
		} catch (e) {
			err.textContent = e.message;
		}
	}
	load();
	return live(load, ['bisection']);
}

export function bisectView(root, [id]) {
	const err = h('p', { class: 'err', id: 'bisect-error' });
	const head = h('div', { id: 'bisect-head' });
	const body = h('tbody', {});
	const cancel = h('button', { type: 'button', id: 'bisect-cancel', hidden: true }, 'Cancel');
	root.append(h('section', {}, h('h2', {}, 'Bisection ' + id), err, head,
		h('div', { class: 'row' }, cancel),
		h('div', { class: 'scroll' }, h('table', { id: 'bisect-steps' },
			h('thead', {}, h('tr', {}, ['step', 'round', 'commit', 'subject', 'job', 'verdict', 'good', 'bad', 'mid', 'n',
				'bad vs good', 'mid vs good', 'mid vs bad', 'why'].map((t) => h('th', {}, t)))),
			body))));
	cancel.addEventListener('click', async () => {
		try {
			await api('/bisections/' + id + '/cancel', { method: 'POST', body: '{}' });
			load();
		} catch (e) {
			err.textContent = e.message;
		}
	});

	async function load() {
		let b;
		try {
			b = await api('/bisections/' + id);
		} catch (e) {
			err.textContent = e.message;
			return;
		}
		err.textContent = '';
		cancel.hidden = b.state !== 'running';
		const iv = b.interval;
		clear(head,
			h('p', {}, badge(b.state), ' ', String(b.good || ''), ' (good) .. ', String(b.bad || ''), ' (bad): ',
				b.commits == null ? 'commits not listed yet' : b.commits + ' commits',
				iv ? ', first bad in (' + iv.lo + ', ' + iv.hi + ']' : ''),
			h('p', {}, String(b.recipe || ''), ' / ', String(b.metric || ''), ', ', String(b.direction || ''),
				', threshold ', String(b.threshold_pct), '%; machine time ', fmtDur(b.machine_s)),
			b.first_bad ? h('p', { id: 'bisect-first-bad' }, 'First bad commit: ', h('code', {}, String(b.first_bad.commit)),
				' ', String(b.first_bad.subject || '')) : null,
			b.message ? h('p', { class: b.state === 'failed' ? 'err' : 'hint', id: 'bisect-message' }, String(b.message)) : null);
		const steps = b.steps || [];
		clear(body, steps.length ? steps.map((s) => {
			const st = s.stats || {};
			return h('tr', { 'data-step': s.step, 'data-verdict': s.verdict },
				h('td', { class: 'num' }, String(s.step)),
				h('td', { class: 'num' }, String(s.round)),
				h('td', { class: 'name' }, short(s.commit)),
				h('td', {}, String(s.subject || '')),
				h('td', {}, h('a', { href: '#/job/' + s.job }, String(s.job))),
				h('td', {}, badge(s.verdict === 'pending' ? 'running' : s.verdict === 'bad' ? 'failed' : s.verdict === 'good' ? 'done' : 'queued'), ' ', s.verdict),
				h('td', { class: 'num' }, st.good ? fmtNum(st.good.mean) : '—'),
				h('td', { class: 'num' }, st.bad ? fmtNum(st.bad.mean) : '—'),
				h('td', { class: 'num' }, st.mid ? fmtNum(st.mid.mean) : '—'),
				h('td', { class: 'num' }, st.mid ? String(st.mid.n) : '—'),
				h('td', { class: 'num' }, pct(st.bad_vs_good)),
				h('td', { class: 'num' }, pct(st.mid_vs_good)),
				h('td', { class: 'num' }, pct(st.mid_vs_bad)),
				h('td', { class: 'small' }, String(st.why || '')));
		}) : h('tr', {}, h('td', { colspan: 14, class: 'empty' }, 'No step yet.')));
	}
	load();
	return live(load, ['bisection', 'job']);
}
