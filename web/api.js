// api.js: fetch against /api/v1 with the token as Authorization: Bearer.
// The token is kept in this tab (sessionStorage) or, when the user asks to
// be remembered, in this browser (localStorage); forgetting clears both. A
// 401 or 403 asks for a token (auth.onNeed).
const KEY = 'benchfleet.token';

export const auth = {
	get token() { return sessionStorage.getItem(KEY) || localStorage.getItem(KEY) || ''; },
	get remembered() { return !!localStorage.getItem(KEY); },
	set token(t) { this.save(t, false); },
	save(t, remember) {
		sessionStorage.removeItem(KEY);
		localStorage.removeItem(KEY);
		if (t) (remember ? localStorage : sessionStorage).setItem(KEY, t);
	},
	onNeed: null,		// (status, message) => void
	headers() { const t = this.token; return t ? { Authorization: 'Bearer ' + t } : {}; },
};

export class ApiError extends Error {
	constructor(status, body, path) {
		const msg = body && typeof body.error === 'string' ? body.error : 'HTTP ' + status;
		super(msg);
		this.status = status;
		this.body = body;
		this.path = path;
		this.field = body && body.detail && typeof body.detail.field === 'string' ? body.detail.field : null;
		// every field error of a refused job (detail.errors), the first if
		// the answer has only the one; errorsTotal counts those past the cap
		const list = body && body.detail && Array.isArray(body.detail.errors) ? body.detail.errors : [];
		this.errors = list.filter((x) => x && typeof x.error === 'string')
			.map((x) => ({ field: typeof x.field === 'string' ? x.field : null, error: x.error }));
		if (!this.errors.length) this.errors = [{ field: this.field, error: msg }];
		const tot = body && body.detail ? body.detail.errors_total : undefined;
		this.errorsTotal = Number.isInteger(tot) && tot > this.errors.length ? tot : this.errors.length;
	}
}

export async function api(path, opts = {}) {
	const init = { method: opts.method || 'GET', headers: { ...auth.headers() } };
	// Every POST, PUT and DELETE is JSON, empty bodies too: the coordinator
	// refuses any other type (415), since a page of another origin can send
	// text/plain or a form without asking.
	if (init.method !== 'GET') init.headers['Content-Type'] = 'application/json';
	if (opts.body !== undefined)
		init.body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
	let r;
	try {
		r = await fetch('/api/v1' + path, init);
	} catch (e) {
		throw new ApiError(0, { error: 'cannot reach the coordinator: ' + e.message }, path);
	}
	const ct = r.headers.get('Content-Type') || '';
	const body = ct.startsWith('application/json') ? await r.json().catch(() => null) : await r.text();
	if (!r.ok) {
		const err = new ApiError(r.status, typeof body === 'object' ? body : { error: String(body) }, path);
		// a background request (the submit preview) never opens the prompt
		if ((r.status === 401 || r.status === 403) && auth.onNeed && !opts.quiet) auth.onNeed(r.status, err.message);
		throw err;
	}
	return body;
}
