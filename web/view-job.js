// view-job.js: one job live: the matrix as a grid of cells coloured by
// state (a square per boot), the progress bar with its ETA, the runs, a
// tail of the running step's log (log events), and cancel.
import { api } from './api.js';
import { h, clear, fmtTime } from './dom.js';
import { state, subscribe, loadRuns, loadJob } from './state.js';
import { progressBar, progressText } from './view-fleet.js';

const TAIL = 200;

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
	const prog = h('div', { class: 'progwrap' });
	const grid = h('div', { class: 'grid', id: 'grid' });
	const rbody = h('tbody', {});
	const logTitle = h('h3', {}, 'Log');
	const log = h('div', { class: 'log', id: 'log', 'aria-live': 'off' });
	let logRun = null, logShown = 0;

	root.append(h('section', {},
		h('div', { class: 'titlebar' }, title, badge, h('span', { class: 'spacer' }), results, cancel, sure),
		err, prog,
		h('h3', {}, 'Matrix'), grid,
		h('div', { class: 'cols' },
			h('div', { class: 'col' }, h('h3', {}, 'Runs'), h('div', { class: 'scroll' }, h('table', { id: 'runs' },
				h('thead', {}, h('tr', {}, ['run', 'cell', 'boot', 'state', 'machine', 'started', 'error'].map((t) => h('th', {}, t)))),
				rbody))),
			h('div', { class: 'col' }, logTitle, log))));

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

	function renderTop() {
		const j = state.jobs.get(id);
		if (!j) return;
		title.textContent = `job ${id}: ${j.recipe || ''}${j.name ? ' — ' + j.name : ''}`;
		badge.textContent = j.state || '?';
		badge.dataset.state = j.state || '';
		cancel.hidden = !sure.hidden || !(j.state === 'queued' || j.state === 'running');
		clear(prog, progressBar(j), h('span', { class: 'small', id: 'progress-text' }, progressText(j)));
	}

	function renderRuns() {
		const m = state.runs.get(id);
		const runs = m ? [...m.values()] : [];
		clear(grid, cells(runs).map((c) => {
			const st = cellState(c.runs);
			return h('div', { class: 'cell', 'data-state': st, 'data-cell': c.index, title: c.label },
				h('div', { class: 'label' }, c.label),
				h('div', { class: 'boots' }, c.runs.sort((a, b) => a.boot - b.boot).map((r) =>
					h('span', { class: 'run', 'data-run': r.id, 'data-state': r.state, title: `run ${r.id} boot ${r.boot}: ${r.state}` }))),
				h('div', { class: 'small' }, st));
		}));
		clear(rbody, runs.sort((a, b) => a.id - b.id).map((r) => h('tr', { 'data-run': r.id, 'data-state': r.state },
			h('td', {}, String(r.id)), h('td', {}, r.label || ''), h('td', {}, String(r.boot)),
			h('td', {}, h('span', { class: 'badge', 'data-state': r.state }, r.state)),
			h('td', {}, r.machine || '—'), h('td', { class: 'time' }, fmtTime(r.started_at)),
			h('td', { class: 'err' }, r.error || ''))));
		// The log follows the running run; after the job it keeps the last one.
		const running = runs.filter((r) => r.state === 'running').sort((a, b) => b.id - a.id)[0];
		if (running && running.id !== logRun) followLog(running.id);
		else if (!running && logRun == null && runs.length) {
			const last = runs.filter((r) => r.started_at).sort((a, b) => b.started_at - a.started_at)[0];
			if (last) followLog(last.id);
		}
	}

	async function followLog(runId) {
		logRun = runId;
		logTitle.textContent = `Log of run ${runId}`;
		// What the stream brought so far at once, then the store's copy
		// (events are rate-limited, the store has every line) if longer.
		clear(log);
		logShown = 0;
		renderLog();
		try {
			const r = await api(`/runs/${runId}/log?limit=1000`);
			const have = state.logs.get(runId) || [];
			if (logRun !== runId || r.lines.length <= have.length) return;
			state.logs.set(runId, r.lines.slice(-TAIL).map((l) => ({ stream: l.stream, line: l.line })));
			clear(log);
			logShown = 0;
			renderLog();
		} catch (e) { /* the stream's lines stay */ }
	}

	function renderLog() {
		const lines = state.logs.get(logRun) || [];
		if (logShown > lines.length) { clear(log); logShown = 0; }
		const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
		for (const l of lines.slice(logShown)) {
			if (l.dropped) log.append(h('div', { class: 'line dropped' }, `… ${l.dropped} lines not shown (rate limit)`));
			log.append(h('div', { class: 'line', 'data-stream': l.stream }, l.line));
		}
		logShown = lines.length;
		while (log.childElementCount > TAIL) log.firstElementChild.remove();
		if (stick) log.scrollTop = log.scrollHeight;
	}

	let seenCancelled = null;
	let dirty = new Set();
	const flush = () => {
		if (dirty.has('top')) renderTop();
		if (dirty.has('runs')) renderRuns();
		if (dirty.has('log')) renderLog();
		dirty = new Set();
	};
	const mark = (what) => { if (!dirty.size) requestAnimationFrame(flush); dirty.add(what); };
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
		else if (kind === 'log' && d.run === logRun) mark('log');
		else if (kind === 'log' && state.runs.get(id) && state.runs.get(id).has(d.run)) {
			if (d.run !== logRun) followLog(d.run);
		}
	});
	loadJob(id).then(() => loadRuns(id)).catch((e) => { err.textContent = e.message; });
	renderTop();
	renderRuns();
	return { unmount: off };
}
