// view-job.js: one job live: why it failed (on top), the segmented
// progress bar with elapsed time and ETA, the job's spec, the matrix as a
// grid of cells coloured by state (a square per boot, each cell's observed
// run duration and ETA), the runs with their durations, the log of one run
// (job-log.js), and cancel.
import { api } from './api.js';
import { h, clear, fmtTime, fmtDur } from './dom.js';
import { state, subscribe, loadRuns, loadJob } from './state.js';
import { segBar, runCounts, estimate, elapsed } from './progress.js';
import { specView, failureView } from './job-spec.js';
import { logPanel } from './job-log.js';

const now = () => Date.now() / 1000;

function runDur(r) {
	if (r.started_at && r.finished_at) return fmtDur(r.finished_at - r.started_at);
	if (r.started_at && r.state === 'running') return fmtDur(now() - r.started_at) + ' so far';
	return '—';
}

// A cell's state from its runs (one per boot).
function cellState(runs) {
	const s = new Set(runs.map((r) => r.state));
	if (s.has('running')) return 'running';
	if (s.has('boot-failed')) return 'boot-failed';	// red, never "queued"
	if (s.has('failed') || s.has('lost')) return 'failed';
	if (runs.length && runs.every((r) => r.state === 'done')) return 'done';
	if (runs.length && runs.every((r) => r.state === 'cancelled' || r.state === 'done')) return 'cancelled';
	return 'queued';
}

function cells(runs) {
	const by = new Map();
	for (const r of runs) {
		if (!by.has(r.cell_index)) by.set(r.cell_index, { index: r.cell_index, label: r.label, runs: [] });
		by.get(r.cell_index).runs.push(r);
	}
	return [...by.values()].sort((a, b) => a.index - b.index);
}

export function jobView(root, [idText]) {
	const id = Number(idText);
	const title = h('h2', {}, 'job ' + id);
	const badge = h('span', { class: 'badge' });
	const cancel = h('button', { type: 'button', class: 'danger', id: 'cancel' }, 'Cancel job');
	// One press never cancels: the button asks first, inline.
	const sure = h('span', { class: 'confirm', id: 'cancel-confirm', hidden: true },
		`Cancel job ${id}? Queued runs will not run. `,
		h('button', { type: 'button', class: 'danger', id: 'cancel-yes' }, 'Yes, cancel'), ' ',
		h('button', { type: 'button', id: 'cancel-no' }, 'No'));
	const results = h('a', { href: `#/job/${id}/results`, class: 'button' }, 'Results');
	const err = h('span', { class: 'err', id: 'job-error' });
	const reason = h('div', {});
	const prog = h('div', { class: 'progwrap' });
	const spec = h('details', { class: 'specbox', open: true }, h('summary', {}, 'Spec'), h('p', { class: 'small' }, 'loading'));
	const grid = h('div', { class: 'grid', id: 'grid' });
	const rbody = h('tbody', {});
	const logp = logPanel();
	let specShown = false;

	root.append(h('section', {},
		h('div', { class: 'titlebar' }, title, badge, h('span', { class: 'spacer' }), results, cancel, sure),
		err, reason, prog, spec,
		h('h3', {}, 'Matrix'), grid,
		h('div', { class: 'cols' },
			h('div', { class: 'col' }, h('h3', {}, 'Runs'), h('div', { class: 'scroll' }, h('table', { id: 'runs' },
				h('thead', {}, h('tr', {}, ['run', 'cell', 'boot', 'state', 'machine', 'started', 'duration', 'error'].map((t) => h('th', {}, t)))),
				rbody))),
			logp.el)));

	cancel.addEventListener('click', () => { sure.hidden = false; cancel.hidden = true; sure.querySelector('#cancel-no').focus(); });
	sure.querySelector('#cancel-no').addEventListener('click', () => { sure.hidden = true; renderTop(); });
	sure.querySelector('#cancel-yes').addEventListener('click', async () => {
		sure.hidden = true;
		cancel.disabled = true;
		err.textContent = '';
		try {
			await api(`/jobs/${id}/cancel`, { method: 'POST' });
			await loadJob(id);
			await loadRuns(id);	// every queued run is cancelled now
		} catch (e) {
			err.textContent = e.status === 403 ? 'Your token may not cancel this job.' : e.message;
			cancel.disabled = false;
			renderTop();
		}
	});

	const jobRuns = () => { const m = state.runs.get(id); return m ? [...m.values()] : []; };

	function renderTop() {
		const j = state.jobs.get(id);
		if (!j) return;
		title.textContent = `job ${id}: ${j.recipe || ''}${j.name ? ' — ' + j.name : ''}`;
		badge.textContent = j.state || '?';
		badge.dataset.state = j.state || '';
		cancel.hidden = !sure.hidden || !(j.state === 'queued' || j.state === 'running');
		// before the runs are read, nothing is estimated or explained
		const known = state.runs.has(id), runs = jobRuns(), t = now();
		const n = known && runs.length ? runCounts(runs) : null;
		const est = known ? estimate(runs, t) : { eta: null, cells: new Map() };
		const open = j.state === 'queued' || j.state === 'running';
		const parts = n ? [`${n.done}/${runs.length} done`] : [`${j.runs_done || 0}/${j.runs_total || 0} done`];
		if (n) for (const s of ['failed', 'boot-failed', 'cancelled', 'running']) if (n[s]) parts.push(`${n[s]} ${s}`);
		const el = elapsed(j, runs, t);
		if (el != null) parts.push('elapsed ' + fmtDur(el));
		if (open) parts.push('ETA ' + (est.eta == null ? '— (after the first run ends)' : fmtDur(est.eta)));
		clear(prog, n ? segBar(n) : h('div', { class: 'progress' }), h('span', { class: 'small', id: 'progress-text',
			'data-eta': open && est.eta != null ? est.eta.toFixed(1) : '', 'data-elapsed': el == null ? '' : el.toFixed(1) }, parts.join(' · ')));
		if (known) clear(reason, failureView(j, runs));
		if (j.spec && !specShown) { specShown = true; clear(spec, h('summary', {}, 'Spec'), specView(j)); }
		for (const c of grid.querySelectorAll('.cell')) {
			const e = est.cells.get(Number(c.dataset.cell));
			const s = c.querySelector('.est');
			const txt = !e ? '' : [e.duration != null ? 'run ' + fmtDur(e.duration) : null,
				c.dataset.state === 'running' || c.dataset.state === 'queued' ? 'ETA ' + (e.eta == null ? '—' : fmtDur(e.eta)) : null]
				.filter(Boolean).join(' · ');
			c.dataset.eta = e && e.eta != null && (c.dataset.state === 'running' || c.dataset.state === 'queued') ? e.eta.toFixed(1) : '';
			if (s && s.textContent !== txt) s.textContent = txt;
		}
		for (const tr of rbody.querySelectorAll('tr[data-state="running"]')) {
			const r = runs.find((x) => x.id === Number(tr.dataset.run));
			if (r) tr.querySelector('td.dur').textContent = runDur(r);
		}
	}

	// A cell or run square, by click or Enter/Space: the log shows that run
	// (a cell: its newest started run).
	const activate = (ev) => {
		if (ev.type === 'keydown' && ev.key !== 'Enter' && ev.key !== ' ') return;
		const t = ev.target.closest('[data-run], .cell');
		if (!t) return;
		ev.preventDefault();
		ev.stopPropagation();
		const runs = jobRuns();
		const r = t.dataset.run ? runs.find((x) => x.id === Number(t.dataset.run))
			: runs.filter((x) => x.cell_index === Number(t.dataset.cell) && x.started_at).sort((a, b) => b.id - a.id)[0];
		if (r) logp.pin(r.id);
	};

	function renderRuns() {
		const runs = jobRuns();
		// the grid is drawn again on every change: keep the keyboard focus
		const f = document.activeElement && grid.contains(document.activeElement) ? document.activeElement : null;
		const key = f && (f.dataset.run ? `.run[data-run="${f.dataset.run}"]` : `.cell[data-cell="${f.dataset.cell}"]`);
		clear(grid, cells(runs).map((c) => {
			const st = cellState(c.runs);
			return h('div', { class: 'cell', 'data-state': st, 'data-cell': c.index, title: c.label, tabindex: 0, role: 'button',
				'aria-label': `cell ${c.label}: ${st}`, on: { click: activate, keydown: activate } },
				h('div', { class: 'label' }, c.label),
				h('div', { class: 'boots' }, c.runs.sort((a, b) => a.boot - b.boot).map((r) =>
					h('span', { class: 'run', 'data-run': r.id, 'data-state': r.state, title: `run ${r.id} boot ${r.boot}: ${r.state}`,
						tabindex: 0, role: 'button', 'aria-label': `run ${r.id} boot ${r.boot}: ${r.state}; Enter shows its log`,
						on: { click: activate, keydown: activate } }))),
				h('div', { class: 'small' }, st), h('div', { class: 'small est' }));
		}));
		if (key) { const again = grid.querySelector(key); if (again) again.focus(); }
		clear(rbody, runs.sort((a, b) => a.id - b.id).map((r) => h('tr', { 'data-run': r.id, 'data-state': r.state },
			h('td', {}, String(r.id)), h('td', {}, r.label || ''), h('td', {}, String(r.boot)),
			h('td', {}, h('span', { class: 'badge', 'data-state': r.state }, r.state)),
			h('td', {}, r.machine || '—'), h('td', { class: 'time' }, fmtTime(r.started_at)),
			h('td', { class: 'num dur' }, runDur(r)),
			h('td', { class: 'err' }, r.error || ''))));
		logp.runs(runs);
		renderTop();
	}

	let seenCancelled = null;
	let dirty = new Set();
	const flush = () => {
		if (dirty.has('runs')) renderRuns();
		else if (dirty.has('top')) renderTop();
		dirty = new Set();
	};
	const mark = (what) => { if (!dirty.size) requestAnimationFrame(flush); dirty.add(what); };
	// elapsed, ETA and running durations move with the clock
	const tick = setInterval(() => renderTop(), 1000);
	const off = subscribe((kind, d) => {
		if (kind === 'all') { loadRuns(id).catch(() => {}); mark('top'); }
		else if (kind === 'job' && d.id === id) {
			mark('top');
			// A cancel (or the job's end) changes runs no run event names:
			// read them again, so that none stays "queued" until a reload.
			// Only then: a snapshot read while runs end could be older than
			// the run events that follow it.
			const prev = seenCancelled;
			seenCancelled = d.runs_cancelled ?? seenCancelled;
			if (d.state === 'cancelled' || (prev !== null && seenCancelled > prev))
				loadRuns(id).catch(() => {});
		}
		else if ((kind === 'run' && d.job_id === id) || (kind === 'runs' && d.job_id === id)) mark('runs');
		else if (kind === 'log') logp.line(d);
	});
	loadJob(id).then(() => loadRuns(id)).catch((e) => { err.textContent = e.message; });
	renderRuns();
	return { unmount: () => { off(); clearInterval(tick); } };
}
