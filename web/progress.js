// progress.js: how far a job is, from its runs: a segmented bar (one
// segment per run state, so a failed job at 0/2 shows red, never a full
// bar), per-cell and whole-job estimates from the durations observed so far,
// and the job's elapsed time. Nothing here fetches; views pass what they have.
import { h } from './dom.js';

// Segments in the order they fill the bar; lost runs count as failed.
export const SEGMENTS = ['done', 'running', 'failed', 'boot-failed', 'cancelled', 'queued'];

export function runCounts(runs) {
	const n = Object.fromEntries(SEGMENTS.map((s) => [s, 0]));
	for (const r of runs) n[r.state === 'lost' ? 'failed' : r.state in n ? r.state : 'queued']++;
	return n;
}

// From a GET /jobs row or a job event: runs_failed counts boot-failed too.
export function jobCounts(job) {
	const n = Object.fromEntries(SEGMENTS.map((s) => [s, 0]));
	n.done = job.runs_done || 0;
	n.running = job.runs_running || 0;
	n['boot-failed'] = job.runs_boot_failed || 0;
	n.failed = Math.max(0, (job.runs_failed || 0) - n['boot-failed']);
	n.cancelled = job.runs_cancelled || 0;
	n.queued = Math.max(0, (job.runs_total || 0) - n.done - n.running - n.failed - n['boot-failed'] - n.cancelled);
	return n;
}

export function segBar(n) {
	const total = SEGMENTS.reduce((a, s) => a + n[s], 0);
	const ended = n.done + n.failed + n['boot-failed'] + n.cancelled;
	return h('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': total,
		'aria-valuenow': ended, 'aria-valuetext': SEGMENTS.filter((s) => n[s]).map((s) => `${n[s]} ${s}`).join(', '),
		'data-done': n.done, 'data-total': total },
	SEGMENTS.filter((s) => s !== 'queued' && n[s]).map((s) => h('div', {
		class: 'seg', 'data-seg': s, 'data-n': n[s], title: `${n[s]} ${s}`,
		style: { width: (total ? (100 * n[s]) / total : 0).toFixed(3) + '%' } })));
}

const dur = (r) => r.finished_at - r.started_at;

// Estimates from observed durations. A cell's run takes what its own done
// runs took (else the job's mean). The job's rate is its effective
// concurrency: run time delivered so far (ended runs plus the running ones'
// elapsed) over the wall time since its first run began, so that
// dispatch, boots and idle machines count; remaining run time over that
// rate is the ETA. Null while no run has ended done.
export function estimate(runs, now) {
	const byCell = new Map();
	let sum = 0, n = 0, delivered = 0, first = Infinity;
	for (const r of runs) {
		if (!byCell.has(r.cell_index)) byCell.set(r.cell_index, { sum: 0, n: 0, runs: [] });
		const c = byCell.get(r.cell_index);
		c.runs.push(r);
		if (r.started_at) first = Math.min(first, r.started_at);
		if (r.started_at && r.finished_at && r.finished_at >= r.started_at) delivered += dur(r);
		else if (r.state === 'running' && r.started_at) delivered += Math.max(0, now - r.started_at);
		if (r.state === 'done' && r.started_at && r.finished_at >= r.started_at) {
			c.sum += dur(r); c.n++; sum += dur(r); n++;
		}
	}
	const mean = n ? sum / n : null;
	const wall = first < Infinity ? now - first : 0;
	const rate = wall > 0 && delivered > 0 ? delivered / wall : 1;
	const cells = new Map();
	let left = 0;
	for (const [i, c] of byCell) {
		const d = c.n ? c.sum / c.n : mean;
		const open = c.runs.filter((r) => r.state === 'queued' || r.state === 'running');
		let w = null;
		if (d != null) {
			w = 0;
			for (const r of open) w += r.state === 'queued' ? d : Math.max(0, d - (now - r.started_at));
			left += w;
		}
		cells.set(i, { duration: d, eta: w == null ? null : open.length ? w / Math.max(1, Math.min(rate, open.length)) : 0 });
	}
	const anyOpen = !runs.length || runs.some((r) => r.state === 'queued' || r.state === 'running');
	return { mean, rate, cells, eta: !anyOpen ? 0 : mean == null ? null : left / Math.max(rate, 1e-3) };
}

// The job's elapsed time: from its first run's start to its end (or now).
export function elapsed(job, runs, now) {
	const starts = runs.map((r) => r.started_at).filter(Boolean);
	if (!starts.length) return null;
	const ends = runs.map((r) => r.finished_at).filter(Boolean);
	const open = runs.some((r) => r.state === 'queued' || r.state === 'running');
	const end = open ? now : job.finished_at || (ends.length ? Math.max(...ends) : now);
	return Math.max(0, end - Math.min(...starts));
}
