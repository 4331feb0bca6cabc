// fleet-checks.mjs: the fleet page for daily use (issue 19), run by
// dashboard.test.mjs on its page: the summary counts against the API, a
// colour per state, status badges at 4.5:1 or better, one short line per
// machine with the command line behind an expander, Probe doing its POST,
// and a card per machine on a phone (390x844) within 1.5 screens.

// WCAG relative luminance and contrast of two computed rgb() colours.
function lum(rgb) {
	const c = rgb.match(/[\d.]+/g).slice(0, 3).map((v) => {
		const s = Number(v) / 255;
		return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
	});
	return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
export function contrast(fg, bg) {
	const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
	return (a + 0.05) / (b + 0.05);
}

export async function fleetChecks(page, { check, apiGet, machines, sleep }) {
	const api = (await apiGet('/machines')).machines;
	// Summary: a count per state, matching the API, each its own colour.
	const counts = await page.$$eval('#fleet-summary .count', (els) => els.map((e) => ({
		state: e.dataset.state, n: Number(e.dataset.count), text: e.textContent,
		bg: getComputedStyle(e).backgroundColor, fg: getComputedStyle(e).color })));
	const states = ['running', 'idle', 'booting', 'offline', 'quarantined'];
	check('the fleet summary has a count for each state',
		JSON.stringify(counts.map((c) => c.state)) === JSON.stringify(states), JSON.stringify(counts.map((c) => c.state)));
	for (const c of counts) {
		const want = api.filter((m) => m.state === c.state).length;
		check(`summary count ${c.state} is ${want}`, c.n === want && c.text.startsWith(want + ' '), c.text);
	}
	check('each summary state has its own colour', new Set(counts.map((c) => c.bg)).size === states.length,
		counts.map((c) => c.bg).join(' '));
	// Every badge on the page (summary, machines, jobs) and each state's
	// colour on a probe badge: at least 4.5:1 from the computed styles.
	const probes = await page.evaluate(() => {
		const out = [];
		const all = ['queued', 'running', 'done', 'failed', 'boot-failed', 'lost', 'cancelled',
			'idle', 'booting', 'offline', 'quarantined'];
		const box = document.createElement('div');
		document.body.appendChild(box);
		for (const s of all) {
			const b = document.createElement('span');
			b.className = 'badge';
			b.dataset.state = s;
			b.textContent = s;
			box.appendChild(b);
		}
		for (const b of document.querySelectorAll('.badge')) {
			const cs = getComputedStyle(b);
			out.push({ state: b.dataset.state, fg: cs.color, bg: cs.backgroundColor, opacity: cs.opacity });
		}
		box.remove();
		return out;
	});
	const low = probes.filter((p) => p.opacity !== '1' || contrast(p.fg, p.bg) < 4.5)
		.map((p) => `${p.state} ${contrast(p.fg, p.bg).toFixed(2)}`);
	check(`status badges are at 4.5:1 or more (${probes.length} checked)`, probes.length >= 11 && low.length === 0, low.join(', '));
	const offQ = probes.find((p) => p.state === 'offline'), q = probes.find((p) => p.state === 'quarantined');
	check('offline and quarantined have different colours', offQ.bg !== q.bg, offQ.bg);

	// One line per machine at 1280x800: the command line is cut, whole
	// behind its expander.
	for (const m of api.filter((x) => machines.includes(x.name))) {
		const row = page.locator(`#machines tr[data-machine="${m.name}"]`);
		const hgt = (await row.boundingBox()).height;
		check(`machine ${m.name}: its row is one line (${Math.round(hgt)} px)`, hgt <= 80, hgt);
		const cmd = (m.fingerprint && m.fingerprint.cmdline) || '';
		const cell = row.locator('td[data-label="cmdline"]');
		if (cmd.length > 48) {
			const sum = await cell.locator('summary').textContent();
			check(`machine ${m.name}: the command line is cut`, sum.length <= 45 && sum.endsWith('…') && cmd.startsWith(sum.slice(0, -1)), sum);
			await cell.locator('summary').click();
			await sleep(100);
			check(`machine ${m.name}: the expander shows it whole`, (await cell.locator('details > span').innerText()) === cmd);
			await cell.locator('summary').click();
		} else {
			check(`machine ${m.name}: a short command line is shown as it is`, (await cell.innerText()) === (cmd || '—'), cmd);
		}
		check(`machine ${m.name}: a Probe button`, (await row.locator('button.probe').count()) === 1);
		check(`machine ${m.name}: Clear only when quarantined`,
			(await row.locator('button.clear').count()) === (m.state === 'quarantined' ? 1 : 0));
	}
	// Probe: the POST goes out, succeeds, and the row says so.
	const name = machines[0];
	const [resp] = await Promise.all([
		page.waitForResponse((r) => r.url().endsWith(`/api/v1/machines/${name}/probe`) && r.request().method() === 'POST'),
		page.click(`#machines tr[data-machine="${name}"] button.probe`),
	]);
	check('Probe posts /machines/NAME/probe and gets 202', resp.status() === 202, resp.status());
	await page.waitForFunction((n) => /probe asked for/.test(document.querySelector(`#machines tr[data-machine="${n}"] .note`)?.textContent || ''),
		name, { timeout: 3000 }).then(() => check('the row says the probe was asked for', true))
		.catch(() => check('the row says the probe was asked for', false));

	// A phone: a card per machine, the list within 1.5 screens for the fleet.
	await page.setViewportSize({ width: 390, height: 844 });
	await sleep(300);
	const cards = await page.$$eval('#machines tbody tr[data-machine]', (rs) => rs.map((r) => ({
		h: r.getBoundingClientRect().height, w: r.getBoundingClientRect().width, display: getComputedStyle(r).display })));
	const tallest = Math.max(...cards.map((c) => c.h));
	check(`phone: machines are cards (${cards.map((c) => c.display).join(',')})`, cards.every((c) => c.display === 'grid'));
	check(`phone: no machine card is taller than 280 px (tallest ${Math.round(tallest)})`, tallest <= 280, tallest);
	check('phone: no card is wider than the screen', cards.every((c) => c.w <= 390), cards.map((c) => c.w).join(','));
	const per = cards.reduce((a, c) => a + c.h, 0) / cards.length;
	check(`phone: 3 machines fit in 1.5 screens (${Math.round(3 * per)} px)`, 3 * per <= 1.5 * 844);
	const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
	check('phone: the page does not scroll sideways', overflow <= 390, overflow);
	await page.setViewportSize({ width: 1280, height: 800 });
}
