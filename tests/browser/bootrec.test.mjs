// bootrec.test.mjs: the job page's boot record on a boot that really
// happened (issue 19): tests/integration/suite_vm.sh runs it once its
// two-kernel job has kexec'd a QEMU VM four times. For the first run that
// carries a boot record in its log, the page's fields (kernel, cmdline,
// boot_id, verify, time to SSH) must be the record's and the run's own.
// Environment: BF_URL, BF_JOB (the job id), BF_ART (screenshots).
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const URL = process.env.BF_URL;
const JOB = process.env.BF_JOB;
const ART = process.env.BF_ART || fs.mkdtempSync(path.join(os.tmpdir(), 'bf-bootrec-art-'));
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
	'--disable-background-networking', '--disable-component-update', '--disable-sync'];

let fails = 0, checks = 0;
function check(what, cond, extra) {
	checks++;
	if (cond) console.log('ok   ' + what);
	else { fails++; console.log('FAIL ' + what + (extra !== undefined ? ': ' + extra : '')); }
}
async function apiGet(p) {
	const r = await fetch(URL + '/api/v1' + p);
	if (!r.ok) throw new Error(p + ': HTTP ' + r.status);
	return r.json();
}
// The boot record the runner logged for run id (what job-log.js draws), or null.
async function record(id) {
	const log = await apiGet(`/runs/${id}/log?limit=1000`);
	for (const l of log.lines || []) {
		if (l.stream !== 'coord' || !l.line || l.line[0] !== '{') continue;
		try { const o = JSON.parse(l.line); if (o && 'boot_id' in o && 'kernel' in o) return o; } catch (e) { /* a line */ }
	}
	return null;
}

const udd = fs.mkdtempSync(path.join(os.tmpdir(), 'bf-chromium-'));
const ctx = await chromium.launchPersistentContext(udd, {
	executablePath: process.env.BF_CHROMIUM || '/usr/bin/chromium',
	headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 },
});
const page = ctx.pages()[0] || await ctx.newPage();
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
try {
	const runs = (await apiGet(`/jobs/${JOB}/runs`)).runs.sort((a, b) => a.id - b.id);
	let run = null, rec = null;
	for (const r of runs) if ((rec = await record(r.id))) { run = r; break; }
	check('a run of the job has a boot record in its log', rec !== null && run !== null);
	if (!rec) throw new Error('no boot record to show');
	check(`the record is of a verified reboot (run ${run.id}, ${rec.kernel})`, rec.rebooted && !rec.reason && rec.ssh_seconds > 0 &&
		rec.boot_id.length === 36 && rec.boot_id !== rec.prev_boot_id, JSON.stringify(rec));
	await page.goto(`${URL}/#/job/${JOB}`);
	await page.waitForSelector(`#log-run option[value="${run.id}"]`, { state: 'attached', timeout: 10000 });
	await page.selectOption('#log-run', String(run.id));
	await page.waitForSelector('#log .bootrec', { timeout: 10000 });
	const shown = await page.$eval('#log .bootrec', (d) => ({ ok: d.dataset.verified,
		f: Object.fromEntries([...d.querySelectorAll('dd')].map((x) => [x.dataset.key, x.textContent])) }));
	console.log('boot record shown: ' + JSON.stringify(shown));
	check('kernel: the record\'s and the run\'s', shown.f.kernel === rec.kernel && rec.kernel === run.kernel, `${shown.f.kernel} ${run.kernel}`);
	check('cmdline: the record\'s, with the job\'s boot tag', shown.f.cmdline === rec.cmdline &&
		shown.f.cmdline.includes(`benchfleet.boot=${JOB}.${run.boot}`), shown.f.cmdline);
	check('boot_id: the record\'s and the run\'s', shown.f.boot_id === rec.boot_id && rec.boot_id === run.boot_id, `${shown.f.boot_id} ${run.boot_id}`);
	check('previous boot_id shown, another one', shown.f['previous boot_id'] === rec.prev_boot_id && rec.prev_boot_id !== rec.boot_id);
	check('verify: verified', shown.ok === 'yes' && shown.f.verify === 'verified: kernel, cmdline and a new boot_id', shown.f.verify);
	check(`time to SSH: ${shown.f['time to SSH']}`, shown.f['time to SSH'] === `${rec.ssh_seconds.toFixed(1)} s`, rec.ssh_seconds);
	check('rebooted: yes', shown.f.rebooted === 'yes');
	for (const [w, hgt] of [[1280, 800], [390, 844]]) {
		await page.setViewportSize({ width: w, height: hgt });
		await page.locator('#log .bootrec').scrollIntoViewIfNeeded();
		await page.screenshot({ path: path.join(ART, `boot-record-${w}x${hgt}.png`) });
	}
	check('no script errors on the page', pageErrors.length === 0, JSON.stringify(pageErrors));
} catch (e) {
	fails++;
	console.log('FAIL ' + (e && e.stack ? e.stack : e));
} finally {
	await ctx.close();
	fs.rmSync(udd, { recursive: true, force: true });
}
console.log(`${checks} checks, ${fails} failed`);
process.exit(fails ? 1 : 0);
