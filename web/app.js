// app.js: the dashboard's entry: the event stream, the token prompt and a
// hash router over the views (fleet, job, results, history, reproductions,
// bisections, submit). Views build
// their DOM through dom.js only, so every value from the store is text.
import { auth } from './api.js';
import { h, clear } from './dom.js';
import { EventStream } from './sse.js';
import { state, apply, loadAll } from './state.js';
import { fleetView } from './view-fleet.js';
import { jobView } from './view-job.js';
import { resultsView } from './view-results.js';
import { submitView } from './view-submit.js';
import { jobsView } from './view-jobs.js';
import { reproView } from './view-repro.js';
import { reprosView } from './view-repros.js';
import { bisectsView, bisectView } from './view-bisect.js';

const $ = (id) => document.getElementById(id);
const routes = [
	[/^#?\/?$/, fleetView, 'fleet'],
	[/^#\/job\/(\d+)$/, jobView, 'fleet'],
	[/^#\/job\/(\d+)\/results(?:\?baseline=(.*))?$/, resultsView, 'fleet'],
	[/^#\/submit$/, submitView, 'submit'],
	[/^#\/jobs(?:\?.*)?$/, jobsView, 'jobs'],
	[/^#\/reproductions(?:\?.*)?$/, reprosView, 'repros'],
	[/^#\/reproductions\/(\d+)$/, reproView, 'repros'],
	[/^#\/bisections$/, bisectsView, 'bisects'],
	[/^#\/bisections\/(\d+)$/, bisectView, 'bisects'],
];

let mounted = null;

function route() {
	if (mounted && mounted.unmount) mounted.unmount();
	mounted = null;
	const view = $('view');
	const hash = location.hash || '#/';
	for (const [re, fn, nav] of routes) {
		const m = re.exec(hash);
		if (!m) continue;
		for (const a of document.querySelectorAll('nav a')) a.classList.toggle('here', a.dataset.nav === nav);
		clear(view);
		mounted = fn(view, m.slice(1).map((x) => (x == null ? x : decodeURIComponent(x))));
		return;
	}
	clear(view, h('p', {}, 'No such page: ', hash), h('a', { href: '#/' }, 'back to the fleet'));
}

export function notice(msg) {
	const n = $('notice');
	n.textContent = msg || '';
	n.hidden = !msg;
}

function askToken(status, message) {
	const dlg = $('token-dialog');
	$('token-reason').textContent = status === 403
		? 'This token may not do that (' + (message || 'forbidden') + '). Use a token with the right role.'
		: 'This coordinator needs an API token' + (message ? ' (' + message + ')' : '') + '.';
	$('token-input').value = '';
	$('token-remember').checked = auth.remembered;
	if (!dlg.open) dlg.showModal();
}

function setLive(s) {
	const el = $('live');
	el.dataset.state = s;
	el.textContent = s;
}

const stream = new EventStream('/api/v1/events', {
	onEvent(type, data, id) {
		let d;
		try { d = JSON.parse(data); } catch (e) { return; }
		window.bf.seen.push({ id, type });
		if (window.bf.seen.length > 5000) window.bf.seen.splice(0, 1000);
		if (type === 'reset') {
			window.bf.resets++;
			loadAll().catch((e) => notice(e.message));
			return;
		}
		apply(type, d);
	},
	onState(s) {
		setLive(s);
		// The snapshot is read once the stream is open, so that no change
		// falls between the two.
		if (s === 'live' && stream.connects === 1) loadAll().catch((e) => notice(e.message)).finally(route);
	},
	onAuth(status) {
		setLive('no token');
		askToken(status);
	},
});

// For tests and the curious: the stream and what came through it.
window.bf = { stream, state, seen: [], resets: 0 };

auth.onNeed = askToken;
$('token-button').addEventListener('click', () => askToken(0, ''));
$('token-dialog').addEventListener('close', () => {
	const v = $('token-dialog').returnValue;
	if (v === 'save' && $('token-input').value.trim()) auth.save($('token-input').value.trim(), $('token-remember').checked);
	else if (v === 'clear') auth.save('', false);
	else return;
	stream.stop();
	stream.start();
	notice('');
	// A half-filled submit form stays as it is; other views load again.
	loadAll().then(() => { if (location.hash !== '#/submit') route(); }).catch((e) => notice(e.message));
});

window.addEventListener('hashchange', route);
stream.start();
route();
// Without a stream (refused, or too many open) the page still loads once.
setTimeout(() => { if (stream.connects === 0) loadAll().catch((e) => notice(e.message)).finally(route); }, 3000);
