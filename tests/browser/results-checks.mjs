// results-checks.mjs: the results page of issue 19, run by
// dashboard.test.mjs on a finished job: whole cell labels in the charts
// (no "mb=128 p…"), the % change chart against the report JSON (bars, CIs,
// ▲/▼ better/worse words), a CI below zero commented, each cell's evidence
// warnings beside its numbers, and the baseline picked in the page kept in
// the URL across a reload.
function changeWord(c) {
	const bounded = !c.pct_ci_unbounded && c.pct_ci_lo != null && c.pct_ci_hi != null;
	const arrow = c.pct_change > 0 ? '\u25b2' : c.pct_change < 0 ? '\u25bc' : '';
	if (c.significant) return c.mark === '* better' ? arrow + ' better' : c.mark === '* worse' ? arrow + ' worse' : arrow;
	return !bounded ? 'CI unbounded' : c.pct_ci_lo < 0 && c.pct_ci_hi > 0 ? 'CI includes 0' : 'not significant';
}

export async function resultsChecks(page, { check, apiGet, url, jobId, baseline, other }) {
	const rep = await apiGet(`/jobs/${jobId}/report?format=json&columns=none&baseline=${encodeURIComponent(baseline)}`);
	let labelsOk = true, changeOk = true, below = true, evid = true, nwarn = 0;
	const why = [];
	for (const m of rep.metrics) {
		const sel = `section.metric[data-metric="${m.name}"]`;
		const labels = await page.$$eval(`${sel} svg.bars text.rowlabel`, (ts) => ts.map((t) => ({ want: t.dataset.label,
			shown: [...t.querySelectorAll('tspan')].map((s) => s.textContent).join(' ') })));
		const squash = (x) => x.replace(/\s+/g, '');
		if (labels.length !== m.rows.length || labels.some((l, i) => l.want !== m.rows[i].cell || squash(l.shown) !== squash(l.want) || l.shown.includes('\u2026'))) {
			labelsOk = false; why.push(`${m.name} labels ${JSON.stringify(labels)}`);
		}
		const cmp = m.rows.filter((r) => r.compare && r.compare.pct_change != null);
		const bars = await page.$$eval(`${sel} svg.change rect.chg`, (rs) => rs.map((r) => ({ cell: r.dataset.cell, pct: r.dataset.pct })));
		const words = await page.$$eval(`${sel} svg.change text.mark`, (ts) => ts.map((t) => t.textContent));
		if (bars.length !== cmp.length || cmp.some((r, i) => bars[i].cell !== r.cell || bars[i].pct !== String(r.compare.pct_change) ||
			words[i] !== changeWord(r.compare))) {
			changeOk = false; why.push(`${m.name} change ${JSON.stringify({ bars, words })}`);
		}
		const notes = await page.$$eval(`${sel} svg.bars text.below0`, (ts) => ts.map((t) => t.dataset.cell));
		const wantNotes = m.rows.filter((r) => r.ci_lo != null && r.ci_lo < 0 && r.mean > 0).map((r) => r.cell);
		if (JSON.stringify(notes) !== JSON.stringify(wantNotes)) { below = false; why.push(`${m.name} below0 ${notes} vs ${wantNotes}`); }
		const ev = await page.$$eval(`${sel} table.report tbody tr td.cell-evidence`, (tds) => tds.map((td) => [...td.querySelectorAll('.warn')].map((w) => w.textContent)));
		m.rows.forEach((r, i) => {
			const want = (rep.warnings || []).filter((w) => w.startsWith(`cell ${r.cell}: `) || w.startsWith(`cell ${r.cell} run `)).map((w) => '\u26a0 ' + w);
			nwarn += want.length;
			if (JSON.stringify(ev[i] || []) !== JSON.stringify(want)) { evid = false; why.push(`${m.name} evidence ${r.cell}`); }
		});
	}
	check('results: every chart row carries its whole cell label', labelsOk, why.join('; '));
	check('results: a % change chart per metric with the report\'s changes, CIs and marks', changeOk, why.join('; '));
	check('results: a mean CI below zero is commented, and only then', below, why.join('; '));
	check(`results: each cell's evidence warnings beside its numbers (${nwarn} shown)`, evid, why.join('; '));
	// The baseline picked in the page goes into the URL and stays there.
	await page.selectOption('#baseline', other);
	await page.waitForURL((u) => u.hash === `#/job/${jobId}/results?baseline=${other}`, { timeout: 3000 }).catch(() => {});
	check('results: the baseline picked is in the URL, readable', page.url().endsWith(`#/job/${jobId}/results?baseline=${other}`), page.url());
	const again = await apiGet(`/jobs/${jobId}/report?format=json&columns=none&baseline=${encodeURIComponent(other)}`);
	const first = again.metrics[0];
	await page.reload();
	// The reloaded page reads the report again before it draws: on a
	// loaded CI box that took more than the 10 s an svg.change was once
	// given (an empty list, CI 2026-12-07). Wait for this metric's rows.
	await page.waitForFunction((name) => document.querySelectorAll(
		`section.metric[data-metric="${name}"] svg.change text.rowlabel`).length > 0,
		first.name, { timeout: 30000 }).catch(() => {});
	const vs = await page.$$eval(`section.metric[data-metric="${first.name}"] svg.change text.rowlabel`, (ts) => ts.map((t) => t.dataset.label));
	check('results: after a reload the page keeps that baseline', (await page.inputValue('#baseline')) === other &&
		JSON.stringify(vs) === JSON.stringify(first.rows.filter((r) => r.compare && r.compare.pct_change != null).map((r) => `${r.cell} vs ${r.baseline_cell || 'baseline'}`)),
		JSON.stringify(vs));
}
