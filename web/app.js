// The dashboard: fleet, jobs, and one job's runs and report. Every value
// from the API is put into the page as text (textContent), never as HTML.
const api = (p) => fetch('/api/v1' + p, { headers: token() }).then((r) => {
	if (!r.ok) throw new Error(p + ': HTTP ' + r.status);
	return p.includes('format=text') ? r.text() : r.json();
});
const token = () => {
	const t = sessionStorage.getItem('benchfleet.token');
	return t ? { Authorization: 'Bearer ' + t } : {};
};
const when = (t) => (t ? new Date(t * 1000).toISOString().replace('T', ' ').slice(0, 19) : '');

function cell(tr, text, cls) {
	const td = document.createElement('td');
	td.textContent = text == null ? '' : String(text);
	if (cls) td.className = cls;
	tr.appendChild(td);
	return td;
}

function fill(id, rows, render) {
	const tb = document.querySelector('#' + id + ' tbody');
	tb.replaceChildren(...rows.map((r) => { const tr = document.createElement('tr'); render(tr, r); return tr; }));
}

let current = null;

async function refresh() {
	try {
		const [m, j] = await Promise.all([api('/machines'), api('/jobs')]);
		fill('machines', m.machines, (tr, x) => {
			cell(tr, x.name); cell(tr, x.class); cell(tr, x.state, 'state-' + x.state);
			cell(tr, x.host + ':' + x.port); cell(tr, x.hostname); cell(tr, x.kernel);
			cell(tr, when(x.last_seen)); cell(tr, x.last_error, 'err');
		});
		fill('jobs', j.jobs, (tr, x) => {
			tr.className = 'click';
			tr.onclick = () => { current = x.id; refresh(); };
			cell(tr, x.id); cell(tr, x.recipe); cell(tr, x.name); cell(tr, x.state, 'state-' + x.state);
			const td = cell(tr, ' ' + x.runs_done + '/' + x.runs_total);
			const bar = document.createElement('span'); bar.className = 'bar';
			const fillEl = document.createElement('span');
			fillEl.style.width = (x.runs_total ? (100 * (x.runs_done + x.runs_failed) / x.runs_total) : 0) + '%';
			bar.appendChild(fillEl); td.prepend(bar);
		});
		if (current != null) await showJob(current);
		document.getElementById('status').textContent = 'updated ' + new Date().toLocaleTimeString();
	} catch (e) {
		document.getElementById('status').textContent = String(e.message);
	}
}

async function showJob(id) {
	const [job, runs] = await Promise.all([api('/jobs/' + id), api('/jobs/' + id + '/runs')]);
	document.getElementById('job').hidden = false;
	document.getElementById('job-title').textContent = 'Job ' + job.id + ': ' + job.recipe +
		(job.name ? ' (' + job.name + ')' : '') + ' - ' + job.state;
	fill('runs', runs.runs, (tr, r) => {
		cell(tr, r.id); cell(tr, r.label); cell(tr, r.boot); cell(tr, r.state, 'state-' + r.state);
		cell(tr, r.machine); cell(tr, r.hostname); cell(tr, (r.samples || []).length); cell(tr, r.error, 'err');
	});
	document.getElementById('report').textContent = await api('/jobs/' + id + '/report?format=text');
}

refresh();
setInterval(refresh, 2000);
