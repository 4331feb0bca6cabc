// dom.js: the only way the dashboard builds nodes. Text goes in as text
// nodes (never parsed as HTML), attributes through setAttribute, so a
// value from the store cannot become markup or script.
const SVGNS = 'http://www.w3.org/2000/svg';

function add(el, kids) {
	for (const k of kids.flat(Infinity)) {
		if (k == null || k === false) continue;
		el.appendChild(k instanceof Node ? k : document.createTextNode(String(k)));
	}
	return el;
}

function props(el, p) {
	for (const [k, v] of Object.entries(p || {})) {
		if (v == null || v === false) continue;
		if (k === 'on') {
			for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
		} else if (k === 'text') {
			el.textContent = String(v);
		} else if (k === 'style') {
			for (const [sk, sv] of Object.entries(v)) el.style.setProperty(sk, String(sv));
		} else if (k === 'value' && 'value' in el) {
			el.value = String(v);
		} else if (/^on/i.test(k) || k === 'srcdoc') {
			throw new Error('dom: refusing attribute ' + k);
		} else {
			el.setAttribute(k, v === true ? '' : String(v));
		}
	}
	return el;
}

// h('td', {class: 'num'}, 'text', child...)
export function h(tag, p, ...kids) {
	return add(props(document.createElement(tag), p), kids);
}

// svg('rect', {x: 1, ...}, kids...)
export function svg(tag, p, ...kids) {
	return add(props(document.createElementNS(SVGNS, tag), p), kids);
}

export function clear(el, ...kids) {
	el.replaceChildren();
	return add(el, kids);
}

export const fmtTime = (t) => (t ? new Date(t * 1000).toISOString().replace('T', ' ').slice(0, 19) : '—');

export function fmtAgo(t) {
	if (!t) return 'never';
	const s = Math.max(0, Math.round(Date.now() / 1000 - t));
	if (s < 60) return s + ' s ago';
	if (s < 3600) return Math.floor(s / 60) + ' min ago';
	if (s < 86400) return Math.floor(s / 3600) + ' h ago';
	return fmtTime(t);
}

export function fmtDur(s) {
	if (s == null) return '—';
	s = Math.round(s);
	if (s < 60) return s + ' s';
	if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
	return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
}

// Numbers as a person reads them in a table: 4 significant digits.
export function fmtNum(x) {
	if (x == null || !Number.isFinite(x)) return 'n/a';
	const a = Math.abs(x);
	if (a !== 0 && (a >= 1e6 || a < 1e-3)) return x.toExponential(3);
	return Number(x.toPrecision(4)).toString();
}
