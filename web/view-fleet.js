// view-fleet.js: the fleet summary (a count per machine state), every
// machine on one line (class, state, what it runs, kernel, cmdline cut with
// an expander, last seen, Clear and Probe; a card per machine on a phone)
// and the jobs, newest first, with their progress.
import { h, clear, fmtAgo, fmtTime, fmtDur } from './dom.js';
import { state, subscribe, loadJob } from './state.js';
import { api } from './api.js';
import { segBar, jobCounts, estimate } from './progress.js';

// The job list's bar, from the job's counts (boot-failed is within failed).
export function progressBar(job) {
	return segBar(jobCounts(job));
}

// "k/N done · f failed · r running · ETA": the ETA from the job's runs when
// the page has them (a load gives them for running jobs), else the event's.
export function progressText(job, now = Date.now() / 1000) {
	const parts = [`${job.runs_done || 0}/${job.runs_total || 0} done`];
	if (job.runs_failed) parts.push(`${job.runs_failed} failed`);
	if (job.runs_running) parts.push(`${job.runs_running} running`);
	if (job.state === 'queued' || job.state === 'running') {
		const runs = state.runs.get(job.id);
		const eta = runs ? estimate([...runs.values()], now).eta : job.eta_s;
		parts.push('ETA ' + (eta == null ? '—' : fmtDur(eta)));
	}
	return parts.join(' · ');
}

function cmdlineOf(m) {
	return m.cmdline || (m.fingerprint && m.fingerprint.cmdline) || '';
}

// The summary line: how many machines are in each state, each its colour.
export const FLEET_STATES = ['running', 'idle', 'booting', 'offline', 'quarantined'];

function summary() {
	const n = Object.fromEntries(FLEET_STATES.map((s) => [s, 0]));
	for (const m of state.machines.values()) if (m.state in n) n[m.state]++;
	return FLEET_STATES.map((s) => h('span', { class: 'count badge', 'data-state': s, 'data-count': n[s] },
		`${n[s]} ${s}`));
}

// A long kernel command line is one line, cut, with an expander.
const expanded = new Set();	// machines whose command line is shown whole
function cmdlineCell(m) {
	const c = cmdlineOf(m);
	if (!c) return '—';
	if (c.length <= 48) return h('span', { class: 'cmdline' }, c);
	// Kept open across re-renders (an event or the 5 s tick).
	return h('details', { class: 'cmdline', open: expanded.has(m.name),
		on: { toggle: (ev) => { if (ev.target.open) expanded.add(m.name); else expanded.delete(m.name); } } },
		h('summary', { title: 'show the whole command line' }, c.slice(0, 44) + '…'),
		h('span', {}, c));
}

// What a machine runs: the cell, boot k/N (the cell's runs are its boots),
// the iterations of a boot from the job's spec, and the time it has run.
function runCell(run) {
	if (!run) return '—';
	const runs = state.runs.get(run.job_id);
	const cell = runs ? [...runs.values()].filter((r) => r.cell_index === run.cell_index)
		.sort((a, b) => a.boot - b.boot) : [];
	const k = cell.findIndex((r) => r.id === run.id);
	const job = state.jobs.get(run.job_id);
	const reps = job && job.spec && job.spec.job && job.spec.job.repetitions;
	const iters = reps && reps.iterations;
	const done = new Set((run.samples || []).map((x) => x.iteration)).size;
	const parts = [];
	if (k >= 0) parts.push(`boot ${k + 1}/${cell.length}`);
	if (iters) parts.push(`iteration ${Math.min(done + 1, iters)}/${iters}`);
	if (run.started_at) parts.push(fmtDur(Date.now() / 1000 - run.started_at));
	return [h('a', { href: '#/job/' + run.job_id }, `job ${run.job_id} · run ${run.id}`),
		h('div', { class: 'small', 'data-cell': run.cell_index }, run.label || `cell ${run.cell_index}`),
		parts.length ? h('div', { class: 'small run-progress' }, parts.join(' · ')) : null];
}

// Clear (a quarantined machine) and Probe: admin routes; another role
// gets the token prompt from api.js, and the error goes on the row.
function actions(m, say) {
	const post = (what) => async (ev) => {
		ev.target.disabled = true;
		try {
			await api(`/machines/${encodeURIComponent(m.name)}/${what}`, { method: 'POST' });
			say(m.name, what === 'clear' ? 'cleared' : 'probe asked for');
		} catch (e) {
			say(m.name, `${what}: ${e.message}`, true);
		} finally {
			ev.target.disabled = false;
		}
	};
	return [m.state === 'quarantined'
		? h('button', { class: 'clear', title: 'let this machine take runs again', on: { click: post('clear') } }, 'Clear') : null,
	h('button', { class: 'probe', title: 'fingerprint it again at its next idle moment', on: { click: post('probe') } }, 'Probe')];
}

const COLS = ['machine', 'class', 'state', 'current run', 'kernel', 'cmdline', 'last seen', ''];

function machineRows(notes, say) {
	const rows = [...state.machines.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
	if (!rows.length) return [h('tr', {}, h('td', { colspan: COLS.length, class: 'empty' }, 'No machines registered.'))];
	return rows.map((m) => {
		const run = state.current.get(m.name);
		const note = notes.get(m.name);
		const td = (i, p, ...kids) => h('td', { 'data-label': COLS[i], ...p }, ...kids);
		return h('tr', { 'data-machine': m.name, 'data-state': m.state || '' },
			td(0, { class: 'name' }, m.name),
			td(1, {}, m.class || '—'),
			td(2, {}, h('span', { class: 'badge', 'data-state': m.state || '' }, m.state || '?'),
				m.last_error ? h('div', { class: 'err small' }, m.last_error) : null),
			td(3, { class: 'current' }, runCell(run)),
			td(4, { class: 'mono' }, m.kernel || '—'),
			td(5, { class: 'mono' }, cmdlineCell(m)),
			td(6, { title: fmtTime(m.last_seen), 'data-last-seen': m.last_seen || '' }, fmtAgo(m.last_seen)),
			td(7, { class: 'actions' }, actions(m, say),
				note ? h('div', { class: 'small note' + (note.err ? ' err' : '') }, note.text) : null));
	});
}

function jobRows() {
	const rows = [...state.jobs.values()].sort((a, b) => b.id - a.id);
	if (!rows.length) return [h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No jobs yet.'))];
	return rows.map((j) => h('tr', { 'data-job': j.id },
		h('td', {}, h('a', { href: '#/job/' + j.id }, String(j.id))),
		h('td', {}, j.recipe || ''),
		h('td', { class: 'name' }, j.name || '—'),
		h('td', {}, h('span', { class: 'badge', 'data-state': j.state || '' }, j.state || '?')),
		h('td', { class: 'prog' }, progressBar(j), h('span', { class: 'small' }, progressText(j)))));
}

export function fleetView(root) {
	const mbody = h('tbody', {});
	const jbody = h('tbody', {});
	const sum = h('div', { id: 'fleet-summary', class: 'row' });
	const notes = new Map();	// machine -> {text, err}: the last Clear/Probe
	root.append(
		h('section', {},
			h('h2', {}, 'Fleet'),
			sum,
			h('div', { class: 'scroll' }, h('table', { id: 'machines', class: 'cards' },
				h('thead', {}, h('tr', {}, COLS.map((t) => h('th', {}, t)))),
				mbody))),
		h('section', {},
			h('div', { class: 'titlebar' }, h('h2', {}, 'Jobs'), h('a', { href: '#/jobs', class: 'button', id: 'to-history' }, 'History and filters')),
			h('div', { class: 'scroll' }, h('table', { id: 'jobs' },
				h('thead', {}, h('tr', {}, ['id', 'recipe', 'name', 'state', 'progress'].map((t) => h('th', {}, t)))),
				jbody))));
	let queued = false;
	const asked = new Set();	// jobs whose spec was fetched, for iterations
	const render = () => {
		queued = false;
		for (const run of state.current.values()) {
			const j = state.jobs.get(run.job_id);
			if (j && !j.spec && !asked.has(run.job_id)) {
				asked.add(run.job_id);
				loadJob(run.job_id).catch(() => {});
			}
		}
		clear(sum, summary());
		clear(mbody, machineRows(notes, say));
		clear(jbody, jobRows());
	};
	const later = () => { if (!queued) { queued = true; requestAnimationFrame(render); } };
	const say = (name, text, err) => { notes.set(name, { text, err }); later(); };
	render();
	const off = subscribe(later);
	const tick = setInterval(later, 5000);	// "last seen" ages, elapsed times
	return { unmount() { off(); clearInterval(tick); } };
}
