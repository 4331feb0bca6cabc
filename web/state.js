// state.js: what the page knows, kept current by the event stream. Views
// subscribe to it and re-render on change; nothing here touches the DOM.
import { api } from './api.js';

export const state = {
	machines: new Map(),	// name -> machine
	jobs: new Map(),	// id -> job (from GET /jobs, then job events)
	runs: new Map(),	// job id -> Map(run id -> run), for jobs a view loaded
	logs: new Map(),	// run id -> [{stream, line, at, dropped}]
	current: new Map(),	// machine name -> running run
};

const LOG_KEEP = 500;
const listeners = new Set();

export function subscribe(fn) {
	listeners.add(fn);
	return () => listeners.delete(fn);
}

function emit(kind, obj) {
	for (const fn of [...listeners]) {
		try { fn(kind, obj); } catch (e) { console.error(e); }
	}
}

function trackCurrent(run) {
	if (run.state === 'running' && run.machine) {
		state.current.set(run.machine, run);
	} else {
		for (const [m, r] of state.current) if (r.id === run.id) state.current.delete(m);
	}
}

export async function loadAll() {
	const [m, j] = await Promise.all([api('/machines'), api('/jobs')]);
	state.machines = new Map(m.machines.map((x) => [x.name, x]));
	state.jobs = new Map(j.jobs.map((x) => [x.id, x]));
	state.current.clear();
	const active = j.jobs.filter((x) => x.state === 'running');
	await Promise.all(active.map((x) => loadRuns(x.id, true)));
	for (const id of state.runs.keys()) if (!active.some((x) => x.id === id)) await loadRuns(id, true);
	emit('all');
}

export async function loadRuns(jobId, quiet) {
	const r = await api('/jobs/' + jobId + '/runs');
	const m = new Map();
	for (const run of r.runs) {
		m.set(run.id, run);
		trackCurrent(run);
	}
	state.runs.set(jobId, m);
	if (!quiet) emit('runs', { job_id: jobId });
	return m;
}

export async function loadJob(jobId) {
	const j = await api('/jobs/' + jobId);
	state.jobs.set(j.id, { ...state.jobs.get(j.id), ...j });
	emit('job', j);
	return j;
}

// One event from the stream.
export function apply(type, d) {
	switch (type) {
	case 'machine':
		if (d.deleted) state.machines.delete(d.name);
		else state.machines.set(d.name, { ...state.machines.get(d.name), ...d });
		break;
	case 'job':
		state.jobs.set(d.id, { ...state.jobs.get(d.id), ...d });
		break;
	case 'run': {
		const m = state.runs.get(d.job_id);
		if (m) m.set(d.id, { ...m.get(d.id), ...d });
		trackCurrent(d);
		break;
	}
	case 'log': {
		let l = state.logs.get(d.run);
		if (!l) { l = []; state.logs.set(d.run, l); }
		l.push({ stream: d.stream, line: d.line, at: d.at, dropped: d.dropped || 0 });
		if (l.length > LOG_KEEP) l.splice(0, l.length - LOG_KEEP);
		break;
	}
	case 'bisection':
		break;	// the Bisections views read the store again (view-bisect.js)
	default:
		return;
	}
	emit(type, d);
}
