// a11y-checks.mjs: issue 19's accessibility, run by dashboard.test.mjs: in
// prefers-color-scheme: dark every visible text of the fleet, job, results
// and history pages is at 4.5:1 or more against the background it is drawn
// on (computed from the computed styles, as the fleet badge check does);
// the cells and run squares of a job are reached with Tab and Enter on a
// run square shows that run's log.
import { contrast } from './fleet-checks.mjs';

// Every element with its own visible text outside SVG: its colour and the
// first opaque background behind it.
function texts() {
	const opaque = (c) => { const m = c.match(/[\d.]+/g); return m && (m.length < 4 || Number(m[3]) > 0); };
	const out = [];
	for (const el of document.body.querySelectorAll('*')) {
		if (el.closest('svg, option, dialog:not([open]), [hidden]')) continue;
		if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
		const r = el.getBoundingClientRect();
		if (!r.width || !r.height) continue;
		const cs = getComputedStyle(el);
		if (cs.visibility !== 'visible' || Number(cs.opacity) < 1) continue;
		let bg = null;
		for (let a = el; a && !bg; a = a.parentElement) {
			const b = getComputedStyle(a).backgroundColor;
			if (opaque(b)) bg = b;
		}
		out.push({ what: el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : ''),
			text: [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim().slice(0, 30),
			fg: cs.color, bg: bg || getComputedStyle(document.documentElement).backgroundColor });
	}
	return out;
}

// Until the page has not changed for 300 ms (at most 3 s): its data is
// drawn. A fixed 1.2 s per page was slower, and no surer on a loaded box.
function settle(page) {
	return page.evaluate(() => new Promise((res) => {
		let t = null;
		const done = () => { obs.disconnect(); clearTimeout(cap); res(); };
		const obs = new MutationObserver(() => { clearTimeout(t); t = setTimeout(done, 300); });
		const cap = setTimeout(done, 3000);
		obs.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
		t = setTimeout(done, 300);
	}));
}

export async function a11yChecks(page, { check, url, jobId, liveJobId, shot }) {
	await page.emulateMedia({ colorScheme: 'dark' });
	// Each page's data drawn first (the results page reads a report before
	// it draws: under load that took longer than settle's 3 s, and the
	// contrast check then saw 15 texts, CI 2026-12-07), then settled.
	for (const [hash, name, drawn] of [['#/', 'fleet', '#machines tr[data-machine]'],
		[`#/job/${liveJobId}`, 'job', '#grid .cell .run'],
		[`#/job/${jobId}/results?baseline=passes:1`, 'results', 'section.metric svg.bars'],
		['#/jobs', 'history', '#history tbody tr[data-job]']]) {
		await page.goto(`${url}/${hash}`);
		await page.waitForSelector('#live[data-state="live"]', { timeout: 10000 });
		await page.waitForSelector(drawn, { timeout: 30000 }).catch(() => {});
		await settle(page);
		const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
		const list = await page.evaluate(texts);
		const low = list.map((t) => ({ ...t, c: contrast(t.fg, t.bg) })).filter((t) => !(t.c >= 4.5))
			.map((t) => `${t.what} "${t.text}" ${t.c.toFixed(2)} (${t.fg} on ${t.bg})`);
		check(`dark ${name}: the page is dark (${dark})`, contrast(dark, 'rgb(0, 0, 0)') < 1.5, dark);
		check(`dark ${name}: every text at 4.5:1 or more (${list.length} checked)`, list.length > 20 && low.length === 0, low.slice(0, 8).join('; '));
		if (name === 'job') await shot('dark-job');
	}
	await page.emulateMedia({ colorScheme: 'light' });
	// Keyboard: Tab from a cell reaches its first run square; Enter there
	// shows that run's log.
	await page.goto(`${url}/#/job/${liveJobId}`);
	await page.waitForSelector('#grid .cell .run', { timeout: 5000 });
	const reach = await page.$$eval('#grid .cell, #grid .run', (els) => els.every((e) => e.tabIndex === 0));
	check('keyboard: every cell and run square is in the tab order', reach);
	await page.focus('#grid .cell:nth-child(2)');
	await page.keyboard.press('Tab');
	const target = await page.evaluate(() => {
		const a = document.activeElement;
		const first = document.querySelector('#grid .cell:nth-child(2) .run');
		return a === first ? Number(a.dataset.run) : null;
	});
	check('keyboard: Tab from a cell goes to its first run square', target !== null);
	await page.keyboard.press('Enter');
	const shown = await page.waitForFunction((r) => document.querySelector('#log').dataset.run === String(r) &&
		document.querySelector('#log').dataset.mode === 'pinned', target, { timeout: 3000 }).then(() => true).catch(() => false);
	check(`keyboard: Enter on run ${target}'s square shows its log`, shown);
}
