// job-log.js: the job page's log of one run. It stays on the run the user
// picks; left on "newest running" it takes the newest running run and
// switches only once that run ends (a log that jumped between runs on every
// line could not be read). Each line carries the time the coordinator saw
// it; follow/pause stops the scrolling and holds new lines back; the boot
// record (one JSON line on the coord stream) is shown as its fields.
import { api } from './api.js';
import { h, clear } from './dom.js';
import { state } from './state.js';

const TAIL = 200;
const AUTO = 'auto';

const stamp = (at) => (at ? new Date(at * 1000).toISOString().slice(11, 23) : '');

// The boot record the runner logs after a boot (boot_result_json), or null.
export function bootRecord(l) {
	if (l.stream !== 'coord' || !l.line || l.line[0] !== '{') return null;
	let o;
	try { o = JSON.parse(l.line); } catch (e) { return null; }
	if (!o || typeof o !== 'object' || !('boot_id' in o) || !('kernel' in o)) return null;
	return o;
}

function bootView(o) {
	const ok = !o.reason;
	const f = (x) => (typeof x === 'number' ? x.toFixed(1) + ' s' : '—');
	const rows = [
		['kernel', o.kernel || '—'], ['cmdline', o.cmdline || '—'], ['boot_id', o.boot_id || '—'],
		['previous boot_id', o.prev_boot_id || '—'],
		['verify', ok ? 'verified: kernel, cmdline and a new boot_id' : 'failed: ' + o.reason],
		['time to SSH', f(o.ssh_seconds)], ['boot took', f(o.seconds)],
		['attempts', String(o.attempts ?? '—')],
		['rebooted', o.rebooted ? 'yes' : 'no'],
		['power-cycled', o.power_cycled ? `yes (status ${o.power_cycle_status})` : 'no'],
		['recovered', o.recovered ? 'yes' : 'no'],
	];
	return h('dl', { class: 'kv bootrec', 'data-verified': ok ? 'yes' : 'no' },
		rows.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-key': k }, v)]));
}

function lineView(l) {
	if (l.dropped) return [h('div', { class: 'line dropped' }, `… ${l.dropped} lines not shown (rate limit)`), lineOnly(l)];
	return lineOnly(l);
}

function lineOnly(l) {
	const rec = bootRecord(l);
	return h('div', { class: 'line', 'data-stream': l.stream },
		h('span', { class: 'ts', title: l.at ? new Date(l.at * 1000).toISOString() : 'time not known' }, stamp(l.at)),
		rec ? [h('span', {}, 'boot record'), bootView(rec)] : h('span', { class: 'text' }, l.line));
}

export function logPanel() {
	const title = h('h3', { id: 'log-title' }, 'Log');
	const pick = h('select', { id: 'log-run', 'aria-label': 'which run\'s log' }, h('option', { value: AUTO }, 'newest running'));
	const follow = h('button', { type: 'button', id: 'log-follow', 'aria-pressed': 'true' }, 'Pause');
	const log = h('div', { class: 'log', id: 'log', 'aria-live': 'off', tabindex: 0 });
	const el = h('div', { class: 'col' }, h('div', { class: 'row' }, title, h('span', { class: 'spacer' }), pick, follow), log);
	let runs = [], logRun = null, shown = 0, paused = false, held = 0;

	function running() {
		return runs.filter((r) => r.state === 'running').sort((a, b) => b.id - a.id)[0];
	}

	function options() {
		const want = [AUTO, ...runs.filter((r) => r.started_at).sort((a, b) => a.id - b.id).map((r) => String(r.id))];
		const have = [...pick.options].map((o) => o.value);
		if (want.join() === have.join()) {
			for (const o of pick.options) if (o.value !== AUTO) o.textContent = label(runs.find((r) => String(r.id) === o.value));
			return;
		}
		const sel = pick.value;
		clear(pick, want.map((v) => h('option', { value: v }, v === AUTO ? 'newest running' : label(runs.find((r) => String(r.id) === v)))));
		pick.value = want.includes(sel) ? sel : AUTO;
	}
	const label = (r) => `run ${r.id} · ${r.label || 'cell ' + r.cell_index} · boot ${r.boot} · ${r.state}`;

	function heading() {
		const r = runs.find((x) => x.id === logRun);
		title.textContent = r ? `Log of run ${r.id} (${r.state})` : 'Log';
		log.dataset.run = logRun == null ? '' : String(logRun);
		log.dataset.mode = pick.value === AUTO ? 'auto' : 'pinned';
	}

	async function show(id) {
		logRun = id;
		shown = 0; held = 0;
		clear(log);
		heading();
		render();
		try {
			const r = await api(`/runs/${id}/log?limit=1000`);
			const have = state.logs.get(id) || [];
			if (logRun !== id || r.lines.length <= have.length) return;
			state.logs.set(id, r.lines.slice(-TAIL).map((l) => ({ stream: l.stream, line: l.line, at: l.at })));
			shown = 0;
			clear(log);
			render();
		} catch (e) { /* the stream's lines stay */ }
	}

	function render() {
		const lines = state.logs.get(logRun) || [];
		if (shown > lines.length) { clear(log); shown = 0; }
		if (paused) { held = lines.length - shown; follow.textContent = held ? `Follow (${held} new)` : 'Follow'; return; }
		const stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
		for (const l of lines.slice(shown)) log.append(...[lineView(l)].flat());
		shown = lines.length;
		while (log.childElementCount > TAIL) log.firstElementChild.remove();
		if (stick || held) log.scrollTop = log.scrollHeight;
		held = 0;
	}

	// Which run to show, after the runs changed.
	function choose() {
		if (pick.value !== AUTO) {
			const id = Number(pick.value);
			if (id !== logRun) show(id);
			return;
		}
		const cur = runs.find((r) => r.id === logRun);
		if (cur && cur.state === 'running') return;	// stay until it ends
		const next = running();
		if (next) { show(next.id); return; }
		if (logRun == null) {
			const last = runs.filter((r) => r.started_at).sort((a, b) => b.started_at - a.started_at || b.id - a.id)[0];
			if (last) show(last.id);
		}
	}

	pick.addEventListener('change', () => { if (pick.value === AUTO) logRun = logRun ?? null; choose(); heading(); });
	follow.addEventListener('click', () => {
		paused = !paused;
		follow.setAttribute('aria-pressed', paused ? 'false' : 'true');
		follow.textContent = paused ? 'Follow' : 'Pause';
		log.dataset.paused = paused ? 'yes' : 'no';
		render();
	});
	log.dataset.paused = 'no';

	return {
		el,
		runs(list) { runs = list; options(); choose(); heading(); },
		// a log event: lines of the run shown are drawn, others wait in state
		line(d) { if (d.run === logRun) render(); },
		get run() { return logRun; },
		// pin to a run (a cell or run square was chosen)
		pin(id) {
			if (![...pick.options].some((o) => o.value === String(id))) return;
			pick.value = String(id);
			choose();
			heading();
		},
	};
}
