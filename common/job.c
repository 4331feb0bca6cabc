/*
 * job.c: parse a job document (structure and types, no recipe needed) and
 * validate it against its recipe. A job is untrusted input from the HTTP
 * API; after job_validate() every value in it is one its recipe accepts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "job.h"
#include "jx.h"
#include "knob.h"
#include "kspec.h"
#include "caps.h"
#include "matrix.h"
#include "recipe.h"

#define JOB_NAME_MAX		200
#define JOB_MAX_MACHINES	1024

static const char *const job_keys[] = {
	"recipe", "name", "preset", "machines", "matrix", "params", "repetitions", "order",
	"knobs", "knobs_optional", "bind", "aslr", "drop_caches", "kernel", "cmdline", "boot",
	"profile", "suite", "kernels", NULL
};
static const char *const job_profile_keys[] = { "perf", "freq", NULL };
/* Matrix axes that are boot configuration, not recipe parameters. */
static const char *const job_boot_axes[] = { "kernel", "cmdline", NULL };
static const char *const job_boot_keys[] = { "cmdline_base", NULL };
static const char *const job_bind_keys[] = { "cpus", "membind", "cpunodebind", NULL };
#define JOB_MAX_KNOBS		64
#define JOB_MAX_BIND_LIST	4096
static const char *const job_machine_keys[] = { "class", "names", "spread", NULL };
/* machines.spread, by enum job_spread */
static const char *const job_spreads[] = { "any", "pin", "block", NULL };
static const char *const job_rep_keys[] = { "boots", "iterations", "warmup", "gap_ms",
	"target_ci_pct", "min_boots", "max_boots", "target_metric", NULL };

static const struct {
	const char *name;
	int interleaved;
} job_orders[] = {
	{"sequential", 0},
	{"interleaved", 1},
};

int
job_is_boot_axis(const char *k)
{
	size_t i;

	for (i = 0; job_boot_axes[i] != NULL; i++)
		if (strcmp(k, job_boot_axes[i]) == 0)
			return 1;
	return 0;
}

int
job_check_kernel(const char *s, const char *path, struct bf_diag *d)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > JOB_MAX_RELEASE) {
		bf_diag_set(d, path, "a kernel release is 1 to %d bytes, not %zu", JOB_MAX_RELEASE,
		    n);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    (i > 0 && (c == '.' || c == '_' || c == '+' || c == '~' || c == '-')))) {
			bf_diag_set(d, path, "\"%.64s\" is not a kernel release (as uname -r prints "
			    "it: [A-Za-z0-9._+~-], starting alphanumeric)", s);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

/*
 * What real kernel params use (console=ttyS0,115200 root=UUID=...
 * isolcpus=1-3 crashkernel=256M@16M acpi_osi=!Linux) and nothing a shell
 * reads: a value reaches a machine inside a remote shell command, and a
 * boot template an admin quoted wrongly must still not run it.
 */
int
job_check_cmdline(const char *s, const char *path, struct bf_diag *d)
{
	size_t i, n = strlen(s);

	if (n > JOB_MAX_CMDLINE) {
		bf_diag_set(d, path, "a command line is at most %d bytes, not %zu", JOB_MAX_CMDLINE,
		    n);
		return BF_ERR_TOOBIG;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == ' ' || (c != '\0' && strchr(JOB_CMDLINE_CHARS, c) != NULL))) {
			bf_diag_set(d, path, "has a byte the kernel command line cannot carry "
			    "(0x%02x at %zu): params are A-Z a-z 0-9 and %s, separated by spaces",
			    c, i, JOB_CMDLINE_CHARS);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

/* "kernel": "6.1.0", "cmdline": "no5lvl", "boot": {"cmdline_base": "nokaslr"} */
static int
job_parse_boot(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	json_t *boot = NULL;
	const char *s = NULL;
	int r;

	if ((r = jx_str(doc, "kernel", JX_OPTIONAL, JOB_MAX_RELEASE, &s, "", d)) != 0)
		return r;
	if (s != NULL && ((r = job_check_kernel(s, "kernel", d)) != 0 ||
	    (job->kernel = strdup(s)) == NULL))
		return r ? r : BF_ERR_ALLOC;
	s = NULL;
	if (json_is_string(json_object_get(doc, "cmdline")) &&
	    json_string_length(json_object_get(doc, "cmdline")) == 0) {
		s = "";
	} else if ((r = jx_str(doc, "cmdline", JX_OPTIONAL, JOB_MAX_CMDLINE, &s, "", d)) != 0)
		return r;
	if (s != NULL && ((r = job_check_cmdline(s, "cmdline", d)) != 0 ||
	    (job->cmdline = strdup(s)) == NULL))
		return r ? r : BF_ERR_ALLOC;
	s = NULL;
	if ((r = jx_obj(doc, "boot", JX_OPTIONAL, &boot, "", d)) != 0)
		return r;
	if (boot != NULL &&
	    ((r = jx_only_keys(boot, job_boot_keys, "boot", d)) != 0 ||
	    (r = jx_str(boot, "cmdline_base", JX_OPTIONAL, JOB_MAX_CMDLINE, &s, "boot", d)) != 0))
		return r;
	if (s != NULL && ((r = job_check_cmdline(s, "boot.cmdline_base", d)) != 0 ||
	    (job->cmdline_base = strdup(s)) == NULL))
		return r ? r : BF_ERR_ALLOC;
	return 0;
}

void
job_free(struct job_spec *job)
{
	size_t i;

	if (job == NULL)
		return;
	job_suite_free(job);
	free(job->recipe);
	free(job->target_metric);
	free(job->kernel);
	free(job->cmdline);
	free(job->cmdline_base);
	free(job->name);
	free(job->preset);
	free(job->machine_class);
	for (i = 0; i < job->nmachine_names; i++)
		free(job->machine_names[i]);
	free(job->machine_names);
	json_decref(job->matrix);
	json_decref(job->params);
	json_decref(job->knobs);
	json_decref(job->knobs_optional);
	json_decref(job->bind);
	kspec_set_free(job->kernels);
	json_decref(job->json);
	free(job);
}

/* Axis values are compared as a person would: 1 and 1.0 are the same run. */
static int
job_same_value(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	return json_equal((json_t *)a, (json_t *)b);
}

static int
job_parse_machines(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char ep[BF_DIAG_FIELD], rep[80];
	const char *s;
	json_t *m, *names = NULL, *v;
	size_t i, j;
	int r;

	if ((r = jx_obj(doc, "machines", JX_REQUIRED, &m, "", d)) != 0 ||
	    (r = jx_only_keys(m, job_machine_keys, "machines", d)) != 0)
		return r;
	s = NULL;
	if ((r = jx_str(m, "spread", JX_OPTIONAL, BF_MAX_NAME, &s, "machines", d)) != 0)
		return r;
	for (i = 0; s != NULL && job_spreads[i] != NULL && strcmp(s, job_spreads[i]) != 0; i++)
		;
	if (s != NULL && job_spreads[i] == NULL) {
		bf_diag_set(d, "machines.spread", "%s is not one of any, pin, block",
		    jx_repr(json_object_get(m, "spread"), rep, sizeof(rep)));
		return BF_ERR_INVALID;
	}
	job->spread = s != NULL ? (enum job_spread)i : JOB_SPREAD_ANY;
	if ((json_object_get(m, "class") != NULL) == (json_object_get(m, "names") != NULL)) {
		bf_diag_set(d, "machines", "give exactly one of class or names");
		return BF_ERR_INVALID;
	}
	if (json_object_get(m, "class") != NULL) {
		if ((r = jx_str(m, "class", JX_REQUIRED, BF_MAX_NAME, &s, "machines", d)) != 0 ||
		    (r = jx_check_name(s, "machines.class", d)) != 0)
			return r;
		if ((job->machine_class = strdup(s)) == NULL)
			return BF_ERR_ALLOC;
		return 0;
	}
	if ((r = jx_arr(m, "names", JX_REQUIRED, 1, JOB_MAX_MACHINES, &names, "machines",
	    d)) != 0)
		return r;
	if ((job->machine_names = calloc(json_array_size(names),
	    sizeof(*job->machine_names))) == NULL)
		return BF_ERR_ALLOC;
	json_array_foreach(names, i, v) {
		jx_path_idx(ep, sizeof(ep), "machines.names", i);
		if ((r = jx_as_str(v, BF_MAX_NAME, &s, ep, d)) != 0 ||
		    (r = jx_check_name(s, ep, d)) != 0)
			return r;
		for (j = 0; j < i; j++)
			if (strcmp(job->machine_names[j], s) == 0) {
				bf_diag_set(d, ep, "%s repeats machines.names[%zu]",
				    jx_repr(v, rep, sizeof(rep)), j);
				return BF_ERR_INVALID;
			}
		if ((job->machine_names[i] = strdup(s)) == NULL)
			return BF_ERR_ALLOC;
		job->nmachine_names++;
	}
	return 0;
}

/* A parameter value must be a scalar; its type against the recipe comes later. */
static int
job_check_scalar(const json_t *v, const char *path, struct bf_diag *d)
{
	int r = 0;

	if (!json_is_string(v) && !json_is_number(v) && !json_is_boolean(v)) {
		bf_diag_set(d, path, "expected a string, number or boolean, got %s",
		    jx_type_name(v));
		r = BF_ERR_INVALID;
	}
	return r;
}

/* One axis k (path ap) of the matrix: a name, 1..BF_MAX_AXIS_VALUES distinct
 * scalars. A bad value goes into l (collecting) and the axis stays. */
static int
job_parse_axis(json_t *matrix, const char *k, const char *ap, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char ep[BF_DIAG_FIELD], rep[80];
	json_t *arr, *v;
	size_t i, j;
	int r;

	if ((r = jx_check_name(k, ap, d)) != 0 ||
	    (r = jx_arr(matrix, k, JX_REQUIRED, 1, BF_MAX_AXIS_VALUES, &arr, "matrix", d)) != 0)
		return r;
	json_array_foreach(arr, i, v) {
		jx_path_idx(ep, sizeof(ep), ap, i);
		if ((r = job_note(job_check_scalar(v, ep, d), d, l)) != 0)
			return r;
		for (j = 0; j < i; j++)
			if (job_same_value(json_array_get(arr, j), v)) {
				bf_diag_set(d, ep, "%s repeats %s[%zu]",
				    jx_repr(v, rep, sizeof(rep)), ap, j);
				if ((r = job_note(BF_ERR_INVALID, d, l)) != 0)
					return r;
				break;
			}
	}
	return 0;
}

/* The matrix; collecting, job->matrix keeps the axes of the right shape. */
static int
job_parse_matrix(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char ap[BF_DIAG_FIELD];
	const char *k;
	json_t *matrix = NULL, *good = NULL, *arr;
	size_t n;
	int r;

	if ((r = jx_obj(doc, "matrix", JX_OPTIONAL, &matrix, "", d)) != 0)
		goto out;
	if ((good = json_object()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((n = json_object_size(matrix)) > BF_MAX_AXES) {
		bf_diag_set(d, "matrix", "has %zu axes; at most %d allowed", n, BF_MAX_AXES);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	json_object_foreach(matrix, k, arr) {
		jx_path(ap, sizeof(ap), "matrix", k);
		if ((r = job_parse_axis(matrix, k, ap, d, l)) == 0) {
			if (json_object_set(good, k, arr) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
		} else if ((r = job_note(r, d, l)) != 0)
			goto out;
	}
	if ((r = matrix_count(good, &n, d)) != 0)
		goto out;
	job->matrix = good;
	good = NULL;
out:
	json_decref(good);
	return r;
}

static int
job_parse_params(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char pp[BF_DIAG_FIELD];
	const char *k;
	json_t *params = NULL, *v;
	int r;

	if ((r = jx_obj(doc, "params", JX_OPTIONAL, &params, "", d)) != 0)
		return r;
	if (params == NULL) {
		if ((job->params = json_object()) == NULL)
			return BF_ERR_ALLOC;
		return 0;
	}
	if (json_object_size(params) > BF_MAX_PARAMS) {
		bf_diag_set(d, "params", "has %zu values; at most %d allowed",
		    json_object_size(params), BF_MAX_PARAMS);
		return BF_ERR_TOOBIG;
	}
	json_object_foreach(params, k, v) {
		jx_path(pp, sizeof(pp), "params", k);
		if ((r = jx_check_name(k, pp, d)) == 0 && (r = job_check_scalar(v, pp, d)) == 0 &&
		    json_object_get(job->matrix, k) != NULL) {
			bf_diag_set(d, pp, "is also a matrix axis; a parameter is an axis or a "
			    "fixed value, not both");
			r = BF_ERR_INVALID;
		}
		if ((r = job_note(r, d, l)) != 0)
			return r;
	}
	job->params = json_incref(params);
	return 0;
}

static int
job_parse_reps(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	json_t *reps = NULL;
	int64_t it = 5, wu = 0, bo = 1, minb = 2, maxb = 10, gap = 0;
	double target = 0;
	const char *metric = NULL;
	int r;

	if ((r = jx_obj(doc, "repetitions", JX_OPTIONAL, &reps, "", d)) != 0)
		return r;
	if (reps != NULL && json_object_get(reps, "target_ci_pct") != NULL) {
		/* adaptive: boots are added while the CI is wider than the target */
		if ((r = jx_num(reps, "target_ci_pct", JX_REQUIRED, 0.001, 1000, &target,
		    "repetitions", d)) != 0 ||
		    (r = jx_int(reps, "min_boots", JX_OPTIONAL, 2, BF_MAX_BOOTS, &minb,
		    "repetitions", d)) != 0 ||
		    (r = jx_int(reps, "max_boots", JX_OPTIONAL, 2, BF_MAX_BOOTS, &maxb,
		    "repetitions", d)) != 0 ||
		    (r = jx_str(reps, "target_metric", JX_OPTIONAL, BF_MAX_NAME, &metric,
		    "repetitions", d)) != 0)
			return r;
		if (json_object_get(reps, "boots") != NULL) {
			bf_diag_set(d, "repetitions.boots", "cannot be given with target_ci_pct; "
			    "use min_boots and max_boots");
			return BF_ERR_INVALID;
		}
		if (maxb < minb) {
			bf_diag_set(d, "repetitions.max_boots", "%lld is below min_boots %lld",
			    (long long)maxb, (long long)minb);
			return BF_ERR_INVALID;
		}
		bo = minb;
		job->target_ci_pct = target;
		job->min_boots = (int)minb;
		job->max_boots = (int)maxb;
		if (metric != NULL && (job->target_metric = strdup(metric)) == NULL)
			return BF_ERR_ALLOC;
	} else if (reps != NULL && (json_object_get(reps, "min_boots") != NULL ||
	    json_object_get(reps, "max_boots") != NULL ||
	    json_object_get(reps, "target_metric") != NULL)) {
		bf_diag_set(d, "repetitions", "min_boots, max_boots and target_metric need "
		    "target_ci_pct");
		return BF_ERR_INVALID;
	}
	if (reps != NULL &&
	    ((r = jx_only_keys(reps, job_rep_keys, "repetitions", d)) != 0 ||
	    (r = jx_int(reps, "iterations", JX_OPTIONAL, 1, BF_MAX_ITERATIONS, &it,
	    "repetitions", d)) != 0 ||
	    (r = jx_int(reps, "warmup", JX_OPTIONAL, 0, BF_MAX_WARMUP, &wu, "repetitions", d)) != 0 ||
	    (r = jx_int(reps, "gap_ms", JX_OPTIONAL, 0, BF_MAX_GAP_MS, &gap, "repetitions",
	    d)) != 0 ||
	    (r = jx_int(reps, "boots", JX_OPTIONAL, 1, BF_MAX_BOOTS, &bo, "repetitions",
	    d)) != 0))
		return r;
	job->iterations = (int)it;
	job->warmup = (int)wu;
	job->gap_ms = (int)gap;
	job->boots = (int)bo;
	return 0;
}

static int
job_parse_order(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char rep[80];
	const char *s = NULL;
	size_t i;
	int r;

	if ((r = jx_str(doc, "order", JX_OPTIONAL, BF_MAX_NAME, &s, "", d)) != 0)
		return r;
	job->interleaved = 1;	/* the default: boot-major, as claims always were */
	if (s == NULL)
		return 0;
	for (i = 0; i < sizeof(job_orders) / sizeof(job_orders[0]); i++)
		if (strcmp(s, job_orders[i].name) == 0) {
			job->interleaved = job_orders[i].interleaved;
			return 0;
		}
	bf_diag_set(d, "order", "%s is not one of sequential, interleaved",
	    jx_repr(json_object_get(doc, "order"), rep, sizeof(rep)));
	return BF_ERR_INVALID;
}

/* A knob value as text: strings as they are, integers in decimal. */
int
job_knob_text(const json_t *v, char *out, size_t outsz)
{
	if (json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v)) {
		snprintf(out, outsz, "%s", json_string_value(v));
		return 0;
	}
	if (json_is_integer(v)) {
		snprintf(out, outsz, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return 0;
	}
	return BF_ERR_INVALID;
}

int
job_check_knob(const char *name, const json_t *v, const char *path, struct bf_diag *d)
{
	char text[KNOB_MAX_VALUE * 4], why[KNOB_MAX_WHY];
	int r;

	if (job_knob_text(v, text, sizeof(text)) != 0) {
		bf_diag_set(d, path, "expected a string or an integer, got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	if (json_is_string(v) && json_string_length(v) >= sizeof(text))
		snprintf(text, sizeof(text), "%.60s...", json_string_value(v));
	if ((r = knob_check(name, text, why, sizeof(why))) != 0) {
		bf_diag_set(d, path, "%s", why);
		return BF_ERR_INVALID;	/* a bad job, not a missing resource */
	}
	return 0;
}

static int
job_parse_knobs(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char kp[BF_DIAG_FIELD];
	const char *k;
	json_t *knobs = NULL, *v;
	int r;

	if ((r = jx_obj(doc, "knobs", JX_OPTIONAL, &knobs, "", d)) != 0)
		return r;
	if (knobs == NULL) {
		if ((job->knobs = json_object()) == NULL)
			return BF_ERR_ALLOC;
		return 0;
	}
	if (json_object_size(knobs) > JOB_MAX_KNOBS) {
		bf_diag_set(d, "knobs", "has %zu knobs; at most %d allowed",
		    json_object_size(knobs), JOB_MAX_KNOBS);
		return BF_ERR_TOOBIG;
	}
	json_object_foreach(knobs, k, v) {
		jx_path(kp, sizeof(kp), "knobs", k);
		if ((r = job_check_knob(k, v, kp, d)) == 0 &&
		    json_object_get(job->matrix, k) != NULL) {
			bf_diag_set(d, kp, "is also a matrix axis; a knob is an axis or a fixed "
			    "value, not both");
			r = BF_ERR_INVALID;
		}
		if ((r = job_note(r, d, l)) != 0)
			return r;
	}
	job->knobs = json_incref(knobs);
	return 0;
}

/*
 * "knobs_optional": ["mthp_16kB"]: knobs of this job (fixed or an axis, or
 * of one of its suite entries) that a machine may lack; the agent records
 * them absent there instead of failing the run. Parsed after knobs and
 * matrix; a suite entry keeps the names its own cells set (job-suite.c).
 */
static int
job_parse_knobs_optional(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char kp[BF_DIAG_FIELD];
	const char *name;
	json_t *arr = NULL, *v;
	size_t i, j;
	int r;

	if ((r = jx_arr(doc, "knobs_optional", JX_OPTIONAL, 0, JOB_MAX_KNOBS, &arr, "", d)) != 0)
		return r;
	if (arr == NULL)
		return 0;
	json_array_foreach(arr, i, v) {
		snprintf(kp, sizeof(kp), "knobs_optional[%zu]", i);
		if ((r = jx_as_str(v, BF_MAX_NAME, &name, kp, d)) != 0)
			return r;
		if (knob_find(name) == NULL ||
		    (json_object_get(job->knobs, name) == NULL &&
		    json_object_get(job->matrix, name) == NULL &&
		    !job_suite_sets_knob(doc, name))) {
			bf_diag_set(d, kp, "\"%.64s\" is not a knob of this job (its knobs, "
			    "a knob axis of its matrix or a suite entry's)", name);
			return BF_ERR_INVALID;
		}
		for (j = 0; j < i; j++)
			if (strcmp(json_string_value(json_array_get(arr, j)), name) == 0) {
				bf_diag_set(d, kp, "\"%.64s\" is listed twice", name);
				return BF_ERR_INVALID;
			}
	}
	job->knobs_optional = json_incref(arr);
	return 0;
}

/* "0-3,8": digits, commas and dashes; the agent checks it against the machine. */
static int
job_check_list(const json_t *v, const char *path, struct bf_diag *d)
{
	const char *s;
	size_t i;

	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) < 1024)
		return 0;
	if (!json_is_string(v)) {
		bf_diag_set(d, path, "expected a list like \"0-3,8\", got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	s = json_string_value(v);
	if (s[0] == '\0' || json_string_length(v) > JOB_MAX_BIND_LIST ||
	    strlen(s) != json_string_length(v)) {
		bf_diag_set(d, path, "expected a list like \"0-3,8\"");
		return BF_ERR_INVALID;
	}
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == ',' || s[i] == '-') ||
		    (s[i] != ',' && s[i] != '-' ? 0 : i == 0 || s[i + 1] == '\0' ||
		    s[i + 1] == ',' || s[i + 1] == '-')) {
			bf_diag_set(d, path, "\"%.60s\" is not a list like \"0-3,8\"", s);
			return BF_ERR_INVALID;
		}
	return 0;
}

static int
job_parse_bind(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	char bp[BF_DIAG_FIELD];
	json_t *bind = NULL, *v;
	const char *k;
	int r, b;

	job->aslr = -1;
	job->drop_caches = 0;
	if ((r = jx_obj(doc, "bind", JX_OPTIONAL, &bind, "", d)) != 0)
		return r;
	if (bind != NULL) {
		if ((r = jx_only_keys(bind, job_bind_keys, "bind", d)) != 0)
			return r;
		json_object_foreach(bind, k, v) {
			jx_path(bp, sizeof(bp), "bind", k);
			if ((r = job_check_list(v, bp, d)) != 0)
				return r;
		}
		job->bind = json_incref(bind);
	}
	if (json_object_get(doc, "aslr") != NULL) {
		if ((r = jx_bool(doc, "aslr", JX_OPTIONAL, &b, "", d)) != 0)
			return r;
		job->aslr = b;
	}
	if (json_object_get(doc, "drop_caches") != NULL) {
		if ((r = jx_bool(doc, "drop_caches", JX_OPTIONAL, &b, "", d)) != 0)
			return r;
		job->drop_caches = b;
	}
	return 0;
}

/* "profile": {"perf": "record", "freq": 999}: the only profiler is perf
 * record, and its values reach the agent as data, never a shell. */
static int
job_parse_profile(struct job_spec *job, json_t *doc, struct bf_diag *d,
    struct bf_diag_list *l)
{
	json_t *pr = NULL;
	const char *how = NULL;
	int64_t freq = BF_PROFILE_DEFAULT_FREQ;
	int r;

	if ((r = jx_obj(doc, "profile", JX_OPTIONAL, &pr, "", d)) != 0 || pr == NULL)
		return r;
	if ((r = jx_only_keys(pr, job_profile_keys, "profile", d)) != 0 ||
	    (r = jx_str(pr, "perf", JX_REQUIRED, BF_MAX_NAME, &how, "profile", d)) != 0 ||
	    (r = jx_int(pr, "freq", JX_OPTIONAL, 1, BF_MAX_PROFILE_FREQ, &freq, "profile",
	    d)) != 0)
		return r;
	if (strcmp(how, "record") != 0) {
		bf_diag_set(d, "profile.perf", "\"%.64s\" is not one of record", how);
		return BF_ERR_INVALID;
	}
	job->profile_perf = 1;
	job->profile_freq = (int)freq;
	return 0;
}

/* strdup of an optional string that must also be a valid name when check_name. */
static int
job_dup_str(const json_t *doc, const char *key, int required, size_t maxlen, int check_name,
    char **out, struct bf_diag *d)
{
	const char *s = NULL;
	int r;

	if ((r = jx_str(doc, key, required, maxlen, &s, "", d)) != 0)
		return r;
	if (s != NULL && check_name && (r = jx_check_name(s, key, d)) != 0)
		return r;
	for (size_t i = 0; s != NULL && s[i] != '\0'; i++) {
		/* a name is shown on one line: in tables, reports, mail */
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			bf_diag_set(d, key, "has a control character at byte %zu", i);
			return BF_ERR_INVALID;
		}
	}
	if (s != NULL && (*out = strdup(s)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* Collecting (l), a field error r goes into l and 0 is returned to go
 * on; anything else (or not collecting) is returned as it is. */
int
job_note(int r, const struct bf_diag *d, struct bf_diag_list *l)
{
	if (r == 0 || l == NULL ||
	    (r != BF_ERR_INVALID && r != BF_ERR_RANGE && r != BF_ERR_PARSE))
		return r;
	bf_diag_list_add(l, d);
	return 0;
}

/* The end of a collecting check that began with before errors in l: r, or
 * BF_ERR_INVALID with d the first of l when it found some. */
int
job_notes_end(int r, struct bf_diag *d, const struct bf_diag_list *l, size_t before)
{
	if (r != 0 || l == NULL || l->total == before)
		return r;
	if (d != NULL)
		*d = l->item[0];
	return BF_ERR_INVALID;
}

/* Every key of the document is one of job_keys. */
static int
job_check_keys(struct job_spec *job, json_t *doc, struct bf_diag *d, struct bf_diag_list *l)
{
	char list[BF_DIAG_MSG], p[BF_DIAG_FIELD];
	const char *k;
	json_t *v;
	size_t i, off = 0;
	int n, r;

	list[0] = '\0';
	for (i = 0; job_keys[i] != NULL && off < sizeof(list); i++) {
		if ((n = snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
		    job_keys[i])) < 0)
			break;
		off += (size_t)n;
	}
	json_object_foreach(doc, k, v) {
		for (i = 0; job_keys[i] != NULL && strcmp(k, job_keys[i]) != 0; i++)
			;
		if (job_keys[i] != NULL)
			continue;
		bf_diag_set(d, jx_path(p, sizeof(p), "", k), "unknown key; expected one of %s",
		    list);
		if ((r = job_note(BF_ERR_INVALID, d, l)) != 0)
			return r;
	}
	return 0;
}

static int
job_is_suite_doc(const json_t *doc)
{
	return json_object_get(doc, "suite") != NULL;
}

static int
job_s_recipe(struct job_spec *job, json_t *doc, struct bf_diag *d, struct bf_diag_list *l)
{
	return job_is_suite_doc(doc) ? 0 :
	    job_dup_str(doc, "recipe", JX_REQUIRED, BF_MAX_NAME, 1, &job->recipe, d);
}

static int
job_s_name(struct job_spec *job, json_t *doc, struct bf_diag *d, struct bf_diag_list *l)
{
	return job_dup_str(doc, "name", JX_OPTIONAL, JOB_NAME_MAX, 0, &job->name, d);
}

static int
job_s_preset(struct job_spec *job, json_t *doc, struct bf_diag *d, struct bf_diag_list *l)
{
	return job_is_suite_doc(doc) ? 0 :
	    job_dup_str(doc, "preset", JX_OPTIONAL, BF_MAX_NAME, 1, &job->preset, d);
}

static int
job_s_kernels(struct job_spec *job, json_t *doc, struct bf_diag *d, struct bf_diag_list *l)
{
	return kspec_parse(doc, &job->kernels, d);
}

static int
job_s_named(struct job_spec *job, json_t *doc, struct bf_diag *d, struct bf_diag_list *l)
{
	return kspec_check_named(job->kernels, job->kernel,
	    json_object_get(job->matrix, "kernel"), d);
}

static int
job_s_suite(struct job_spec *job, json_t *doc, struct bf_diag *d, struct bf_diag_list *l)
{
	return job_is_suite_doc(doc) ? job_suite_parse(job, doc, d) : 0;
}

/* an adaptive boot is added to one cell as it goes; block's run sets
 * per machine would each need their own stopping rule */
static int
job_s_spread(struct job_spec *job, json_t *doc, struct bf_diag *d, struct bf_diag_list *l)
{
	if (job->spread == JOB_SPREAD_BLOCK && job->target_ci_pct > 0) {
		bf_diag_set(d, "machines.spread", "\"block\" does not combine with adaptive "
		    "repetitions (target_ci_pct): give boots, or spread any or pin");
		return BF_ERR_INVALID;
	}
	return 0;
}

/*
 * The sections of a job document, in order (later ones read what earlier
 * ones set: knobs_optional the knobs and matrix). A "whole" section reads
 * several sections, so it runs only when every one before it was sound.
 */
static const struct {
	int (*fn)(struct job_spec *, json_t *, struct bf_diag *, struct bf_diag_list *);
	int whole;
} job_sections[] = {
	{ job_check_keys, 0 },
	{ job_s_recipe, 0 },
	{ job_s_name, 0 },
	{ job_s_preset, 0 },
	{ job_parse_machines, 0 },
	{ job_parse_matrix, 0 },
	{ job_parse_params, 0 },
	{ job_parse_knobs, 0 },
	{ job_parse_knobs_optional, 0 },
	{ job_parse_bind, 0 },
	{ job_parse_profile, 0 },
	{ job_parse_reps, 0 },
	{ job_parse_order, 0 },
	{ job_parse_boot, 0 },
	{ job_s_kernels, 0 },
	{ job_s_named, 1 },
	{ job_s_suite, 1 },
	{ job_s_spread, 1 },
};

int
job_from_json(json_t *doc, struct job_spec **out, struct bf_diag *d)
{
	return job_from_json_all(doc, out, d, NULL);
}

int
job_from_json_all(json_t *doc, struct job_spec **out, struct bf_diag *d,
    struct bf_diag_list *l)
{
	struct job_spec *job = NULL;
	size_t i, before = l != NULL ? l->total : 0;
	int r;

	bf_diag_clear(d);
	if (!json_is_object(doc)) {
		bf_diag_set(d, "job", "expected an object, got %s",
		    doc != NULL ? jx_type_name(doc) : "nothing");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((job = calloc(1, sizeof(*job))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	job->json = json_incref(doc);
	for (i = 0; i < sizeof(job_sections) / sizeof(job_sections[0]); i++) {
		if (job_sections[i].whole && l != NULL && l->total != before)
			break;
		if ((r = job_note(job_sections[i].fn(job, doc, d, l), d, l)) != 0)
			goto out;
	}
	if ((r = job_notes_end(0, d, l, before)) != 0) {
		/* collecting: the job as far as it parsed, for job_validate_all */
		*out = job;
		job = NULL;
		goto out;
	}
	*out = job;
	job = NULL;
	r = 0;
out:
	job_free(job);
	return r;
}

int
job_parse(const char *text, size_t len, struct job_spec **out, struct bf_diag *d)
{
	return job_parse_all(text, len, out, d, NULL);
}

int
job_parse_with(const char *text, size_t len, int (*fill)(json_t *doc),
    struct job_spec **out, struct bf_diag *d, struct bf_diag_list *l)
{
	json_t *doc = NULL;
	int r;

	if ((r = jx_loads(text, len, BF_MAX_API_BODY, &doc, d)) != 0)
		goto out;
	if (fill != NULL && (r = fill(doc)) != 0) {
		bf_diag_set(d, NULL, "out of memory");
		goto out;
	}
	r = job_from_json_all(doc, out, d, l);
out:
	json_decref(doc);
	return r;
}

int
job_parse_all(const char *text, size_t len, struct job_spec **out, struct bf_diag *d,
    struct bf_diag_list *l)
{
	return job_parse_with(text, len, NULL, out, d, l);
}

int
job_base_values(const struct job_spec *job, const struct recipe *rc, json_t **out,
    struct bf_diag *d)
{
	json_t *vals = NULL, *preset = NULL, *v;
	const char *k;
	size_t i;
	int r;

	if ((vals = json_object()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	/* scalars are shared, not copied: nothing here mutates a value */
	for (i = 0; i < rc->nparams; i++)
		if (json_object_set(vals, rc->params[i].name, rc->params[i].def) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	if (job->preset != NULL && (preset = json_object_get(rc->presets, job->preset)) == NULL) {
		bf_diag_set(d, "preset", "\"%s\" is not a preset of recipe %s", job->preset,
		    rc->name);
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	if (preset != NULL)
		json_object_foreach(preset, k, v)
			if (json_object_set(vals, k, v) != 0) {
				r = BF_ERR_ALLOC;
				goto out;
			}
	json_object_foreach(job->params, k, v)
		if (json_object_set(vals, k, v) != 0) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	*out = vals;
	vals = NULL;
	r = 0;
out:
	json_decref(vals);
	return r;
}

int
job_knob_defaults(const struct job_spec *job, const struct recipe *rc, const json_t *axes,
    const json_t *knobs, json_t *values)
{
	const json_t *preset = NULL, *v;
	const char *name;
	size_t i;

	if (job->preset != NULL)
		preset = json_object_get(rc->presets, job->preset);
	for (i = 0; i < rc->nparams; i++) {
		name = rc->params[i].name;
		if (json_object_get(job->params, name) != NULL ||
		    (preset != NULL && json_object_get(preset, name) != NULL) ||
		    (axes != NULL && json_object_get(axes, name) != NULL) ||
		    (v = recipe_param_from_knob(&rc->params[i], knobs)) == NULL)
			continue;
		if (json_object_set(values, name, (json_t *)v) != 0)
			return BF_ERR_ALLOC;
	}
	return 0;
}

const char *
job_spread_name(enum job_spread sp)
{
	return (unsigned)sp < sizeof(job_spreads) / sizeof(job_spreads[0]) - 1 ?
	    job_spreads[sp] : "any";
}
