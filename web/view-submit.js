// view-submit.js: submit a job. Paste or choose a job JSON and load it into
// the form, or fill the fields; each of the API's errors (detail.errors)
// appears next to the field it names ("matrix.mb[1]" -> the matrix field).
import { api } from './api.js';
import { h, clear } from './dom.js';

// The job's top-level keys (common/job.h); JSON fields hold objects.
const FIELDS = [
	{ key: 'recipe', kind: 'select', hint: 'required' },
	{ key: 'name', kind: 'text', hint: 'optional, at most 200 bytes' },
	{ key: 'preset', kind: 'text', hint: 'optional, e.g. test' },
	{ key: 'machines', kind: 'json', hint: '{"class": "demo"} or {"names": ["h1"]}' },
	{ key: 'matrix', kind: 'json', hint: '{"axis": [values...]}' },
	{ key: 'params', kind: 'json', hint: 'fixed parameter values' },
	{ key: 'repetitions', kind: 'json', hint: '{"iterations": 3, "warmup": 1, "boots": 1}' },
	{ key: 'order', kind: 'text', hint: 'sequential or interleaved' },
];
const KNOWN = new Set(FIELDS.map((f) => f.key));

export function submitView(root) {
	const paste = h('textarea', { id: 'job-json', rows: 8, spellcheck: 'false', placeholder: '{"recipe": "page-touch", "machines": {"class": "demo"}, ...}' });
	const file = h('input', { type: 'file', accept: '.json,application/json', id: 'job-file' });
	const pasteErr = h('div', { class: 'err field-error', 'data-error-for': '(json)' });
	const form = h('form', { id: 'submit-form', novalidate: true });
	const formErr = h('div', { class: 'err field-error', 'data-error-for': '(form)' });
	const done = h('p', { class: 'ok', id: 'submit-ok' });
	const inputs = new Map(), errs = new Map();
	let extra = {};

	for (const f of FIELDS) {
		let input;
		if (f.kind === 'select') input = h('select', { name: f.key, id: 'f-' + f.key }, h('option', { value: '' }, '(choose)'));
		else if (f.kind === 'json') input = h('textarea', { name: f.key, id: 'f-' + f.key, rows: 2, spellcheck: 'false' });
		else input = h('input', { name: f.key, id: 'f-' + f.key, type: 'text', spellcheck: 'false' });
		const e = h('div', { class: 'err field-error', 'data-error-for': f.key, id: 'err-' + f.key });
		inputs.set(f.key, input);
		errs.set(f.key, e);
		form.append(h('div', { class: 'field', 'data-field': f.key },
			h('label', { for: 'f-' + f.key }, f.key), input, h('div', { class: 'hint' }, f.hint), e));
	}
	const extraNote = h('p', { class: 'hint' });
	form.append(extraNote, formErr, h('button', { type: 'submit', id: 'submit-button' }, 'Submit job'), done);

	root.append(h('section', {},
		h('h2', {}, 'Submit a job'),
		h('div', { class: 'cols' },
			h('div', { class: 'col' },
				h('h3', {}, 'Paste or choose a job'),
				paste, h('div', { class: 'row' }, file, h('button', { type: 'button', id: 'load-json' }, 'Load into the form')),
				pasteErr),
			h('div', { class: 'col' }, h('h3', {}, 'The job'), form))));

	api('/recipes').then((r) => {
		const sel = inputs.get('recipe');
		const cur = sel.value;
		for (const rec of r.recipes || []) {
			const name = typeof rec === 'string' ? rec : rec.name;
			sel.append(h('option', { value: name }, name));
		}
		if (cur) sel.value = cur;
	}).catch(() => {});

	function clearErrors() {
		for (const e of [...errs.values(), formErr, pasteErr]) e.textContent = '';
		for (const i of inputs.values()) i.removeAttribute('aria-invalid');
		done.textContent = '';
	}

	// A field may have several errors (matrix.mb[0], matrix.mb[2]): one line each.
	function showError(field, msg, noFocus) {
		const top = field ? field.split(/[.[]/)[0] : '';
		const e = errs.get(top) || formErr;
		const text = errs.has(top) || !field || msg.startsWith(field + ':') ? msg : field + ': ' + msg;
		e.append(h('div', { class: 'err-line', 'data-field': field || '' }, text));
		if (errs.has(top)) {
			inputs.get(top).setAttribute('aria-invalid', 'true');
			if (!noFocus) inputs.get(top).focus();
		}
	}
	// Every error of a refused job at its field; the first field gets the focus.
	function showErrors(e) {
		e.errors.forEach((x, i) => showError(x.field, x.error, i > 0));
		if (e.errorsTotal > e.errors.length)
			formErr.append(h('div', { class: 'err-line', id: 'errors-more' },
				`${e.errorsTotal - e.errors.length} more errors not shown: fix these and submit again.`));
	}

	function loadJob(obj) {
		clearErrors();
		if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
			pasteErr.textContent = 'A job is a JSON object.';
			return;
		}
		extra = {};
		for (const [k, v] of Object.entries(obj)) if (!KNOWN.has(k)) extra[k] = v;
		for (const f of FIELDS) {
			const v = obj[f.key];
			const input = inputs.get(f.key);
			if (v === undefined) input.value = '';
			else if (f.kind === 'json') input.value = JSON.stringify(v);
			else {
				if (f.kind === 'select' && ![...input.options].some((o) => o.value === String(v)))
					input.append(h('option', { value: String(v) }, String(v)));
				input.value = String(v);
			}
		}
		extraNote.textContent = Object.keys(extra).length ? 'Also sent as pasted: ' + Object.keys(extra).join(', ') : '';
	}

	let loaded = '';	// the pasted text the fields hold now
	function parsePaste(text) {
		try {
			loadJob(JSON.parse(text));
			loaded = text;
			return true;
		} catch (e) {
			pasteErr.textContent = 'Not JSON: ' + e.message;
			return false;
		}
	}
	// Pasted JSON fills the form as it is pasted, so Submit sends it
	// without "Load into the form" (which stays for edits after typing).
	paste.addEventListener('paste', () => setTimeout(() => { if (paste.value.trim()) parsePaste(paste.value); }, 0));

	root.querySelector('#load-json').addEventListener('click', () => parsePaste(paste.value));
	file.addEventListener('change', async () => {
		if (!file.files.length) return;
		const text = await file.files[0].text();
		paste.value = text;
		parsePaste(text);
	});

	// A live preview: the coordinator's planner on what the form holds
	// (POST /jobs?dry_run=1, nothing stored), after each pause in typing.
	const preview = h('div', { id: 'preview', class: 'small', role: 'status' });
	root.querySelector('#submit-button').before(preview);
	let pt = null, pseq = 0;
	function formJob() {
		const job = { ...extra };
		for (const f of FIELDS) {
			const raw = inputs.get(f.key).value.trim();
			if (raw === '') continue;
			try { job[f.key] = f.kind === 'json' ? JSON.parse(raw) : raw; } catch (e) { return null; }
		}
		return job;
	}
	async function updatePreview() {
		const seq = ++pseq;
		const job = formJob();
		if (!job || !job.recipe) { preview.textContent = ''; return; }
		try {
			const r = await api('/jobs?dry_run=1', { method: 'POST', body: job, quiet: true });
			if (seq !== pseq) return;
			preview.dataset.cells = r.cells; preview.dataset.runs = r.runs; preview.dataset.boots = r.boots;
			preview.textContent = `This job makes ${r.cells} cell${r.cells === 1 ? '' : 's'}, ${r.runs} run${r.runs === 1 ? '' : 's'}, ` +
				`${r.boots} boot${r.boots === 1 ? '' : 's'} (a reboot each on a machine with a boot configuration), ${r.iterations} iterations.`;
		} catch (e) {
			if (seq !== pseq) return;
			delete preview.dataset.runs;
			preview.textContent = 'Not yet a job: ' + e.message +
				(e.errorsTotal > 1 ? ` (and ${e.errorsTotal - 1} more)` : '');
		}
	}
	const schedule = () => { clearTimeout(pt); pt = setTimeout(updatePreview, 300); };
	form.addEventListener('input', schedule);
	form.addEventListener('change', schedule);
	paste.addEventListener('input', () => { clearTimeout(pt); pt = setTimeout(() => { if (paste.value.trim() && paste.value !== loaded) { try { JSON.parse(paste.value); parsePaste(paste.value); } catch (e) { return; } } updatePreview(); }, 300); });
	root.querySelector('#load-json').addEventListener('click', schedule);

	form.addEventListener('submit', async (ev) => {
		ev.preventDefault();
		// JSON typed or pasted and not loaded yet is what the user means
		if (paste.value.trim() && paste.value !== loaded && !parsePaste(paste.value)) return;
		clearErrors();
		const job = { ...extra };
		let bad = 0;
		for (const f of FIELDS) {
			const raw = inputs.get(f.key).value.trim();
			if (raw === '') continue;
			if (f.kind === 'json') {
				try {
					job[f.key] = JSON.parse(raw);
				} catch (e) {
					// every field that does not parse says so, not the first only
					showError(f.key, `${f.key}: not JSON: ${e.message}`, bad++ > 0);
				}
			} else {
				job[f.key] = raw;
			}
		}
		if (bad) return;
		const btn = root.querySelector('#submit-button');
		btn.disabled = true;
		try {
			const r = await api('/jobs', { method: 'POST', body: job });
			clear(done, `Job ${r.id} submitted (${r.runs} runs). `, h('a', { href: '#/job/' + r.id }, 'Watch it'));
			location.hash = '#/job/' + r.id;
		} catch (e) {
			if (e.status === 401 || e.status === 403) showError(null, 'Your token may not submit jobs: ' + e.message);
			else showErrors(e);
		} finally {
			btn.disabled = false;
		}
	});
	return null;
}
