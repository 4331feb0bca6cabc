// repro-checks.mjs: issue 19's reproduction page, run by dashboard.test.mjs:
// the job's own signed bundle compared with the job (compare-only, nothing
// runs): the signature status, the verdict grid, original vs reproduced
// with CIs and the environment diff, each as GET /reproductions/{id} has it.
export async function reproChecks(page, { check, apiGet, url, jobId, shot }) {
	// the bundle as served, byte for byte: its hashes are over its text
	const bundle = await (await fetch(`${url}/api/v1/jobs/${jobId}/bundle`)).text();
	const r = await fetch(`${url}/api/v1/reproductions`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
		body: `{"bundle":${bundle},"compare_job":${jobId}}` });
	const made = { status: r.status, body: await r.json().catch(() => null) };
	check('repro: a compare-only reproduction of the job\'s own bundle', made.status === 201, JSON.stringify(made.body).slice(0, 200));
	const id = made.body.id;
	const rep = await apiGet(`/reproductions/${id}`);
	await page.goto(`${url}/#/reproductions/${id}`);
	await page.waitForSelector('#verdicts', { timeout: 10000 }).catch(() => {});
	check('repro: the signature status is the API\'s', (await page.getAttribute('#repro-trust .badge', 'data-trust')) === rep.trust.state &&
		(await page.textContent('#repro-trust')).includes(rep.trust.text), `${rep.trust.state} ${rep.trust.text}`);
	const grid = await page.$$eval('#verdicts td.verdict', (tds) => tds.map((t) => `${t.dataset.cell}/${t.dataset.metric}=${t.dataset.verdict}`));
	const want = rep.cells.flatMap((c) => c.metrics.map((m) => `${c.cell_index}/${m.metric}=${m.verdict}`));
	check(`repro: the verdict grid is the API's (${want.length} verdicts)`, want.length > 0 && JSON.stringify(grid.sort()) === JSON.stringify(want.sort()),
		`${grid.slice(0, 4)} vs ${want.slice(0, 4)}`);
	const det = await page.$$eval('#repro-detail tbody tr', (trs) => trs.map((t) => [t.dataset.cell, t.dataset.metric,
		t.children[2].dataset.mean, t.children[3].dataset.mean, t.children[2].textContent]));
	const wantDet = rep.cells.flatMap((c) => c.metrics.map((m) => [String(c.cell_index), m.metric, String(m.original.mean), String(m.reproduced.mean)]));
	check('repro: original vs reproduced means, with their CIs', det.length === wantDet.length &&
		det.every((d, i) => d.slice(0, 4).join() === wantDet[i].join() && /\[.*\] n=\d+/.test(d[4])), JSON.stringify(det[0]));
	check('repro: the environment diff is the stored one', Number(await page.getAttribute('#repro-env', 'data-n')) === rep.environment_diff.length,
		`${rep.environment_diff.length}`);
	const s = rep.summary;
	check('repro: the summary counts', (await page.textContent('#repro-summary')) === `${s.reproduced} reproduced · ${s.differs} differ · ${s.inconclusive} inconclusive`);
	await shot('reproduction');
	// the list page (GET /reproductions): this one first, as the API lists it, linked
	const list = await apiGet('/reproductions?limit=1');
	check('repros: the list API has it first', list.reproductions.length === 1 && list.reproductions[0].id === id &&
		list.reproductions[0].mode === 'compare' && list.reproductions[0].job_id === jobId, JSON.stringify(list).slice(0, 300));
	await page.goto(`${url}/#/reproductions`);
	await page.waitForSelector(`#repros tr[data-repro="${id}"]`, { timeout: 5000 }).catch(() => {});
	const row = await page.$eval(`#repros tr[data-repro="${id}"]`, (tr) => ({ link: tr.querySelector('a').getAttribute('href'),
		cells: [...tr.children].map((td) => td.textContent), trust: tr.querySelector('[data-trust]').dataset.trust })).catch(() => null);
	check('repros: the list page shows it, linked, with mode, job and signature', row && row.link === `#/reproductions/${id}` &&
		row.cells[4] === 'compare' && row.cells[5] === String(jobId) && row.trust === rep.trust.state, JSON.stringify(row));
	await page.goto(`${url}/#/reproductions/999999`);
	await page.waitForFunction(() => document.querySelector('#repro-error')?.textContent, null, { timeout: 5000 }).catch(() => {});
	check('repro: an unknown reproduction is said so', (await page.textContent('#repro-error')) === 'There is no reproduction 999999.');
}
