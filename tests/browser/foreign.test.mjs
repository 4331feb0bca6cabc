// foreign.test.mjs: a web page of another origin against a coordinator in
// the no-token loopback mode (what deploy/quickstart runs). The page, served
// by a small server of this script on 127.0.0.2, tries what any page may do
// without asking: no-cors fetches with text/plain and no type, form POSTs
// (text/plain, urlencoded, multipart) to create a job, cancel one and probe
// a machine, and a JSON POST that needs a preflight. Then DNS rebinding's
// end state: a page whose own origin is http://rebind.test:PORT, resolved
// to the coordinator. No job may come of any of it. Last, the dashboard's
// own POSTs (same origin, its api.js) still work. Environment:
//   BF_URL (http://127.0.0.1:PORT), BF_MACHINE (a registered machine),
//   BF_JOB (a job that would be accepted), BF_ART
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const URL = process.env.BF_URL;
const PORT = new globalThis.URL(URL).port;
const JOB = process.env.BF_JOB;
const MACHINE = process.env.BF_MACHINE;
const ART = process.env.BF_ART || os.tmpdir();
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	'--disable-background-networking', '--disable-component-update', '--disable-sync',
	`--host-resolver-rules=MAP rebind.test 127.0.0.1`];
let fails = 0, checks = 0;
function check(what, cond, extra) {
	checks++;
	if (cond) console.log('ok   ' + what);
	else { fails++; console.log('FAIL ' + what + (extra !== undefined ? ': ' + extra : '')); }
}
async function jobCount() {
	const r = await fetch(URL + '/api/v1/jobs');
	return (await r.json()).jobs.length;
}
const esc = (s) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

// The attacker's page: every request a page may send without a preflight.
const job = JSON.parse(JOB);
const splitAt = JOB.lastIndexOf('}');
const page1 = `<!doctype html><meta charset="utf-8"><title>foreign</title>
<iframe name="sink" id="sink"></iframe>
<form id="f-plain" method="POST" enctype="text/plain" target="sink" action="${URL}/api/v1/jobs">
 <input type="hidden" name="${esc(JOB.slice(0, splitAt) + ',"name":"x')}" value="${esc('"' + JOB.slice(splitAt))}"></form>
<form id="f-url" method="POST" target="sink" action="${URL}/api/v1/jobs">
 <input type="hidden" name="recipe" value="${esc(job.recipe)}"></form>
<form id="f-multi" method="POST" enctype="multipart/form-data" target="sink" action="${URL}/api/v1/jobs">
 <input type="hidden" name="job" value="${esc(JOB)}"></form>
<form id="f-cancel" method="POST" enctype="text/plain" target="sink" action="${URL}/api/v1/jobs/1/cancel"></form>
<form id="f-probe" method="POST" target="sink" action="${URL}/api/v1/machines/${MACHINE}/probe"></form>
<script>
window.results = {};
async function attempt(name, init) {
	try { const r = await fetch(${JSON.stringify(URL)} + '/api/v1/jobs', init); window.results[name] = 'sent:' + r.type + ':' + r.status; }
	catch (e) { window.results[name] = 'blocked:' + e.message; }
}
window.run = async () => {
	const body = ${JSON.stringify(JOB)};
	await attempt('no-cors text/plain', { method: 'POST', mode: 'no-cors', body, headers: { 'Content-Type': 'text/plain' } });
	await attempt('no-cors no type', { method: 'POST', mode: 'no-cors', body });
	await attempt('no-cors form type', { method: 'POST', mode: 'no-cors', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
	await attempt('cors json (preflight)', { method: 'POST', mode: 'cors', body, headers: { 'Content-Type': 'application/json' } });
	navigator.sendBeacon(${JSON.stringify(URL)} + '/api/v1/jobs', new Blob([body], { type: 'text/plain' }));
	return window.results;
};
</script>`;

const seen = [];
const foreign = http.createServer((req, res) => {
	res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
	res.end(page1);
});
await new Promise((ok) => foreign.listen(0, '127.0.0.2', ok));
const FOREIGN = `http://127.0.0.2:${foreign.address().port}`;

const udd = fs.mkdtempSync(path.join(os.tmpdir(), 'bf-chromium-'));
const ctx = await chromium.launchPersistentContext(udd, {
	executablePath: process.env.BF_CHROMIUM || '/usr/bin/chromium',
	headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 },
});
const page = ctx.pages()[0] || await ctx.newPage();
page.on('request', (r) => { if (r.url().startsWith(URL)) seen.push(r.method() + ' ' + r.url().slice(URL.length)); });
const answers = [];
page.on('response', (r) => { if (r.url().startsWith(URL)) answers.push(r.status() + ' ' + r.request().method() + ' ' + r.url().slice(URL.length)); });

try {
	const before = await jobCount();
	await page.goto(FOREIGN + '/');
	const results = await page.evaluate(() => window.run());
	console.log('fetch results: ' + JSON.stringify(results));
	for (const id of ['f-plain', 'f-url', 'f-multi', 'f-cancel', 'f-probe']) {
		await page.evaluate((id) => document.getElementById(id).submit(), id);
		await page.waitForTimeout(300);
	}
	await page.waitForTimeout(1000);
	console.log('requests that reached the coordinator: ' + seen.join('; '));
	console.log('its answers: ' + answers.join('; '));
	check('the page did send its POSTs (the test tests something)', seen.filter((s) => s.startsWith('POST')).length >= 7, seen.join('; '));
	check('no job was created by a page of another origin', (await jobCount()) === before, `${before} -> ${await jobCount()}`);
	check('every answer the page got was a refusal', answers.length > 0 && answers.every((a) => /^(4\d\d) /.test(a)), answers.join('; '));
	check('the preflighted JSON POST never went out', !seen.includes('POST /api/v1/jobs') ||
		results['cors json (preflight)'].startsWith('blocked'), results['cors json (preflight)']);
	await page.screenshot({ path: path.join(ART, 'foreign-page.png') });

	// DNS rebinding, its end state: the page's origin is rebind.test:PORT and
	// the name now resolves to the coordinator (--host-resolver-rules).
	const nav = await page.goto(`http://rebind.test:${PORT}/`);
	check('the dashboard under a rebound name is refused (421)', nav.status() === 421, nav.status());
	const rb = await page.evaluate(async (body) => {
		const out = {};
		for (const [name, init] of [['read', {}], ['post', { method: 'POST', body, headers: { 'Content-Type': 'application/json' } }]]) {
			try { const r = await fetch('/api/v1/jobs', init); out[name] = r.status + ' ' + (await r.text()).slice(0, 80); }
			catch (e) { out[name] = 'error ' + e.message; }
		}
		return out;
	}, JOB);
	console.log('rebound page: ' + JSON.stringify(rb));
	check('a rebound page cannot read the API', rb.read.startsWith('421'), rb.read);
	check('a rebound page cannot submit', rb.post.startsWith('421'), rb.post);
	check('still no job', (await jobCount()) === before);

	// The dashboard itself: same origin, its own api.js (Content-Type on
	// every POST, the empty cancel too).
	await page.goto(URL + '/');
	const own = await page.evaluate(async (body) => {
		const { api } = await import('/api.js');
		const made = await api('/jobs', { method: 'POST', body: JSON.parse(body) });
		await api(`/jobs/${made.id}/cancel`, { method: 'POST' });
		return made;
	}, JOB);
	check('the dashboard submits a job (same origin)', own && Number.isInteger(own.id), JSON.stringify(own));
	check('and that is the one new job', (await jobCount()) === before + 1);
	const st = await (await fetch(`${URL}/api/v1/jobs/${own.id}`)).json();
	check('the dashboard cancels it (an empty JSON POST)', st.state === 'cancelled' || st.runs_cancelled > 0, st.state);
} catch (e) {
	check('no exception', false, e.stack);
} finally {
	await ctx.close();
	foreign.close();
	fs.rmSync(udd, { recursive: true, force: true });
}
console.log(`${checks} checks, ${fails} failed`);
process.exit(fails ? 1 : 0);
