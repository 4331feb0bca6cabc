/*
 * fuzz_envdiff.c: envdiff_pair, envdiff_drift and envdiff_render_text on
 * fuzzed snapshots. The input is two JSON documents, split at the first
 * NUL byte, else at the first newline (the seeds are two lines). A
 * document that is an array is also taken as the snapshots of a job's runs
 * for drift. Every diff is rendered, again after a trip through JSON text
 * (as when read back from the store), and both renderings must match; the
 * text must have exactly one line per listed key (and per "more" line):
 * a value that added a line would be a forged one. The fuzzed documents
 * are rendered as diffs too, to exercise the shape checks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "envdiff.h"
#include "jx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FE_RUNS		64	/* snapshots of one drift */

static size_t
fe_lines(const struct buf *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->len; i++)
		n += b->data[i] == '\n';
	return n;
}

/* Lines a pair diff must render to. */
static size_t
fe_pair_lines(const json_t *diff)
{
	const json_t *g;
	size_t i, n = 0;

	json_array_foreach(json_object_get(diff, "groups"), i, g) {
		n += json_array_size(json_object_get(g, "keys"));
		if ((size_t)json_integer_value(json_object_get(g, "n")) >
		    json_array_size(json_object_get(g, "keys")))
			n++;
	}
	return n > 0 ? n : 1;
}

static size_t
fe_drift_lines(const json_t *diff)
{
	size_t n = json_array_size(json_object_get(diff, "keys"));

	n += json_integer_value(json_object_get(diff, "more")) > 0;
	return n > 0 ? n : 1;
}

/* Render diff, check its line count, and render it again from its text. */
static void
fe_render(const json_t *diff, size_t want_lines, const char *what)
{
	struct buf b, again, small;
	struct bf_diag d;
	json_t *back = NULL;
	char *text;
	int r;

	buf_init(&b, 0);
	buf_init(&again, 0);
	buf_init(&small, 64);
	if ((r = envdiff_render_text(diff, &b)) != 0 || fe_lines(&b) != want_lines) {
		fprintf(stderr, "fuzz_envdiff: %s: render %d, %zu lines, expected %zu\n", what, r,
		    fe_lines(&b), want_lines);
		abort();
	}
	/* a small buffer: TOOBIG, and the buffer as it was */
	r = envdiff_render_text(diff, &small);
	if (r != 0 && (r != BF_ERR_TOOBIG || small.len != 0)) {
		fprintf(stderr, "fuzz_envdiff: %s: small render %d, %zu bytes\n", what, r,
		    small.len);
		abort();
	}
	if ((text = json_dumps(diff, JSON_COMPACT)) == NULL)
		goto out;
	if (jx_loads(text, strlen(text), BF_MAX_API_RESPONSE, &back, &d) == 0) {
		r = envdiff_render_text(back, &again);
		if (r != 0 || again.len != b.len || memcmp(again.data, b.data, b.len) != 0) {
			fprintf(stderr, "fuzz_envdiff: %s: render after a JSON trip differs (%d)\n",
			    what, r);
			abort();
		}
	}
	free(text);
out:
	json_decref(back);
	buf_free(&b);
	buf_free(&again);
	buf_free(&small);
}

static void
fe_pair(const json_t *a, const json_t *b)
{
	struct bf_diag d;
	json_t *diff = NULL;

	if (envdiff_pair(a, b, &diff, &d) != 0)
		return;
	fe_render(diff, fe_pair_lines(diff), "pair");
	json_decref(diff);
	/* a snapshot against itself: nothing */
	if (envdiff_pair(a, a, &diff, &d) != 0 || json_integer_value(json_object_get(diff, "n"))
	    != 0) {
		fprintf(stderr, "fuzz_envdiff: a snapshot differs from itself\n");
		abort();
	}
	json_decref(diff);
}

static void
fe_drift(const json_t *const *snaps, size_t n)
{
	static const char *const labels[] = { "run 1", "run\n2", NULL, "\xff\xfe",
		"cell thp=always run 5" };
	const char *lab[FE_RUNS];
	struct bf_diag d;
	json_t *diff = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		lab[i] = labels[i % (sizeof(labels) / sizeof(labels[0]))];
	if (envdiff_drift(snaps, lab, n, &diff, &d) == 0) {
		fe_render(diff, fe_drift_lines(diff), "drift");
		json_decref(diff);
	}
	diff = NULL;
	if (envdiff_drift(snaps, NULL, n, &diff, &d) == 0) {
		fe_render(diff, fe_drift_lines(diff), "drift without labels");
		json_decref(diff);
	}
}

/* A fuzzed document rendered as if it were a diff: must not crash. */
static void
fe_raw(const json_t *doc)
{
	struct buf b;

	buf_init(&b, 0);
	if (envdiff_render_text(doc, &b) != 0 && b.len != 0)
		abort();
	buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const json_t *snaps[FE_RUNS];
	const uint8_t *sep;
	struct bf_diag d;
	json_t *a = NULL, *b = NULL, *v;
	size_t la, n = 0, i;

	if ((sep = memchr(data, '\0', size)) == NULL)
		sep = memchr(data, '\n', size);
	la = sep != NULL ? (size_t)(sep - data) : size;
	if (jx_loads((const char *)data, la, BF_MAX_API_BODY, &a, &d) != 0)
		a = NULL;
	if (sep != NULL && jx_loads((const char *)sep + 1, size - la - 1, BF_MAX_API_BODY, &b, &d)
	    != 0)
		b = NULL;
	if (a != NULL)
		fe_raw(a);
	if (b != NULL)
		fe_raw(b);
	fe_pair(a, b);
	snaps[n++] = a;
	snaps[n++] = b;
	snaps[n++] = NULL;
	snaps[n++] = a;
	fe_drift(snaps, n);
	/* an array: its elements are the runs */
	n = 0;
	json_array_foreach(a, i, v) {
		if (n == FE_RUNS)
			break;
		snaps[n++] = json_is_null(v) ? NULL : v;
	}
	if (n > 0)
		fe_drift(snaps, n);
	json_decref(a);
	json_decref(b);
	return 0;
}
