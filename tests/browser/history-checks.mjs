// history-checks.mjs: the job history of issue 19, run by
// dashboard.test.mjs once it has made a dozen jobs: paging by "Older"
// reaches every job (with a page of 3, the mechanism that takes a user past
// the newest 100), deep links filter by state, recipe, machine and text
// exactly as GET /jobs does, the filter form writes the URL, a refused
// filter is named, and created/duration are the job's.
const dur = (s) => { s = Math.round(s); return s < 60 ? s + ' s' : s < 3600 ? `${Math.floor(s / 60)} min ${s % 60} s` : null; };

export async function historyChecks(page, { check, apiGet, url, machine, hostile }) {
	const ids = async () => page.$$eval('#history tbody tr[data-job]', (trs) => trs.map((t) => Number(t.dataset.job)));
	const open = async (hash) => {
		// by way of the fleet page, so that no row of the last list is taken for the new one
		await page.goto(`${url}/#/`);
		await page.waitForSelector('#machines');
		await page.goto(`${url}/${hash}`);
		await page.waitForFunction(() => document.querySelector('#history tbody tr'), null, { timeout: 5000 });
		await page.waitForTimeout(200);
	};
	const all = (await apiGet('/jobs?limit=1000')).jobs.map((j) => j.id);
	await open('#/jobs?limit=3');
	const seen = [...await ids()];
	let pages = 1;
	while (await page.locator('#history-older').count()) {
		const before = seen[seen.length - 1];
		await page.click('#history-older');
		await page.waitForFunction((b) => location.hash.includes('before=' + b) && document.querySelector('#history tbody tr[data-job]') &&
			Number(document.querySelector('#history tbody tr[data-job]').dataset.job) < b, before, { timeout: 5000 });
		seen.push(...await ids());
		if (++pages > 50) break;
	}
	check(`history: "Older" pages through every job (${all.length} jobs, ${pages} pages of 3)`,
		JSON.stringify(seen) === JSON.stringify(all) && pages === Math.ceil(all.length / 3), `${seen} vs ${all}`);
	const same = async (hash, query, what) => {
		await open(hash);
		const want = (await apiGet('/jobs?' + query)).jobs.map((j) => j.id);
		const got = await ids();
		check(`history: ${what} (${got.length} jobs)`, JSON.stringify(got) === JSON.stringify(want) && want.length > 0, `${got} vs ${want}`);
	};
	await same('#/jobs?state=failed', 'state=failed', 'a deep link to the failed jobs lists them');
	await same('#/jobs?state=done&recipe=cpu-loop', 'state=done&recipe=cpu-loop', 'state and recipe combine');
	await same(`#/jobs?machine=${machine}`, `machine=${machine}`, 'jobs that ran on a machine');
	await same('#/jobs?q=%3Cimg', 'q=%3Cimg', 'text search, markup in a name found as text');
	check('history: no element made from a job name', (await page.locator('#view img').count()) === 0);
	const nameShown = await page.$$eval('#history td.name', (tds) => tds.map((t) => t.textContent));
	check('history: the name is shown as text', nameShown.some((n) => n.includes(hostile)), JSON.stringify(nameShown));
	// The form writes the URL.
	await open('#/jobs');
	await page.check('#h-states input[value="cancelled"]');
	await page.fill('#h-recipe', 'echo');
	await page.click('#history-filters button[type="submit"]');
	await page.waitForFunction(() => location.hash === '#/jobs?state=cancelled&recipe=echo', null, { timeout: 3000 }).catch(() => {});
	check('history: the filter form puts the filters in the URL', page.url().endsWith('#/jobs?state=cancelled&recipe=echo'), page.url());
	await page.waitForTimeout(300);
	const want = (await apiGet('/jobs?state=cancelled&recipe=echo')).jobs.map((j) => j.id);
	check(`history: and lists what they select (${want.length})`, JSON.stringify(await ids()) === JSON.stringify(want) && want.length > 0);
	// A filter the API refuses is named at its field.
	await page.goto(`${url}/#/jobs?recipe=no%20such`);
	await page.waitForFunction(() => document.querySelector('#history-error').textContent !== '', null, { timeout: 5000 }).catch(() => {});
	check('history: a refused filter is named', (await page.textContent('#history-error')).startsWith('recipe: ') &&
		(await page.getAttribute('#h-recipe', 'aria-invalid')) === 'true', await page.textContent('#history-error'));
	// Created and duration are the job's own.
	await open('#/jobs?state=done');
	const jobs = (await apiGet('/jobs?state=done')).jobs;
	const cols = await page.$$eval('#history tbody tr[data-job]', (trs) => trs.map((t) => ({ id: Number(t.dataset.job),
		created: t.children[5].dataset.t, dur: t.children[6].textContent })));
	const bad = cols.filter((c) => { const j = jobs.find((x) => x.id === c.id);
		return !j || c.created !== String(j.created_at) || c.dur !== (j.started_at ? dur(j.finished_at - j.started_at) : '—'); });
	check(`history: created and duration columns are the job's (${cols.length} rows)`, cols.length > 0 && !bad.length, JSON.stringify(bad));
}
