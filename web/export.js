// export.js: what leaves the dashboard: text to the clipboard, a file to
// download (CSV, SVG). The text is always what the coordinator rendered
// (GET /jobs/{id}/report?format=...), never rebuilt here. A chart's SVG is
// a copy of the node shown, with the styles the page's CSS gave it written
// inline, so the file looks the same outside the page.
const SVGNS = 'http://www.w3.org/2000/svg';
const STYLE_PROPS = ['fill', 'stroke', 'stroke-width', 'stroke-dasharray', 'opacity',
	'font-family', 'font-size', 'font-weight', 'text-anchor'];

// Put text on the clipboard; resolves true, or false when the browser
// refuses (no permission, not a secure context).
export async function copyText(text) {
	try {
		await navigator.clipboard.writeText(text);
		return true;
	} catch (e) {
		return false;
	}
}

// Offer text as a file called name.
export function download(name, type, text) {
	const url = URL.createObjectURL(new Blob([text], { type }));
	const a = document.createElement('a');
	a.setAttribute('href', url);
	a.setAttribute('download', name);
	a.style.setProperty('display', 'none');
	document.body.appendChild(a);
	a.click();
	a.remove();
	setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// A standalone SVG document of chart (an <svg> in the page).
export function svgText(chart) {
	const copy = chart.cloneNode(true);
	const src = [chart, ...chart.querySelectorAll('*')];
	const dst = [copy, ...copy.querySelectorAll('*')];
	src.forEach((el, i) => {
		const cs = getComputedStyle(el);
		for (const p of STYLE_PROPS) {
			const v = cs.getPropertyValue(p);
			if (v) dst[i].style.setProperty(p, v);
		}
	});
	copy.setAttribute('xmlns', SVGNS);
	const vb = (chart.getAttribute('viewBox') || '').split(/\s+/).map(Number);
	if (vb.length === 4 && vb.every(Number.isFinite)) {
		copy.setAttribute('width', String(vb[2]));
		copy.setAttribute('height', String(vb[3]));
	}
	return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(copy) + '\n';
}

// A file name part from user text: letters, digits, '.', '-', '_' only.
export const fileSafe = (s) => String(s).replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
