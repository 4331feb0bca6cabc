// auth.test.mjs: the dashboard against a coordinator whose API needs a
// token (web_ui.sh created them). A 401 opens the token prompt; the token
// goes to sessionStorage and out as Authorization: Bearer, the event
// stream included; a viewer's submit gets 403 and says so. Environment:
//   BF_URL, BF_VIEWER_TOKEN, BF_SUBMITTER_TOKEN, BF_CLASS, BF_ART
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const URL = process.env.BF_URL;
const ART = process.env.BF_ART || os.tmpdir();
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	'--disable-background-networking', '--disable-component-update', '--disable-sync'];
let fails = 0, checks = 0;
function check(what, cond, extra) {
	checks++;
	if (cond) console.log('ok   ' + what);
	else { fails++; console.log('FAIL ' + what + (extra !== undefined ? ': ' + extra : '')); }
}

const udd = fs.mkdtempSync(path.join(os.tmpdir(), 'bf-chromium-'));
const ctx = await chromium.launchPersistentContext(udd, {
	executablePath: process.env.BF_CHROMIUM || '/usr/bin/chromium',
	headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 },
});
const page = ctx.pages()[0] || await ctx.newPage();
const dialogs = [], authHeaders = new Set();
page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
page.on('request', (r) => {
	if (r.url().includes('/api/v1/')) authHeaders.add(new globalThis.URL(r.url()).pathname + ' ' + (r.headers().authorization || '-'));
});

try {
	await page.goto(URL + '/');
	await page.waitForSelector('#token-dialog[open]', { timeout: 10000 });
	check('a 401 opens the token prompt', true);
	await page.screenshot({ path: path.join(ART, 'token-prompt-1280x800.png') });
	check('the prompt says how to get a token', /benchfleetd token create --role/.test(await page.textContent('#token-how')));
	await page.fill('#token-input', process.env.BF_VIEWER_TOKEN);
	// Enter, not a click: it used to press "Forget", the form's first button
	await page.press('#token-input', 'Enter');
	await page.waitForSelector('#machines tr[data-machine]', { timeout: 10000 });
	check('with a viewer token the fleet loads', true);
	await page.waitForSelector('#live[data-state="live"]', { timeout: 10000 });
	check('the event stream goes live with the token', true);
	const stored = await page.evaluate(() => sessionStorage.getItem('benchfleet.token'));
	check('the token is kept in sessionStorage', stored === process.env.BF_VIEWER_TOKEN);
	check('requests carry Authorization: Bearer (events included)',
		authHeaders.has('/api/v1/events Bearer ' + process.env.BF_VIEWER_TOKEN) &&
		authHeaders.has('/api/v1/machines Bearer ' + process.env.BF_VIEWER_TOKEN), [...authHeaders].join('; '));
	// A viewer may not submit: 403, said at the form and in the prompt.
	await page.click('nav a[data-nav="submit"]');
	await page.waitForSelector('#submit-form');
	await page.fill('#job-json', JSON.stringify({ recipe: 'echo', machines: { class: process.env.BF_CLASS || 'web' } }));
	await page.click('#load-json');
	await page.click('#submit-button');
	await page.waitForSelector('#token-dialog[open]', { timeout: 5000 });
	const reason = await page.textContent('#token-reason');
	check('a 403 asks for a token with the right role', /right role/.test(reason), reason);
	const ferr = await page.textContent('[data-error-for="(form)"]');
	check('the form says the token may not submit', /may not submit/.test(ferr), ferr);
	await page.fill('#token-input', process.env.BF_SUBMITTER_TOKEN);
	await page.click('#token-save');
	await page.waitForSelector('#live[data-state="live"]', { timeout: 10000 });
	await page.click('#submit-button');
	await page.waitForURL(/#\/job\/\d+$/, { timeout: 5000 }).then(() => check('a submitter token submits', true))
		.catch(() => check('a submitter token submits', false, page.url()));
	// "Remember on this browser": Enter keeps it in localStorage, and a new
	// tab opens live without asking; Forget clears it everywhere.
	await page.click('#token-button');
	await page.fill('#token-input', process.env.BF_SUBMITTER_TOKEN);
	await page.check('#token-remember');
	await page.press('#token-input', 'Enter');
	// The stream was live already with the same token in sessionStorage, so
	// "live" alone can be seen before the dialog has handled Enter (seen:
	// [null, token]); wait for the dialog to close, then read.
	await page.waitForSelector('#live[data-state="live"]', { timeout: 10000 });
	await page.waitForFunction(() => localStorage.getItem('benchfleet.token') !== null, null,
		{ timeout: 5000 }).catch(() => {});
	const kept = await page.evaluate(() => [localStorage.getItem('benchfleet.token'), sessionStorage.getItem('benchfleet.token')]);
	check('Enter with "remember" keeps the token in localStorage only', kept[0] === process.env.BF_SUBMITTER_TOKEN && kept[1] === null, JSON.stringify(kept));
	const tab = await ctx.newPage();
	await tab.goto(URL + '/');
	const tabLive = await tab.waitForSelector('#live[data-state="live"]', { timeout: 10000 }).then(() => true).catch(() => false);
	check('a new tab of this browser goes live without asking', tabLive && !(await tab.isVisible('#token-dialog[open]')));
	await tab.close();
	await page.click('#token-button');
	await page.click('#token-forget');
	// the dialog's close event, which does the forgetting, comes a task later
	await page.waitForFunction(() => !localStorage.getItem('benchfleet.token'), null, { timeout: 2000 }).catch(() => {});
	const gone = await page.evaluate(() => [localStorage.getItem('benchfleet.token'), sessionStorage.getItem('benchfleet.token')]);
	check('Forget clears the token from this tab and this browser', gone[0] === null && gone[1] === null, JSON.stringify(gone));
	const asks = await page.waitForSelector('#token-dialog[open]', { timeout: 10000 }).then(() => true).catch(() => false);
	check('without it the page asks again', asks);
	check('no dialog opened', dialogs.length === 0, JSON.stringify(dialogs));
} catch (e) {
	fails++;
	console.log('FAIL ' + (e && e.stack ? e.stack : e));
	await page.screenshot({ path: path.join(ART, 'auth-failure.png') }).catch(() => {});
} finally {
	await ctx.close();
	fs.rmSync(udd, { recursive: true, force: true });
}
console.log(`${checks} checks, ${fails} failed`);
process.exit(fails ? 1 : 0);
