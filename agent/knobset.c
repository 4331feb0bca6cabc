/*
 * knobset.c: the step's knobs on the machine. The order is fixed: read
 * every knob (a missing one fails before anything is written, unless the
 * step lists it in knobs_optional: then it reads back "absent" and is left
 * alone), write the ones that differ (each file's old value saved first),
 * read every one back, report. Restoring replays the undo list newest
 * first. Actions (drop_caches, compact_memory) are checked to exist here
 * and done before each iteration by knobset_actions.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "emit.h"
#include "ajson.h"
#include "knob.h"
#include "knobset.h"

#define KNOBSET_MAX_UNDO	(KNOB_MAX_FILES + 64)

struct knobset_undo {
	char path[KNOB_MAX_PATH];
	char value[KNOB_MAX_VALUE];
};

static struct knobset_undo knobset_undo[KNOBSET_MAX_UNDO];
/* entries [0, n) are complete; n is raised only after one is filled */
static volatile sig_atomic_t knobset_nundo;

static int
knobset_push(const char *name, const char *path, struct bf_diag *d)
{
	struct knobset_undo *u;
	char why[KNOB_MAX_WHY];
	int r;

	if (knobset_nundo >= KNOBSET_MAX_UNDO) {
		bf_diag_set(d, "knobs", "more than %d files to change", KNOBSET_MAX_UNDO);
		return BF_ERR_TOOBIG;
	}
	u = &knobset_undo[knobset_nundo];
	if ((r = knob_file_get(name, path, u->value, sizeof(u->value), why, sizeof(why))) != 0) {
		bf_diag_set(d, NULL, "knobs.%s: %s", name, why);
		return r;
	}
	snprintf(u->path, sizeof(u->path), "%s", path);
	knobset_nundo = knobset_nundo + 1;
	return 0;
}

/* Write the files of one knob, each saved first. */
static int
knobset_set(const struct step_knob *k, struct bf_diag *d)
{
	char (*paths)[KNOB_MAX_PATH] = NULL;
	char why[KNOB_MAX_WHY];
	size_t n = 0, i;
	int r;

	if ((paths = calloc(KNOB_MAX_FILES, KNOB_MAX_PATH)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = knob_files(k->name, paths, KNOB_MAX_FILES, &n, why, sizeof(why))) != 0) {
		bf_diag_set(d, NULL, "knobs.%s: cannot set \"%s\": %s", k->name, k->value, why);
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((r = knobset_push(k->name, paths[i], d)) != 0)
			goto out;
	if ((r = knob_write(k->name, k->value, why, sizeof(why))) != 0) {
		bf_diag_set(d, NULL, "knobs.%s: cannot set \"%s\": %s", k->name, k->value, why);
		goto out;
	}
	r = 0;
out:
	free(paths);
	return r;
}

static int
knobset_is_action(const char *name)
{
	const struct knob *k = knob_find(name);

	return k != NULL && k->kind == KNOB_ACTION;
}

/* An action appears in requested only, unless it is absent here. */
static int
knobset_put_obj(struct buf *b, const char *key, const struct step *st, char (*vals)[256],
    int all)
{
	size_t i, n = 0;
	int r;

	if ((r = buf_printf(b, ",\"%s\":{", key)) != 0)
		return r;
	for (i = 0; i < st->nknobs; i++) {
		if (!all && !st->knobs[i].absent && knobset_is_action(st->knobs[i].name))
			continue;
		if ((r = buf_puts(b, n++ ? "," : "")) != 0 ||
		    (r = ajson_put_str(b, st->knobs[i].name, strlen(st->knobs[i].name))) != 0 ||
		    (r = buf_puts(b, ":")) != 0 ||
		    (r = ajson_put_str(b, vals[i], strlen(vals[i]))) != 0)
			return r;
	}
	return buf_puts(b, "}");
}

/* Before: the knob's value, or absent (optional and missing), or an error. */
static int
knobset_before(struct step_knob *k, char *out, size_t outsz, struct bf_diag *d)
{
	char why[KNOB_MAX_WHY];
	int r;

	if (knobset_is_action(k->name)) {
		if (knob_action_exists(k->name, why, sizeof(why)))
			return 0;
		r = BF_ERR_NOTFOUND;
	} else if ((r = knob_read(k->name, out, outsz, why, sizeof(why))) == 0)
		return 0;
	if (r == BF_ERR_NOTFOUND && k->optional) {
		k->absent = 1;
		snprintf(out, outsz, "%s", KNOB_ABSENT);
		return 0;
	}
	bf_diag_set(d, NULL, "knobs.%s: cannot set \"%s\": %s", k->name, k->value, why);
	return r;
}

int
knobset_apply(struct step *st, struct bf_diag *d)
{
	char (*before)[256] = NULL, (*after)[256] = NULL, (*req)[256] = NULL;
	char why[KNOB_MAX_WHY];
	struct buf b;
	size_t i, bad = (size_t)-1;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if (st->nknobs == 0) {
		r = 0;
		goto out;
	}
	if ((before = calloc(st->nknobs, sizeof(*before))) == NULL ||
	    (after = calloc(st->nknobs, sizeof(*after))) == NULL ||
	    (req = calloc(st->nknobs, sizeof(*req))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < st->nknobs; i++) {
		struct step_knob *k = &st->knobs[i];

		snprintf(req[i], sizeof(req[i]), "%s", k->value);
		if ((r = knobset_before(k, before[i], sizeof(before[i]), d)) != 0)
			goto out;
		if (k->absent) {
			snprintf(after[i], sizeof(after[i]), "%s", KNOB_ABSENT);
			/* an absent action is not done */
			if (strcmp(k->name, "drop_caches") == 0)
				st->drop_caches = 0;
			if (strcmp(k->name, "compact_memory") == 0)
				st->compact_memory = 0;
		}
	}
	for (i = 0; i < st->nknobs; i++) {
		const struct step_knob *k = &st->knobs[i];

		if (k->absent || knobset_is_action(k->name) ||
		    knob_same(k->name, k->value, before[i]))
			continue;
		if ((r = knobset_set(k, d)) != 0)
			goto out;
	}
	for (i = 0; i < st->nknobs; i++) {
		const struct step_knob *k = &st->knobs[i];

		if (k->absent || knobset_is_action(k->name))
			continue;
		if ((r = knob_read(k->name, after[i], sizeof(after[i]), why, sizeof(why))) != 0) {
			bf_diag_set(d, NULL, "knobs.%s: cannot read back: %s", k->name, why);
			goto out;
		}
		if (bad == (size_t)-1 && !knob_same(k->name, k->value, after[i]))
			bad = i;
	}
	if ((r = buf_puts(&b, "{\"type\":\"knobs\"")) != 0 ||
	    (r = knobset_put_obj(&b, "before", st, before, 0)) != 0 ||
	    (r = knobset_put_obj(&b, "requested", st, req, 1)) != 0 ||
	    (r = knobset_put_obj(&b, "after", st, after, 0)) != 0 ||
	    (r = buf_puts(&b, "}")) != 0 ||
	    (r = emit_line(&b)) != 0)
		goto out;
	if (bad != (size_t)-1) {
		knob_mismatch(st->knobs[bad].name, st->knobs[bad].value, after[bad], why,
		    sizeof(why));
		bf_diag_set(d, NULL, "knobs.%s: %s", st->knobs[bad].name, why);
		r = BF_ERR_STATE;
		goto out;
	}
	r = 0;
out:
	free(before);
	free(after);
	free(req);
	buf_free(&b);
	return r;
}

int
knobset_restore(struct bf_diag *d)
{
	char why[KNOB_MAX_WHY];
	int r = 0;

	while (knobset_nundo > 0) {
		const struct knobset_undo *u = &knobset_undo[knobset_nundo - 1];

		if (knob_file_put(u->path, u->value, why, sizeof(why)) != 0 && r == 0) {
			bf_diag_set(d, NULL, "knobs: restoring \"%s\": %s", u->value, why);
			r = BF_ERR_SYS;
		}
		knobset_nundo = knobset_nundo - 1;
	}
	return r;
}

void
knobset_restore_signal(void)
{
	sig_atomic_t i;
	ssize_t n;
	int fd;

	for (i = knobset_nundo; i > 0; i--) {
		const struct knobset_undo *u = &knobset_undo[i - 1];

		if ((fd = open(u->path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0)
			continue;
		n = write(fd, u->value, strlen(u->value));
		(void)n;
		close(fd);
	}
	knobset_nundo = 0;
}

int
knobset_actions(const struct step *st, struct bf_diag *d)
{
	char why[KNOB_MAX_WHY], v[2] = { (char)('0' + st->drop_caches), '\0' };
	int r;

	if (st->drop_caches > 0) {
		sync();
		if ((r = knob_write("drop_caches", v, why, sizeof(why))) != 0) {
			bf_diag_set(d, NULL, "drop_caches: %s", why);
			return r;
		}
	}
	if (st->compact_memory && (r = knob_write("compact_memory", "1", why, sizeof(why))) != 0) {
		bf_diag_set(d, NULL, "compact_memory: %s", why);
		return r;
	}
	return 0;
}
