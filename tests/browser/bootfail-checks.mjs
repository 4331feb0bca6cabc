// bootfail-checks.mjs: the hidden bar of issue 19, run by dashboard.test.mjs:
// a job whose first boot fails for real, then a cancel, followed in the
// page without a reload. The machine is a fleet host registered a second
// time with a boot configuration whose command (a profile of the daemon's
// --config that web_ui.sh wrote: /bin/ls of a path that is not there)
// exits non-zero on the host: the runner records a boot-failed run with
// the command's own words as its reason and quarantines the machine (the
// daemon runs with --boot-failures 1), so the job's second boot stays
// queued until the user cancels it.
//   host: {host, port, user, key} of a netns host (BF_BOOTFAIL_HOST)
export async function bootFailChecks(page, { check, apiPost, apiGet, until, url, host, shot }) {
	const m = { name: 'bootfail-web', class: 'bootfail-web', ...host,
		boot: { method: 'command', command: 'bootfail', timeout_s: 5 } };
	const tStart = Date.now();
	const reg = await apiPost('/machines', m);
	check('boot failure: a machine whose boot command fails', reg.status === 201, JSON.stringify(reg.body));
	const made = await apiPost('/jobs', { recipe: 'echo', name: 'boot-failure', machines: { class: m.class }, cmdline: 'quiet',
		repetitions: { boots: 2, iterations: 1 } });
	check('boot failure: a job of two boots', made.status === 201, JSON.stringify(made.body));
	const id = made.body.id;
	const navs = [];
	const onNav = (f) => { if (f === page.mainFrame()) navs.push(f.url()); };
	await page.goto(`${url}/#/job/${id}`);
	page.on('framenavigated', onNav);
	// the first boot fails while the page is open: the page follows it live
	const bad = await until(async () => ((await apiGet(`/jobs/${id}/runs`)).runs || []).find((r) => r.state === 'boot-failed'),
		60000, 'the boot-failed run').catch(() => null);
	check('boot failure: the API says boot-failed, with the command\'s reason', bad && /reboot command exited/.test(bad.error || ''),
		JSON.stringify(bad));
	if (!bad) { page.off('framenavigated', onNav); return; }
	const sq = `#grid .run[data-run="${bad.id}"]`;
	await page.waitForSelector(`${sq}[data-state="boot-failed"]`, { timeout: 3000 }).catch(() => {});
	const look = await page.$eval(sq, (s) => ({ state: s.dataset.state, bg: getComputedStyle(s).backgroundColor,
		cell: s.closest('.cell').dataset.state, border: getComputedStyle(s.closest('.cell')).borderLeftColor })).catch(() => null);
	const red = (c) => { const v = /rgb\((\d+), (\d+), (\d+)/.exec(c || ''); return v && +v[1] > 150 && +v[2] < 90 && +v[3] < 90; };
	check('boot failure: its square and its cell are red, not queued', look && look.state === 'boot-failed' && red(look.bg) &&
		look.cell === 'boot-failed' && red(look.border), JSON.stringify(look));
	const row = await page.$eval(`#runs tbody tr[data-run="${bad.id}"]`, (tr) => ({ state: tr.dataset.state,
		badge: getComputedStyle(tr.querySelector('.badge')).backgroundColor, err: tr.querySelector('td.err').textContent })).catch(() => null);
	check('boot failure: the runs table says boot-failed in red with the reason', row && row.state === 'boot-failed' && red(row.badge) &&
		row.err === bad.error, JSON.stringify(row));
	const why = await page.textContent('#job-reason').catch(() => '');
	check('boot failure: the reason is on top of the page, said once', why.includes(bad.error) &&
		!why.includes('boot-failed: boot-failed') && /1 of 2 runs did not succeed/.test(why), why);
	const seg = await page.$eval('.progwrap .progress .seg[data-seg="boot-failed"]', (s) => s.getBoundingClientRect().width).catch(() => 0);
	check('boot failure: the progress bar has a boot-failed segment', seg > 0, seg);
	// its log, picked: the boot record as fields, verify failed with the reason
	await page.selectOption('#log-run', String(bad.id)).catch(() => {});
	await page.waitForSelector('#log .bootrec', { timeout: 5000 }).catch(() => {});
	const rec = await page.$eval('#log .bootrec', (d) => ({ ok: d.dataset.verified,
		f: Object.fromEntries([...d.querySelectorAll('dd')].map((x) => [x.dataset.key, x.textContent])) })).catch(() => null);
	check('boot failure: the log shows the boot record as fields, verify failed with the reason', rec && rec.ok === 'no' &&
		/^failed: .*reboot command exited/.test(rec.f.verify) && rec.f.rebooted === 'no' && rec.f.boot_id.length === 36,
		JSON.stringify(rec));
	const queued = await until(async () => ((await apiGet(`/jobs/${id}/runs`)).runs || []).filter((r) => r.state === 'queued'), 5000, 'queued')
		.catch(() => []);
	check('boot failure: the other boot waits, queued (the machine is quarantined)', queued.length === 1,
		JSON.stringify(((await apiGet(`/jobs/${id}/runs`)).runs || []).map((r) => r.state)));
	if (queued.length !== 1) { page.off('framenavigated', onNav); return; }
	await shot('job-boot-failed');
	// cancel: the queued boot turns cancelled in the page within 1 s, the failed one stays red
	await page.click('#cancel');
	await page.waitForSelector('#cancel-confirm', { timeout: 2000 }).catch(() => {});
	const t0 = Date.now();
	await page.click('#cancel-yes');
	const ms = await page.waitForFunction(([q, b]) => document.querySelector(`#grid .run[data-run="${q}"]`)?.dataset.state === 'cancelled' &&
		document.querySelector(`#runs tbody tr[data-run="${q}"]`)?.dataset.state === 'cancelled' &&
		document.querySelector(`#grid .run[data-run="${b}"]`)?.dataset.state === 'boot-failed', [queued[0]?.id, bad.id], { timeout: 1000 })
		.then(() => Date.now() - t0).catch(() => null);
	check(`boot failure: cancel turns the queued boot cancelled within 1 s (${ms} ms), the failed one stays`, ms !== null);
	check('boot failure: the job says cancelled, without a reload', (await page.textContent('.titlebar .badge')) === 'cancelled' &&
		navs.length === 0, navs.join(' '));
	page.off('framenavigated', onNav);
	const del = await fetch(`${url}/api/v1/machines/${m.name}`, { method: 'DELETE', headers: { 'Content-Type': 'application/json' } });
	check('boot failure: its machine deleted', del.status === 204 || del.status === 200, del.status);
	console.log(`boot failure and cancel, whole flow: ${Date.now() - tStart} ms`);
}
