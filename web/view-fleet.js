// view-fleet.js: every machine (class, state, current run, kernel,
// cmdline, last seen) and the jobs, newest first, with their progress.
import { h, clear, fmtAgo, fmtTime, fmtDur } from './dom.js';
import { state, subscribe } from './state.js';

export function progressBar(job) {
	const total = job.runs_total || 0;
	const ended = (job.runs_done || 0) + (job.runs_failed || 0) + (job.runs_cancelled || 0);
	const pct = total ? Math.round((100 * ended) / total) : 0;
	const fill = h('div', { class: 'fill' + (job.runs_failed ? ' some-failed' : ''), 'data-state': job.state || '' });
	fill.style.width = pct + '%';
	return h('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': total,
		'aria-valuenow': ended, 'data-done': job.runs_done || 0, 'data-total': total }, fill);
}

export function progressText(job) {
	const parts = [`${job.runs_done || 0}/${job.runs_total || 0} done`];
	if (job.runs_failed) parts.push(`${job.runs_failed} failed`);
	if (job.runs_running) parts.push(`${job.runs_running} running`);
	if (job.state === 'queued' || job.state === 'running')
		parts.push('ETA ' + (job.eta_s == null ? '—' : fmtDur(job.eta_s)));
	return parts.join(' · ');
}

function cmdlineOf(m) {
	return m.cmdline || (m.fingerprint && m.fingerprint.cmdline) || '—';
}

function machineRows() {
	const rows = [...state.machines.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
	if (!rows.length) return [h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No machines registered.'))];
	return rows.map((m) => {
		const run = state.current.get(m.name);
		return h('tr', { 'data-machine': m.name },
			h('td', { class: 'name' }, m.name),
			h('td', {}, m.class || '—'),
			h('td', {}, h('span', { class: 'badge', 'data-state': m.state || '' }, m.state || '?'),
				m.last_error ? h('div', { class: 'err small' }, m.last_error) : null),
			h('td', {}, run ? h('a', { href: '#/job/' + run.job_id }, `job ${run.job_id} · run ${run.id}`) : '—',
				run && run.label ? h('div', { class: 'small' }, run.label) : null),
			h('td', { class: 'mono' }, m.kernel || '—'),
			h('td', { class: 'mono' }, cmdlineOf(m)),
			h('td', { title: fmtTime(m.last_seen), 'data-last-seen': m.last_seen || '' }, fmtAgo(m.last_seen)));
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
	root.append(
		h('section', {},
			h('h2', {}, 'Fleet'),
			h('div', { class: 'scroll' }, h('table', { id: 'machines' },
				h('thead', {}, h('tr', {}, ['machine', 'class', 'state', 'current run', 'kernel', 'cmdline', 'last seen'].map((t) => h('th', {}, t)))),
				mbody))),
		h('section', {},
			h('h2', {}, 'Jobs'),
			h('div', { class: 'scroll' }, h('table', { id: 'jobs' },
				h('thead', {}, h('tr', {}, ['id', 'recipe', 'name', 'state', 'progress'].map((t) => h('th', {}, t)))),
				jbody))));
	let queued = false;
	const render = () => {
		queued = false;
		clear(mbody, machineRows());
		clear(jbody, jobRows());
	};
	const later = () => { if (!queued) { queued = true; requestAnimationFrame(render); } };
	render();
	const off = subscribe(later);
	const tick = setInterval(later, 5000);	// "last seen" ages
	return { unmount() { off(); clearInterval(tick); } };
}
