/*
 * bisect.c: the pure half of a bisection (bisect.h): the request's checks
 * and canonical spec, the job of a step, the verdict on a step's samples
 * and the choice of the next commit. No store, no network: the driver
 * (bisect-drive.c) and the API (api-bisect.c) call these.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "caps.h"
#include "job.h"
#include "jx.h"
#include "kspec.h"
#include "plan.h"
#include "recipe.h"
#include "recipes.h"
#include "repro.h"

/* The request's keys, and which of them go into every step's job as they are. */
static const char *const bisect_keys[] = {
	"git", "good", "bad", "kernel", "recipe", "preset", "params", "metric", "direction",
	"threshold_pct", "machines", "boots_per_round", "max_rounds", "max_steps",
	"iterations", "warmup", "knobs", "knobs_optional", "bind", "aslr", "drop_caches",
	"boot", NULL
};
static const char *const bisect_job_keys[] = {
	"recipe", "preset", "params", "machines", "knobs", "knobs_optional", "bind", "aslr",
	"drop_caches", "boot", NULL
};
static const char *const bisect_kernel_keys[] = {
	"config", "fragments", "patches", "localversion", NULL
};
/* a commit that stands for good, bad and mid while the request is checked */
#define BISECT_CHECK_SHA "0000000000000000000000000000000000000000"

static const char *const verdict_names[] = {
	[BISECT_MORE] = "more", [BISECT_GOOD] = "good", [BISECT_BAD] = "bad",
	[BISECT_SKIP] = "skip", [BISECT_NODIFF] = "nodiff",
};

const char *
bisect_verdict_name(enum bisect_verdict v)
{
	return v <= BISECT_NODIFF ? verdict_names[v] : "?";
}

static int
rev_byte_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '_' || c == '/' || c == '~' || c == '^' || c == '-';
}

int
bisect_check_rev(const char *s, const char *field, struct bf_diag *d)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > BF_MAX_BISECT_REV) {
		bf_diag_set(d, field, "a revision is 1 to %d bytes, not %zu", BF_MAX_BISECT_REV, n);
		return BF_ERR_INVALID;
	}
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	    (s[0] >= '0' && s[0] <= '9'))) {
		bf_diag_set(d, field, "\"%.64s\" must start with a letter or digit (a tag, a "
		    "branch or a commit id; not an option)", s);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < n; i++)
		if (!rev_byte_ok((unsigned char)s[i])) {
			bf_diag_set(d, field, "\"%.64s\" has byte 0x%02x at %zu; a revision is "
			    "[A-Za-z0-9._/~^-]", s, (unsigned char)s[i], i);
			return BF_ERR_INVALID;
		}
	if (strstr(s, "..") != NULL || strstr(s, "//") != NULL || strstr(s, "/.") != NULL ||
	    s[n - 1] == '/' || s[n - 1] == '.' ||
	    (n >= 5 && strcmp(s + n - 5, ".lock") == 0)) {
		bf_diag_set(d, field, "\"%.64s\" is not one revision (no \"..\", \"//\", \"/.\", "
		    "\".lock\" or trailing '/' or '.')", s);
		return BF_ERR_INVALID;
	}
	return 0;
}

/* spec's kernel template at commit sha, as a kernels entry. */
static json_t *
bisect_kspec(const json_t *spec, const char *sha)
{
	json_t *k, *tmpl = json_object_get(spec, "kernel");

	if ((k = tmpl != NULL ? json_deep_copy(tmpl) : json_object()) == NULL)
		return NULL;
	if (json_object_set(k, "git", json_object_get(spec, "git")) != 0 ||
	    json_object_set_new(k, "commit", json_string(sha)) != 0) {
		json_decref(k);
		return NULL;
	}
	return k;
}

json_t *
bisect_step_job(const json_t *spec, int64_t id, int64_t step, int64_t round,
    const char *good, const char *bad, const char *mid)
{
	json_t *job = NULL, *v, *reps;
	char name[96];
	size_t i;

	if ((job = json_object()) == NULL)
		return NULL;
	for (i = 0; bisect_job_keys[i] != NULL; i++)
		if ((v = json_object_get(spec, bisect_job_keys[i])) != NULL &&
		    json_object_set(job, bisect_job_keys[i], v) != 0)
			goto fail;
	snprintf(name, sizeof(name), "bisect %lld step %lld round %lld", (long long)id,
	    (long long)step, (long long)round);
	if ((reps = json_pack("{s:O?,s:O?,s:O?}", "boots",
	    json_object_get(spec, "boots_per_round"), "iterations",
	    json_object_get(spec, "iterations"), "warmup", json_object_get(spec, "warmup"))) ==
	    NULL ||
	    json_object_set_new(job, "repetitions", reps) != 0 ||
	    json_object_set_new(job, "name", json_string(name)) != 0 ||
	    json_object_set_new(job, "order", json_string("interleaved")) != 0 ||
	    json_object_set_new(job, "matrix", json_pack("{s:[s,s,s]}", "kernel", "good", "bad",
	    "mid")) != 0 ||
	    json_object_set_new(job, "kernels", json_pack("{s:o,s:o,s:o}", "good",
	    bisect_kspec(spec, good), "bad", bisect_kspec(spec, bad), "mid",
	    bisect_kspec(spec, mid))) != 0)
		goto fail;
	return job;
fail:
	json_decref(job);
	return NULL;
}

/* A step job's field error under the request's names: kernels.X.commit is
 * a placeholder, kernels.X.f the request's kernel.f, repetitions.* the
 * request's own keys. */
static void
bisect_rename(struct bf_diag *d)
{
	static const struct { const char *from, *to; } map[] = {
		{ "kernels.good.", "kernel." }, { "kernels.bad.", "kernel." },
		{ "kernels.mid.", "kernel." }, { "repetitions.boots", "boots_per_round" },
		{ "repetitions.", "" },
	};
	char f[sizeof(d->field)];
	size_t i, n;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		n = strlen(map[i].from);
		if (strncmp(d->field, map[i].from, n) == 0) {
			snprintf(f, sizeof(f), "%s%s", map[i].to, d->field + n);
			if (strcmp(f + strlen(map[i].to), "git") == 0 && map[i].to[0] != '\0')
				snprintf(f, sizeof(f), "git");
			snprintf(d->field, sizeof(d->field), "%s", f);
			return;
		}
	}
}

static void
bisect_err(struct bf_diag_list *l, struct bf_diag *d)
{
	bisect_rename(d);
	bf_diag_list_add(l, d);
}

/* The request's own fields (not the job's) into spec, errors into l. */
static void
bisect_own_fields(const json_t *body, const struct recipe *rec, json_t *spec,
    struct bf_diag_list *l)
{
	struct bf_diag d;
	const char *s = NULL, *metric = NULL;
	json_t *k = NULL;
	int64_t v;
	double thr = BISECT_DEFAULT_THRESHOLD;
	size_t i;
	int hb = -1;
	static const struct {
		const char *key;
		int64_t min, max, def;
	} ints[] = {
		{ "boots_per_round", 1, BF_MAX_BISECT_BOOTS, BISECT_DEFAULT_BOOTS },
		{ "max_rounds", 1, BF_MAX_BISECT_ROUNDS, BISECT_DEFAULT_ROUNDS },
		{ "max_steps", 1, BF_MAX_BISECT_STEPS, BISECT_DEFAULT_STEPS },
		{ "iterations", 1, BF_MAX_ITERATIONS, BISECT_DEFAULT_ITERATIONS },
		{ "warmup", 0, BF_MAX_WARMUP, 0 },
	};

	bf_diag_clear(&d);
	if (jx_str(body, "git", 1, 4096, &s, "", &d) != 0)
		bf_diag_list_add(l, &d);
	else
		json_object_set_new(spec, "git", json_string(s));
	for (i = 0; i < 2; i++) {
		const char *key = i == 0 ? "good" : "bad";

		s = NULL;
		bf_diag_clear(&d);
		if (jx_str(body, key, 1, 4096, &s, "", &d) != 0 ||
		    bisect_check_rev(s, key, &d) != 0)
			bf_diag_list_add(l, &d);
		else
			json_object_set_new(spec, key, json_string(s));
	}
	bf_diag_clear(&d);
	if (jx_obj(body, "kernel", 0, &k, "", &d) != 0 ||
	    (k != NULL && jx_only_keys(k, bisect_kernel_keys, "kernel", &d) != 0))
		bf_diag_list_add(l, &d);
	else if (k != NULL)
		json_object_set(spec, "kernel", k);
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		v = ints[i].def;
		bf_diag_clear(&d);
		if (jx_int(body, ints[i].key, 0, ints[i].min, ints[i].max, &v, "", &d) != 0)
			bf_diag_list_add(l, &d);
		json_object_set_new(spec, ints[i].key, json_integer((json_int_t)v));
	}
	bf_diag_clear(&d);
	if (jx_num(body, "threshold_pct", 0, 0, BF_MAX_BISECT_THRESHOLD, &thr, "", &d) != 0)
		bf_diag_list_add(l, &d);
	else if (!(thr > 0)) {
		bf_diag_set(&d, "threshold_pct", "must be above 0 (a regression of at least this "
		    "many percent), up to %g", BF_MAX_BISECT_THRESHOLD);
		bf_diag_list_add(l, &d);
	}
	json_object_set_new(spec, "threshold_pct", json_real(thr));
	bf_diag_clear(&d);
	if (jx_str(body, "metric", 1, BF_MAX_NAME, &metric, "", &d) != 0) {
		bf_diag_list_add(l, &d);
	} else if (rec != NULL) {
		for (i = 0; i < rec->nmetrics; i++)
			if (strcmp(rec->metrics[i].name, metric) == 0)
				hb = rec->metrics[i].higher_better;
		if (hb < 0) {
			char names[512];
			size_t len = 0;

			names[0] = '\0';
			for (i = 0; i < rec->nmetrics && len < sizeof(names) - 1; i++)
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
				    i ? ", " : "", rec->metrics[i].name);
			bf_diag_set(&d, "metric", "\"%.64s\" is not a metric of recipe %s (%s)",
			    metric, rec->name, names);
			bf_diag_list_add(l, &d);
		}
		json_object_set_new(spec, "metric", json_string(metric));
	}
	s = NULL;
	bf_diag_clear(&d);
	if (jx_str(body, "direction", 0, 32, &s, "", &d) != 0) {
		bf_diag_list_add(l, &d);
	} else if (s != NULL && strcmp(s, "higher_is_better") != 0 &&
	    strcmp(s, "lower_is_better") != 0) {
		bf_diag_set(&d, "direction", "\"%.32s\" is not one of higher_is_better, "
		    "lower_is_better", s);
		bf_diag_list_add(l, &d);
	} else if (s != NULL) {
		json_object_set_new(spec, "direction", json_string(s));
	} else if (hb >= 0) {
		json_object_set_new(spec, "direction", json_string(hb ? "higher_is_better" :
		    "lower_is_better"));
	}
}

int
bisect_spec_check(const json_t *body, const struct recipes *rs, const char *roots,
    const char *workdir_root, json_t **specp, struct bf_diag *d, struct bf_diag_list *l)
{
	const struct recipe *rec = NULL;
	struct job_spec *job = NULL;
	struct plan *p = NULL;
	struct bf_diag e;
	json_t *spec = NULL, *jdoc = NULL, *v;
	const char *rname = NULL, *sp;
	size_t i;
	int r;

	*specp = NULL;
	bf_diag_clear(&e);
	if (!json_is_object(body)) {
		bf_diag_set(d, NULL, "request body: a bisection (a JSON object) is required");
		return BF_ERR_INVALID;
	}
	if ((spec = json_object()) == NULL)
		return BF_ERR_ALLOC;
	if (jx_only_keys(body, bisect_keys, "", &e) != 0)
		bf_diag_list_add(l, &e);
	bf_diag_clear(&e);
	if (jx_str(body, "recipe", 1, BF_MAX_NAME, &rname, "", &e) != 0) {
		bf_diag_list_add(l, &e);
	} else if ((rec = recipes_get(rs, rname)) == NULL) {
		bf_diag_set(&e, "recipe", "unknown recipe \"%.64s\"", rname);
		bf_diag_list_add(l, &e);
	}
	bisect_own_fields(body, rec, spec, l);
	for (i = 0; bisect_job_keys[i] != NULL; i++)
		if ((v = json_object_get(body, bisect_job_keys[i])) != NULL &&
		    json_object_set(spec, bisect_job_keys[i], v) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	sp = json_string_value(json_object_get(json_object_get(body, "machines"), "spread"));
	if (sp != NULL && strcmp(sp, "block") == 0) {
		bf_diag_set(&e, "machines.spread", "a bisection compares kernels on the same "
		    "machines; spread \"block\" is not for bisections (use any or pin)");
		bf_diag_list_add(l, &e);
	}
	/* the job of a step, with placeholders for the commits, passes every
	 * check POST /jobs makes, its errors named as the request names them */
	if (rec != NULL && json_object_get(spec, "git") != NULL) {
		struct bf_diag_list jl;

		memset(&jl, 0, sizeof(jl));
		if ((jdoc = bisect_step_job(spec, 0, 0, 0, BISECT_CHECK_SHA, BISECT_CHECK_SHA,
		    BISECT_CHECK_SHA)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		bf_diag_clear(&e);
		r = job_from_json_all(jdoc, &job, &e, &jl);
		if (r == 0 || (r == BF_ERR_INVALID && job != NULL))
			(void)job_validate_all(job, rec, workdir_root, &e, &jl);
		else if (r != BF_ERR_INVALID)
			goto out;
		for (i = 0; i < jl.n; i++)
			bisect_err(l, &jl.item[i]);
		bf_diag_clear(&e);
		if (jl.total == 0 && job != NULL &&
		    (kspec_check_roots(job->kernels, roots, &e) != 0 ||
		    plan_job(job, rec, &p, &e) != 0))
			bisect_err(l, &e);
	}
	if (l->total > 0) {
		*d = l->item[0];
		r = BF_ERR_INVALID;
		goto out;
	}
	*specp = spec;
	spec = NULL;
	r = 0;
out:
	plan_free(p);
	job_free(job);
	json_decref(jdoc);
	json_decref(spec);
	return r;
}

/* Means farther than this apart than each other are "closer": compare
 * |m - a| with |m - b| directly; equal distances are neither. */
static void
bisect_cmp_fill(const struct stats_summary *a, const struct stats_summary *b,
    struct bisect_cmp *c)
{
	struct stats_compare sc;

	c->pct = c->lo = c->hi = c->p = NAN;
	c->significant = 0;
	if (a->n < 2 || b->n < 2 || stats_compare(a, b, &sc) != 0)
		return;
	c->pct = sc.pct.pct;
	c->lo = sc.pct.lo;
	c->hi = sc.pct.hi;
	c->p = sc.welch.p;
	c->significant = sc.significant;
}

/* Percent with its CI for messages: "+12.3% [+10.1, +14.5]". */
static void
bisect_pct_text(const struct bisect_cmp *c, char *buf, size_t sz)
{
	if (!isfinite(c->pct))
		snprintf(buf, sz, "no %% change (too few samples)");
	else if (!isfinite(c->lo) || !isfinite(c->hi))
		snprintf(buf, sz, "%+.3g%% [no CI]", c->pct);
	else
		snprintf(buf, sz, "%+.3g%% [%+.3g, %+.3g]", c->pct, c->lo, c->hi);
}

int
bisect_classify(const struct bisect_samples *good, const struct bisect_samples *bad,
    const struct bisect_samples *mid, int higher_better, double threshold_pct,
    int last_round, struct bisect_class *out)
{
	double sgn = higher_better ? -1.0 : 1.0, dg, db;
	char t[96];
	int bm, r;

	if (out == NULL || good == NULL || bad == NULL || mid == NULL ||
	    !(threshold_pct > 0) || !isfinite(threshold_pct))
		return BF_ERR_INVALID;
	memset(out, 0, sizeof(*out));
	if ((r = repro_side_summary(good->v, good->boot, good->n, &out->good, &bm)) != 0)
		return r;
	out->boot_means |= bm;
	if ((r = repro_side_summary(bad->v, bad->boot, bad->n, &out->bad, &bm)) != 0)
		return r;
	out->boot_means |= bm;
	if ((r = repro_side_summary(mid->v, mid->boot, mid->n, &out->mid, &bm)) != 0)
		return r;
	out->boot_means |= bm;
	bisect_cmp_fill(&out->good, &out->bad, &out->bad_vs_good);
	bisect_cmp_fill(&out->good, &out->mid, &out->mid_vs_good);
	bisect_cmp_fill(&out->bad, &out->mid, &out->mid_vs_bad);
	bisect_pct_text(&out->bad_vs_good, t, sizeof(t));
	/* good and bad must differ as the bisection says, else it has no object */
	if (out->bad_vs_good.significant && sgn * out->bad_vs_good.pct < 0) {
		out->verdict = BISECT_NODIFF;
		snprintf(out->why, sizeof(out->why), "bad is better than good: %s", t);
		return 0;
	}
	if (!out->bad_vs_good.significant || !(sgn * out->bad_vs_good.pct >= threshold_pct)) {
		out->verdict = last_round ? BISECT_NODIFF : BISECT_MORE;
		snprintf(out->why, sizeof(out->why), "good and bad do not differ: %s (threshold "
		    "%g%%)", t, threshold_pct);
		return 0;
	}
	if (out->mid.n == 0) {
		out->verdict = BISECT_SKIP;
		snprintf(out->why, sizeof(out->why), "mid has no samples");
		return 0;
	}
	dg = fabs(out->mid.mean - out->good.mean);
	db = fabs(out->mid.mean - out->bad.mean);
	if (out->mid_vs_good.significant && sgn * out->mid_vs_good.pct > 0 && db < dg) {
		out->verdict = BISECT_BAD;
		return 0;
	}
	if (out->mid_vs_bad.significant && sgn * out->mid_vs_bad.pct < 0 && dg < db) {
		out->verdict = BISECT_GOOD;
		return 0;
	}
	out->verdict = last_round ? BISECT_SKIP : BISECT_MORE;
	snprintf(out->why, sizeof(out->why), "mid is neither significantly like good nor like "
	    "bad%s", last_round ? " at the last round" : "");
	return 0;
}

static json_t *
num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *
side_json(const struct stats_summary *s)
{
	return json_pack("{s:I,s:o,s:o,s:o}", "n", (json_int_t)s->n, "mean",
	    num_or_null(s->n > 0 ? s->mean : NAN), "sd", num_or_null(s->n > 1 ? s->sd : NAN),
	    "cov_pct", num_or_null(s->n > 1 ? s->cov : NAN));
}

static json_t *
cmp_json(const struct bisect_cmp *c)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:b}", "pct", num_or_null(c->pct), "lo95",
	    num_or_null(c->lo), "hi95", num_or_null(c->hi), "p", num_or_null(c->p),
	    "significant", c->significant);
}

json_t *
bisect_class_json(const struct bisect_class *c)
{
	return json_pack("{s:s,s:s?,s:b,s:o,s:o,s:o,s:o,s:o,s:o}", "verdict",
	    bisect_verdict_name(c->verdict), "why", c->why[0] ? c->why : NULL, "boot_means",
	    c->boot_means, "good", side_json(&c->good), "bad", side_json(&c->bad), "mid",
	    side_json(&c->mid), "bad_vs_good", cmp_json(&c->bad_vs_good), "mid_vs_good",
	    cmp_json(&c->mid_vs_good), "mid_vs_bad", cmp_json(&c->mid_vs_bad));
}

int64_t
bisect_next(int64_t lo, int64_t hi, const unsigned char *skipped, size_t n)
{
	int64_t m, k, i;

	if (hi <= lo + 1)
		return BISECT_NEXT_DONE;
	m = lo + (hi - lo) / 2;
	/* m, then m+1, m-1, m+2, ... inside (lo, hi) */
	for (k = 0; k < hi - lo; k++) {
		i = m + (k % 2 ? (k + 1) / 2 : -(k / 2));
		if (i > lo && i < hi && (size_t)i < n && (skipped == NULL || !skipped[i]))
			return i;
	}
	return BISECT_NEXT_SKIPPED;
}
