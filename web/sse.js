// sse.js: a Server-Sent Events client over fetch(), because EventSource
// cannot send an Authorization header. It follows the SSE parsing rules
// (id/event/data/retry fields, comments, blank line dispatches) and on
// every reconnect sends Last-Event-ID, so that the coordinator resumes the
// stream where it broke; an event "reset" means the resume point is gone
// and the caller must reload its state.
import { auth } from './api.js';

export class EventStream {
	constructor(url, handlers) {
		this.url = url;
		this.h = handlers;	// onEvent(type, data, id), onState(state), onAuth(status)
		this.lastId = '';
		this.retry = 1000;
		this.ctl = null;
		this.stopped = true;
		this.connects = 0;
		this.gen = 0;
	}

	start() {
		if (!this.stopped) return;
		this.stopped = false;
		this.loop(++this.gen);
	}

	stop() {
		this.stopped = true;
		this.gen++;
		if (this.ctl) this.ctl.abort();
	}

	// Break the current connection (as a network drop would); it reconnects.
	drop() {
		if (this.ctl) this.ctl.abort();
	}

	async loop(gen) {
		let fails = 0;
		while (!this.stopped && gen === this.gen) {
			const ok = await this.once();
			if (this.stopped || gen !== this.gen) break;
			fails = ok ? 0 : fails + 1;
			this.h.onState && this.h.onState('reconnecting');
			await new Promise((res) => setTimeout(res, Math.min(this.retry * 2 ** Math.min(fails, 4), 15000)));
		}
	}

	// One connection; true when it was established.
	async once() {
		this.ctl = new AbortController();
		const headers = { Accept: 'text/event-stream', ...auth.headers() };
		if (this.lastId) headers['Last-Event-ID'] = this.lastId;
		let r;
		try {
			r = await fetch(this.url, { headers, signal: this.ctl.signal, cache: 'no-store' });
		} catch (e) {
			return false;
		}
		if (r.status === 401 || r.status === 403) {
			this.h.onAuth && this.h.onAuth(r.status);
			this.stopped = true;
			return false;
		}
		if (!r.ok || !r.body) return false;
		this.connects++;
		this.h.onState && this.h.onState('live');
		const reader = r.body.getReader();
		const dec = new TextDecoder();
		let buf = '', type = '', data = [], id = null;
		try {
			for (;;) {
				const { value, done } = await reader.read();
				if (done) break;
				buf += dec.decode(value, { stream: true });
				let m;
				while ((m = /\r\n|\r|\n/.exec(buf)) !== null) {
					// A lone \r at the end may be half of \r\n: wait for more.
					if (m[0] === '\r' && m.index === buf.length - 1) break;
					const line = buf.slice(0, m.index);
					buf = buf.slice(m.index + m[0].length);
					if (line === '') {
						if (id !== null) this.lastId = id;
						if (data.length) this.h.onEvent(type || 'message', data.join('\n'), this.lastId);
						type = ''; data = []; id = null;
						continue;
					}
					if (line[0] === ':') continue;
					const c = line.indexOf(':');
					const f = c < 0 ? line : line.slice(0, c);
					let v = c < 0 ? '' : line.slice(c + 1);
					if (v[0] === ' ') v = v.slice(1);
					if (f === 'event') type = v;
					else if (f === 'data') data.push(v);
					else if (f === 'id' && !v.includes('\0')) id = v;
					else if (f === 'retry' && /^\d+$/.test(v)) this.retry = Number(v);
				}
			}
		} catch (e) {
			// aborted or the network broke: reconnect
		}
		return true;
	}
}
