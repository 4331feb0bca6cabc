// job-checks.mjs: the job page's cancel (issue 19), run by
// dashboard.test.mjs: one press only asks; "No" keeps the job; "Yes"
// turns every queued run to `cancelled` in the page, without a reload,
// within a second.
export async function cancelChecks(page, { check, apiPost, apiGet, sleep, url }) {
	// A machine that never answers holds the job's runs queued.
	const m = { name: 'cancel-web', host: '127.0.0.1', port: 9, key: '/etc/hostname', class: 'cancel-web' };
	check('cancel: a machine that never answers', (await apiPost('/machines', m)).status === 201);
	const made = await apiPost('/jobs', { recipe: 'echo', machines: { class: 'cancel-web' }, repetitions: { boots: 3, iterations: 1 } });
	check('cancel: a job of queued runs', made.status === 201, JSON.stringify(made.body));
	const id = made.body.id;
	const navs = [];
	const onNav = (f) => { if (f === page.mainFrame()) navs.push(f.url()); };
	await page.goto(`${url}/#/job/${id}`);
	page.on('framenavigated', onNav);
	await page.waitForSelector('#runs tbody tr[data-run]', { timeout: 5000 });
	const n = await page.locator('#runs tbody tr[data-run]').count();
	check(`cancel: the page shows the job's ${n} runs queued`, n === 3 &&
		(await page.locator('#runs tbody tr[data-state="queued"]').count()) === n);
	await page.click('#cancel');
	await sleep(300);
	check('cancel: one press asks first', await page.isVisible('#cancel-confirm') &&
		(await apiGet(`/jobs/${id}`)).state !== 'cancelled');
	await page.click('#cancel-no');
	await sleep(300);
	check('cancel: "No" keeps the job', !(await page.isVisible('#cancel-confirm')) && await page.isVisible('#cancel') &&
		(await apiGet(`/jobs/${id}`)).state !== 'cancelled');
	await page.click('#cancel');
	const t0 = Date.now();
	await page.click('#cancel-yes');
	let ms = null;
	await page.waitForFunction((k) => document.querySelectorAll('#runs tbody tr[data-state="cancelled"]').length === k &&
		document.querySelectorAll('#grid .run[data-state="cancelled"]').length === k, n, { timeout: 1000 })
		.then(() => { ms = Date.now() - t0; }).catch(() => {});
	check(`cancel: every run shows cancelled within 1 s (${ms} ms)`, ms !== null);
	check('cancel: the job badge says cancelled', (await page.textContent('.titlebar .badge')) === 'cancelled');
	check('cancel: no reload', navs.length === 0, navs.join(' '));
	page.off('framenavigated', onNav);
	// Cancelled by another client: the open page follows from the events.
	const other = await apiPost('/jobs', { recipe: 'echo', machines: { class: 'cancel-web' }, repetitions: { boots: 2, iterations: 1 } });
	await page.goto(`${url}/#/job/${other.body.id}`);
	await page.waitForSelector('#runs tbody tr[data-state="queued"]', { timeout: 5000 });
	await apiPost(`/jobs/${other.body.id}/cancel`);
	const live = await page.waitForFunction(() => {
		const rs = document.querySelectorAll('#runs tbody tr[data-run]');
		return rs.length === 2 && [...rs].every((r) => r.dataset.state === 'cancelled');
	}, null, { timeout: 1000 }).then(() => true).catch(() => false);
	check('cancel: a cancel from elsewhere shows live within 1 s', live);
	await fetch(`${url}/api/v1/machines/cancel-web`, { method: 'DELETE', headers: { 'Content-Type': 'application/json' } });
}
