// job-page-checks.mjs: the job page of issue 19, run by dashboard.test.mjs
// on the 3-machine netns fleet: a failed job (why, on top; a red bar, not a
// full one; its spec), then a job whose three runs stream at once: the log
// stays on the run the user picked for 10 s, with a time on every line and
// follow/pause; after a reload the ETA is a number, and it and each cell's
// ETA are compared with the time the job and its cells really took.
const FAIL_KNOB = 'mthp_3kB';	// no such mTHP size: the run fails at its knobs

export async function failedJobChecks(page, { check, apiPost, apiGet, until, url, machines, shot }) {
	const made = await apiPost('/jobs', { recipe: 'cpu-loop', preset: 'test', machines: { names: [machines[0]] },
		knobs: { [FAIL_KNOB]: 'always' }, repetitions: { iterations: 1, boots: 2 } });
	check('failed job: submitted', made.status === 201, JSON.stringify(made.body));
	const id = made.body.id;
	const end = await until(async () => { const j = await apiGet(`/jobs/${id}`); return j.state !== 'queued' && j.state !== 'running' ? j : null; },
		60000, 'the failing job');
	check('failed job: it failed, 0/2 done', end.state === 'failed' && end.runs_done === 0 && end.runs_total === 2, JSON.stringify(end));
	await page.goto(`${url}/#/job/${id}`);
	await page.waitForFunction(() => /run/.test(document.querySelector('#job-reason')?.textContent || ''), null, { timeout: 5000 }).catch(() => {});
	const why = await page.textContent('#job-reason');
	check('failed job: the reason is shown and names the knob', why.includes('3kB') && /2 of 2 runs/.test(why), why);
	const yReason = (await page.locator('#job-reason').boundingBox()).y;
	const yGrid = (await page.locator('#grid').boundingBox()).y;
	check('failed job: the reason is at the top, above the matrix', yReason < yGrid && yReason < 300, `${yReason} vs ${yGrid}`);
	const bar = await page.$eval('.progwrap .progress', (p) => ({ w: p.getBoundingClientRect().width,
		segs: [...p.querySelectorAll('.seg')].map((s) => ({ seg: s.dataset.seg, w: s.getBoundingClientRect().width, bg: getComputedStyle(s).backgroundColor })) }));
	const done = bar.segs.filter((s) => s.seg === 'done');
	const failed = bar.segs.find((s) => s.seg === 'failed');
	check('failed job at 0/2: no done segment, the bar is the failed segment (red)', done.length === 0 && failed &&
		Math.abs(failed.w - bar.w) < 2 && failed.bg === 'rgb(207, 34, 46)', JSON.stringify(bar));
	check('failed job: the text says 0/2 done, 2 failed', /^0\/2 done · 2 failed/.test(await page.textContent('#progress-text')),
		await page.textContent('#progress-text'));
	const knobs = await page.textContent('#job-spec dd[data-key="knobs"]');
	const reps = await page.textContent('#job-spec dd[data-key="repetitions"]');
	check('failed job: the spec shows knobs and repetitions', knobs === `${FAIL_KNOB}=always` && /boots 2/.test(reps) && /iterations 1/.test(reps),
		`${knobs} | ${reps}`);
	await shot('job-failed');
	// A suite's entries are part of its spec, each with its own recipe and matrix.
	const suite = await apiPost('/jobs', { suite: [{ recipe: 'echo', params: { msg: 'a' } },
		{ recipe: 'cpu-loop', preset: 'test', matrix: { loops: [1000, 2000] } }], machines: { names: [machines[0]] } });
	check('suite job: submitted', suite.status === 201, JSON.stringify(suite.body));
	await page.goto(`${url}/#/job/${suite.body.id}`);
	await page.waitForSelector('#job-spec dd[data-key="suite"] li', { timeout: 5000 }).catch(() => {});
	const entries = await page.$$eval('#job-spec dd[data-key="suite"] li', (ls) => ls.map((l) => l.textContent));
	check('suite job: the spec lists each entry with its recipe and matrix', entries.length === 2 && entries[0].startsWith('recipe: echo') &&
		entries[0].includes('params: msg=a') && entries[1].startsWith('recipe: cpu-loop (preset test)') && entries[1].includes('matrix: loops: 1000, 2000'),
		JSON.stringify(entries));
	await apiPost(`/jobs/${suite.body.id}/cancel`);
}

export async function liveJobChecks(page, { check, apiPost, apiGet, until, sleep, url, cls, shot }) {
	// ~20 iterations of about a second each, one stdout line per iteration;
	// 6 runs on 3 machines: two waves of three runs streaming at once.
	const job = { recipe: 'cpu-loop', name: 'three streams', machines: { class: cls },
		matrix: { loops: [90000000, 100000000, 110000000] }, repetitions: { iterations: 20, boots: 2 } };
	const made = await apiPost('/jobs', job);
	check('live job: submitted', made.status === 201, JSON.stringify(made.body));
	const id = made.body.id;
	// opened once the three run: "newest running" is then one run for sure
	// (opened before, the log rightly stays on the first to start until it
	// ends, and which run that is depends on the claim order under load)
	await until(async () => ((await apiGet(`/jobs/${id}/runs`)).runs || []).filter((r) => r.state === 'running').length === 3,
		30000, 'three running runs');
	await page.goto(`${url}/#/job/${id}`);
	await page.waitForSelector('#job-spec', { timeout: 5000 });
	check('live job: the spec shows the matrix', (await page.textContent('#job-spec dd[data-key="matrix"]')) ===
		'loops: 90000000, 100000000, 110000000');
	await page.waitForFunction(() => document.querySelectorAll('#runs tbody tr[data-state="running"]').length === 3, null, { timeout: 30000 });
	// Left alone, the log shows the newest running run and stays on it.
	await page.waitForFunction(() => document.querySelector('#log').dataset.run !== '', null, { timeout: 3000 });
	const auto = await page.evaluate(() => ({ run: Number(document.querySelector('#log').dataset.run),
		newest: Math.max(...[...document.querySelectorAll('#runs tbody tr[data-state="running"]')].map((t) => Number(t.dataset.run))) }));
	check('log: by default on the newest running run', auto.run === auto.newest, JSON.stringify(auto));
	// Pin the oldest running run; watch 10 s while all three stream.
	const pinned = await page.evaluate(() => Math.min(...[...document.querySelectorAll('#runs tbody tr[data-state="running"]')].map((t) => Number(t.dataset.run))));
	await page.selectOption('#log-run', String(pinned));
	const count = () => page.evaluate(() => Object.fromEntries([...window.bf.state.logs].map(([k, v]) => [k, v.length])));
	const before = await count();
	const seen = new Set();
	let pausedOk = null, resumedOk = null;
	const t0 = Date.now();
	while (Date.now() - t0 < 10000) {
		seen.add(await page.evaluate(() => document.querySelector('#log').dataset.run));
		const el = Date.now() - t0;
		if (el > 3000 && pausedOk === null) {
			await page.click('#log-follow');
			const n0 = await page.locator('#log .line').count();
			await sleep(2500);
			const n1 = await page.locator('#log .line').count();
			const btn = await page.textContent('#log-follow');
			pausedOk = { n0, n1, btn };
			await page.click('#log-follow');
			await sleep(300);
			resumedOk = await page.locator('#log .line').count();
		}
		await sleep(200);
	}
	const after = await count();
	const running = await apiGet(`/jobs/${id}/runs`);
	const streamed = Object.keys(after).filter((k) => running.runs.some((r) => String(r.id) === k) && after[k] > (before[k] || 0));
	check(`log: pinned to run ${pinned} for 10 s (${seen.size} run shown)`, seen.size === 1 && seen.has(String(pinned)), [...seen].join(','));
	check(`log: three runs streamed meanwhile (${streamed.join(', ')})`, streamed.length >= 3, JSON.stringify({ before, after }));
	check('log: pause holds new lines back and says how many', pausedOk && pausedOk.n1 === pausedOk.n0 && /^Follow \(\d+ new\)$/.test(pausedOk.btn),
		JSON.stringify(pausedOk));
	check('log: follow shows them again', pausedOk && resumedOk > pausedOk.n1, `${resumedOk} vs ${pausedOk && pausedOk.n1}`);
	const stamps = await page.$$eval('#log .line:not(.dropped) .ts', (ts) => ts.map((t) => t.textContent));
	check(`log: every line has its time (${stamps.length} lines)`, stamps.length > 5 && stamps.every((s) => /^\d\d:\d\d:\d\d\.\d{3}$/.test(s)),
		stamps.slice(-3).join(' '));
	await shot('job-live');
	// Once the first wave has ended, a reload must not show "—" for the ETA.
	await until(async () => (await apiGet(`/jobs/${id}`)).runs_done >= 3, 120000, 'the first wave');
	await page.waitForFunction(() => document.querySelectorAll('#runs tbody tr[data-state="running"]').length >= 2, null, { timeout: 20000 });
	await page.reload();
	const shown = await page.waitForFunction(() => {
		const p = document.querySelector('#progress-text');
		return p && p.dataset.eta ? { eta: Number(p.dataset.eta), text: p.textContent, el: Number(p.dataset.elapsed),
			cells: Object.fromEntries([...document.querySelectorAll('#grid .cell')].filter((c) => c.dataset.eta).map((c) => [c.dataset.cell, Number(c.dataset.eta)])) } : null;
	}, null, { timeout: 3000 }).then((hd) => hd.jsonValue()).catch(() => null);
	const at = Date.now() / 1000;
	check('ETA: a number right after a reload', shown !== null && /ETA \d/.test(shown.text), shown && shown.text);
	const end = await until(async () => { const j = await apiGet(`/jobs/${id}`); return j.state === 'done' ? j : null; }, 120000, 'the live job');
	const runs = (await apiGet(`/jobs/${id}/runs`)).runs;
	const truth = Math.max(...runs.map((r) => r.finished_at)) - at;
	const first = Math.min(...runs.map((r) => r.started_at));
	if (shown) {
		console.log(`ETA after reload: shown ${shown.eta.toFixed(1)} s, true ${truth.toFixed(1)} s (ratio ${(shown.eta / truth).toFixed(2)})`);
		check('ETA: within a factor of 2 of the time the job really took', shown.eta <= 2 * truth + 1 && shown.eta >= truth / 2 - 1,
			`${shown.eta} vs ${truth}`);
		const bad = [];
		for (const [c, e] of Object.entries(shown.cells)) {
			const t = Math.max(...runs.filter((r) => r.cell_index === Number(c)).map((r) => r.finished_at)) - at;
			console.log(`ETA cell ${c}: shown ${e.toFixed(1)} s, true ${t.toFixed(1)} s`);
			if (!(e <= 2 * t + 1 && e >= t / 2 - 1)) bad.push(`${c}: ${e} vs ${t}`);
		}
		check(`ETA: each open cell's within a factor of 2 (${Object.keys(shown.cells).length} cells)`, Object.keys(shown.cells).length >= 2 && !bad.length, bad.join('; '));
		check('elapsed: since the first run began', Math.abs(shown.el - (at - first)) < 3, `${shown.el} vs ${at - first}`);
	}
	await page.waitForFunction(() => document.querySelectorAll('#runs tbody tr[data-state="done"]').length === 6, null, { timeout: 5000 });
	const durs = await page.$$eval('#runs tbody tr[data-run]', (trs) => trs.map((tr) => [Number(tr.dataset.run), tr.querySelector('td.dur').textContent]));
	const want = (r) => { const s = Math.round(r.finished_at - r.started_at); return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`; };
	check('duration column: each run\'s finished_at - started_at', durs.length === 6 && durs.every(([rid, txt]) => txt === want(runs.find((r) => r.id === rid))),
		JSON.stringify(durs));
	check('the live job ended done', end.state === 'done');
	return id;
}
