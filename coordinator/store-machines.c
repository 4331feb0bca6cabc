/*
 * store-machines.c: machines in the store: registration, state, the
 * fingerprint and boot config the scheduler records (the API's JSON view
 * of a machine is api_view_machine, api-view.c).
 */
#include <stdlib.h>
#include <string.h>

#include "db.h"

#include "err.h"
#include "caps.h"
#include "store.h"
#include "store-int.h"


static int
machine_state_ok(const char *st)
{
	return strcmp(st, "idle") == 0 || strcmp(st, "running") == 0 ||
	    strcmp(st, "offline") == 0 || strcmp(st, "booting") == 0 ||
	    strcmp(st, "quarantined") == 0;
}

int
store_machine_add(struct store *s, const struct store_machine *m, struct bf_diag *d)
{
	const char *state;
	int r;

	if (s == NULL || m == NULL)
		return BF_ERR_INVALID;
	state = m->state != NULL ? m->state : "idle";
	if ((r = store_check_str(m->name, "name", BF_MAX_NAME, 1, d)) != 0 ||
	    (r = store_check_str(m->host, "host", BF_MAX_HOST, 1, d)) != 0 ||
	    (r = store_check_str(m->user, "user", BF_MAX_NAME, 0, d)) != 0 ||
	    (r = store_check_str(m->key_path, "key_path", BF_MAX_STR, 0, d)) != 0 ||
	    (r = store_check_str(m->klass, "class", BF_MAX_NAME, 1, d)) != 0)
		return r;
	if (m->port < 1 || m->port > 65535) {
		bf_diag_set(d, "port", "%d is not in 1..65535", m->port);
		return BF_ERR_RANGE;
	}
	if (m->roles != NULL && strcmp(m->roles, "run") != 0 && strcmp(m->roles, "build") != 0 &&
	    strcmp(m->roles, "run,build") != 0) {
		bf_diag_set(d, "roles", "\"%.32s\" is not one of run, build, run,build", m->roles);
		return BF_ERR_INVALID;
	}
	if (!machine_state_ok(state)) {
		bf_diag_set(d, "state", "\"%s\" is not one of idle, running, offline, booting, "
		    "quarantined", state);
		return BF_ERR_INVALID;
	}
	store_lock(s);
	r = store_q_exec(s, Q_M_ADD, NULL, "tt" "I" "ttttI" "tt", m->name, m->host,
	    (int64_t)m->port, m->user, m->key_path, m->klass, state, store_now_s(), m->boot,
	    m->roles);
	store_unlock(s);
	if (r == BF_ERR_EXISTS)
		bf_diag_set(d, "name", "a machine named \"%s\" exists", m->name);
	else if (r != 0)
		bf_diag_set(d, NULL, "store: %s", db_last_error());
	return r;
}

static int
machine_from_row(struct db_stmt *st, struct store_machine *m)
{
	int r;

	memset(m, 0, sizeof(*m));
	if ((r = store_col_dup(st, 0, &m->name)) != 0 ||
	    (r = store_col_dup(st, 1, &m->host)) != 0 ||
	    (r = store_col_dup(st, 3, &m->user)) != 0 ||
	    (r = store_col_dup(st, 4, &m->key_path)) != 0 ||
	    (r = store_col_dup(st, 5, &m->klass)) != 0 ||
	    (r = store_col_dup(st, 6, &m->state)) != 0 ||
	    (r = store_col_dup(st, 7, &m->hostname)) != 0 ||
	    (r = store_col_dup(st, 8, &m->kernel)) != 0 ||
	    (r = store_col_dup(st, 9, &m->arch)) != 0 ||
	    (r = store_col_dup(st, 10, &m->last_error)) != 0 ||
	    (r = store_col_dup(st, 13, &m->fingerprint)) != 0 ||
	    (r = store_col_dup(st, 14, &m->fingerprint_sha256)) != 0 ||
	    (r = store_col_dup(st, 15, &m->boot)) != 0 ||
	    (r = store_col_dup(st, 16, &m->boot_key)) != 0 ||
	    (r = store_col_dup(st, 17, &m->roles)) != 0)
		return r;
	m->port = db_col_int(st, 2);
	m->created_at = db_col_int64(st, 11);
	m->last_seen = db_col_int64(st, 12);	/* NULL reads as 0: never */
	return 0;
}

static void
machine_clear(struct store_machine *m)
{
	free(m->name);
	free(m->host);
	free(m->user);
	free(m->key_path);
	free(m->klass);
	free(m->state);
	free(m->hostname);
	free(m->kernel);
	free(m->arch);
	free(m->last_error);
	free(m->fingerprint);
	free(m->fingerprint_sha256);
	free(m->boot);
	free(m->boot_key);
	free(m->roles);
}

void
store_machine_free(struct store_machine *m)
{
	if (m == NULL)
		return;
	machine_clear(m);
	free(m);
}

void
store_machines_free(struct store_machine *a, size_t n)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < n; i++)
		machine_clear(&a[i]);
	free(a);
}

int
store_machine_get(struct store *s, const char *name, struct store_machine **out)
{
	struct store_machine *m = NULL;
	struct db_stmt *st;
	int r;

	*out = NULL;
	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	if ((r = store_q(s, Q_M_GET, &st, "t", name)) != 0 || (r = store_q_step(s, st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = machine_from_row(st, m)) != 0)
		goto out;
	*out = m;
	m = NULL;
	r = 0;
out:
	store_unlock(s);
	store_machine_free(m);
	return r;
}

int
store_machine_names(struct store *s, char ***out, size_t *nout)
{
	char **a = NULL, **na;
	struct db_stmt *st;
	size_t n = 0, cap = 0;
	int r;

	*out = NULL;
	*nout = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	s = store_rlock(s);
	if ((r = store_q(s, Q_M_NAMES, &st, "")) != 0)
		goto out;
	while ((r = store_q_step(s, st)) == 1) {
		if (n == cap) {
			cap = cap == 0 ? 64 : cap * 2;
			if ((na = reallocarray(a, cap, sizeof(*a))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			a = na;
		}
		if ((r = store_col_dup(st, 0, &a[n])) != 0)
			goto out;
		n++;
	}
	if (r < 0)
		goto out;
	*out = a;
	*nout = n;
	a = NULL;
	n = 0;
	r = 0;
out:
	store_unlock(s);
	store_names_free(a, n);
	return r;
}

void
store_names_free(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int
store_machine_list(struct store *s, struct store_machine **out, size_t *nout)
{
	struct store_machine *a = NULL, *na;
	struct db_stmt *st;
	size_t n = 0, cap = 0;
	int r;

	*out = NULL;
	*nout = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	s = store_rlock(s);
	if ((r = store_q(s, Q_M_LIST, &st, "")) != 0)
		goto out;
	while ((r = store_q_step(s, st)) == 1) {
		if (n == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			if ((na = reallocarray(a, cap, sizeof(*a))) == NULL) {
				r = BF_ERR_ALLOC;
				goto out;
			}
			a = na;
		}
		/* Count the slot first: machine_from_row may fail half-filled. */
		n++;
		if ((r = machine_from_row(st, &a[n - 1])) != 0)
			goto out;
	}
	if (r < 0)
		goto out;
	*out = a;
	*nout = n;
	a = NULL;
	n = 0;
	r = 0;
out:
	store_unlock(s);
	store_machines_free(a, n);
	return r;
}

static int
machine_delete_tx(struct store *s, void *arg)
{
	const char *name = arg;
	struct db_stmt *st;
	int r, n;

	if ((r = store_q(s, Q_M_BUSY, &st, "t", name)) != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	db_reset(st);
	if (r == 1)
		return BF_ERR_STATE;
	if ((r = store_q_exec(s, Q_M_DELETE, &n, "t", name)) != 0)
		return r;
	return n == 0 ? BF_ERR_NOTFOUND : 0;
}

int
store_machine_delete(struct store *s, const char *name)
{
	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	return store_tx(s, machine_delete_tx, (void *)name);
}

int
store_machine_update(struct store *s, const char *name, const char *state,
    const char *hostname, const char *kernel, const char *arch,
    const char *last_error, int touch)
{
	char *h = NULL, *k = NULL, *a = NULL, *e = NULL;
	int r, n;

	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	if (state != NULL && !machine_state_ok(state))
		return BF_ERR_INVALID;
	/* What the agent and SSH report is untrusted: clean and cut it. */
	if ((hostname != NULL &&
	    (h = store_text_clean(hostname, strlen(hostname), BF_MAX_HOST, NULL)) == NULL) ||
	    (kernel != NULL &&
	    (k = store_text_clean(kernel, strlen(kernel), BF_MAX_NAME * 4, NULL)) == NULL) ||
	    (arch != NULL && (a = store_text_clean(arch, strlen(arch), BF_MAX_NAME, NULL)) == NULL) ||
	    (last_error != NULL &&
	    (e = store_text_clean(last_error, strlen(last_error), BF_MAX_STR, NULL)) == NULL)) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	store_lock(s);
	r = store_q_exec(s, Q_M_UPDATE, &n, "tttttt" "II", name, state, h, k, a, e,
	    (int64_t)(touch != 0), store_now_s());
	store_unlock(s);
	if (r == 0 && n == 0)
		r = BF_ERR_NOTFOUND;
out:
	free(h);
	free(k);
	free(a);
	free(e);
	return r;
}

int
store_machine_set_fingerprint(struct store *s, const char *name, const char *json_text,
    const char *sha256)
{
	int r, n = 0;

	if (s == NULL || name == NULL || json_text == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_M_FINGERPRINT, &n, "ttt", name, json_text, sha256);
	store_unlock(s);
	return r != 0 ? r : n == 0 ? BF_ERR_NOTFOUND : 0;
}

int
store_machine_set_boot(struct store *s, const char *name, const char *boot_json)
{
	int r, n = 0;

	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_M_BOOT, &n, "tt", name, boot_json);
	store_unlock(s);
	return r != 0 ? r : n == 0 ? BF_ERR_NOTFOUND : 0;
}

int
store_machine_set_boot_key(struct store *s, const char *name, const char *boot_key)
{
	int r, n = 0;

	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_q_exec(s, Q_M_BOOT_KEY, &n, "tt", name, boot_key);
	store_unlock(s);
	return r != 0 ? r : n == 0 ? BF_ERR_NOTFOUND : 0;
}
