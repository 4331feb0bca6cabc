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
static const char *const job_machine_keys[] = { "class", "names", NULL };
static const char *const job_rep_keys[] = { "boots", "iterations", "warmup",
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
job_parse_boot(struct job_spec *job, const json_t *doc, struct bf_diag *d)
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
job_parse_machines(struct job_spec *job, const json_t *doc, struct bf_diag *d)
{
	char ep[BF_DIAG_FIELD], rep[80];
	const char *s;
	json_t *m, *names = NULL, *v;
	size_t i, j;
	int r;

	if ((r = jx_obj(doc, "machines", JX_REQUIRED, &m, "", d)) != 0 ||
	    (r = jx_only_keys(m, job_machine_keys, "machines", d)) != 0)
		return r;
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

static int
job_parse_matrix(struct job_spec *job, const json_t *doc, struct bf_diag *d)
{
	char ap[BF_DIAG_FIELD], ep[BF_DIAG_FIELD], rep[80];
	const char *k;
	json_t *matrix = NULL, *arr, *v;
	size_t i, j, n;
	int r;

	if ((r = jx_obj(doc, "matrix", JX_OPTIONAL, &matrix, "", d)) != 0)
		return r;
	if (matrix == NULL) {
		if ((job->matrix = json_object()) == NULL)
			return BF_ERR_ALLOC;
		return 0;
	}
	if ((n = json_object_size(matrix)) > BF_MAX_AXES) {
		bf_diag_set(d, "matrix", "has %zu axes; at most %d allowed", n, BF_MAX_AXES);
		return BF_ERR_TOOBIG;
	}
	json_object_foreach(matrix, k, arr) {
		jx_path(ap, sizeof(ap), "matrix", k);
		if ((r = jx_check_name(k, ap, d)) != 0 ||
		    (r = jx_arr(matrix, k, JX_REQUIRED, 1, BF_MAX_AXIS_VALUES, &arr, "matrix",
		    d)) != 0)
			return r;
		json_array_foreach(arr, i, v) {
			jx_path_idx(ep, sizeof(ep), ap, i);
			if ((r = job_check_scalar(v, ep, d)) != 0)
				return r;
			for (j = 0; j < i; j++)
				if (job_same_value(json_array_get(arr, j), v)) {
					bf_diag_set(d, ep, "%s repeats %s[%zu]",
					    jx_repr(v, rep, sizeof(rep)), ap, j);
					return BF_ERR_INVALID;
				}
		}
	}
	if ((r = matrix_count(matrix, &n, d)) != 0)
		return r;
	job->matrix = json_incref(matrix);
	return 0;
}

static int
job_parse_params(struct job_spec *job, const json_t *doc, struct bf_diag *d)
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
		if ((r = jx_check_name(k, pp, d)) != 0 || (r = job_check_scalar(v, pp, d)) != 0)
			return r;
		if (json_object_get(job->matrix, k) != NULL) {
			bf_diag_set(d, pp, "is also a matrix axis; a parameter is an axis or a "
			    "fixed value, not both");
			return BF_ERR_INVALID;
		}
	}
	job->params = json_incref(params);
	return 0;
}

static int
job_parse_reps(struct job_spec *job, const json_t *doc, struct bf_diag *d)
{
	json_t *reps = NULL;
	int64_t it = 5, wu = 0, bo = 1, minb = 2, maxb = 10;
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
	    (r = jx_int(reps, "boots", JX_OPTIONAL, 1, BF_MAX_BOOTS, &bo, "repetitions",
	    d)) != 0))
		return r;
	job->iterations = (int)it;
	job->warmup = (int)wu;
	job->boots = (int)bo;
	return 0;
}

static int
job_parse_order(struct job_spec *job, const json_t *doc, struct bf_diag *d)
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

/* Check value v of knob name; path names v in the message. */
static int
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
job_parse_knobs(struct job_spec *job, const json_t *doc, struct bf_diag *d)
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
		if ((r = job_check_knob(k, v, kp, d)) != 0)
			return r;
		if (json_object_get(job->matrix, k) != NULL) {
			bf_diag_set(d, kp, "is also a matrix axis; a knob is an axis or a fixed "
			    "value, not both");
			return BF_ERR_INVALID;
		}
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
job_parse_knobs_optional(struct job_spec *job, const json_t *doc, struct bf_diag *d)
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
job_parse_bind(struct job_spec *job, const json_t *doc, struct bf_diag *d)
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
job_parse_profile(struct job_spec *job, const json_t *doc, struct bf_diag *d)
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

int
job_from_json(json_t *doc, struct job_spec **out, struct bf_diag *d)
{
	struct job_spec *job = NULL;
	int r, suite;

	bf_diag_clear(d);
	if (!json_is_object(doc)) {
		bf_diag_set(d, "job", "expected an object, got %s",
		    doc != NULL ? jx_type_name(doc) : "nothing");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = jx_only_keys(doc, job_keys, "", d)) != 0)
		goto out;
	if ((job = calloc(1, sizeof(*job))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	job->json = json_incref(doc);
	suite = json_object_get(doc, "suite") != NULL;
	if ((!suite &&
	    (r = job_dup_str(doc, "recipe", JX_REQUIRED, BF_MAX_NAME, 1, &job->recipe, d)) != 0) ||
	    (r = job_dup_str(doc, "name", JX_OPTIONAL, JOB_NAME_MAX, 0, &job->name, d)) != 0 ||
	    (!suite &&
	    (r = job_dup_str(doc, "preset", JX_OPTIONAL, BF_MAX_NAME, 1, &job->preset, d)) != 0) ||
	    (r = job_parse_machines(job, doc, d)) != 0 ||
	    (r = job_parse_matrix(job, doc, d)) != 0 ||
	    (r = job_parse_params(job, doc, d)) != 0 ||
	    (r = job_parse_knobs(job, doc, d)) != 0 ||
	    (r = job_parse_knobs_optional(job, doc, d)) != 0 ||
	    (r = job_parse_bind(job, doc, d)) != 0 ||
	    (r = job_parse_profile(job, doc, d)) != 0 ||
	    (r = job_parse_reps(job, doc, d)) != 0 ||
	    (r = job_parse_order(job, doc, d)) != 0 ||
	    (r = job_parse_boot(job, doc, d)) != 0 ||
	    (r = kspec_parse(doc, &job->kernels, d)) != 0 ||
	    (r = kspec_check_named(job->kernels, job->kernel,
	    json_object_get(job->matrix, "kernel"), d)) != 0 ||
	    (suite && (r = job_suite_parse(job, doc, d)) != 0))
		goto out;
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
	json_t *doc = NULL;
	int r;

	if ((r = jx_loads(text, len, BF_MAX_API_BODY, &doc, d)) != 0)
		goto out;
	r = job_from_json(doc, out, d);
out:
	json_decref(doc);
	return r;
}

/* Preset names, comma-separated, for the message about a missing one. */
static const char *
job_preset_names(const struct recipe *r, char *buf, size_t bufsz)
{
	const char *k;
	json_t *v;
	size_t off = 0;
	int n;

	buf[0] = '\0';
	json_object_foreach(r->presets, k, v) {
		if (off >= bufsz)
			break;
		n = snprintf(buf + off, bufsz - off, "%s%s", off ? ", " : "", k);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, bufsz, "(none)");
	return buf;
}

/*
 * A path parameter the job leaves to its preset or the recipe's default
 * must be under the root too: the recipe was checked without one.
 */
static int
job_check_path_defaults(const struct job_spec *job, const struct recipe *rc,
    const char *root, struct bf_diag *d)
{
	char ap[BF_DIAG_FIELD];
	struct bf_diag sub;
	const struct recipe_param *p;
	const json_t *preset = NULL, *v;
	size_t i;
	int r;

	if (job->preset != NULL)
		preset = json_object_get(rc->presets, job->preset);
	for (i = 0; i < rc->nparams; i++) {
		p = &rc->params[i];
		if (p->type != RECIPE_P_PATH || json_object_get(job->matrix, p->name) != NULL ||
		    json_object_get(job->params, p->name) != NULL)
			continue;
		v = preset != NULL ? json_object_get(preset, p->name) : NULL;
		jx_path(ap, sizeof(ap), "params", p->name);
		bf_diag_clear(&sub);
		if ((r = recipe_check_value(p, v != NULL ? v : p->def, root, ap, &sub)) != 0) {
			bf_diag_set(d, ap, "%s (the %s%s of recipe %s; give params.%s)",
			    sub.msg + (strncmp(sub.msg, ap, strlen(ap)) == 0 ? strlen(ap) + 2 : 0),
			    v != NULL ? "value in preset " : "default", v != NULL ? job->preset : "",
			    rc->name, p->name);
			return r;
		}
	}
	return 0;
}

int
job_validate(const struct job_spec *job, const struct recipe *rc, const char *workdir_root,
    struct bf_diag *d)
{
	char ap[BF_DIAG_FIELD], ep[BF_DIAG_FIELD], names[BF_DIAG_MSG];
	const struct recipe_param *p;
	const char *k;
	json_t *arr, *v;
	size_t i, n;
	int r;

	bf_diag_clear(d);
	if (job_is_suite(job)) {
		bf_diag_set(d, "suite", "a suite is validated entry by entry "
		    "(job_validate_suite)");
		return BF_ERR_INVALID;
	}
	if (strcmp(job->recipe, rc->name) != 0) {
		bf_diag_set(d, "recipe", "job names \"%s\" but the recipe is \"%s\"", job->recipe,
		    rc->name);
		return BF_ERR_INVALID;
	}
	if (job->target_metric != NULL) {
		for (i = 0; i < rc->nmetrics; i++)
			if (strcmp(rc->metrics[i].name, job->target_metric) == 0)
				break;
		if (i == rc->nmetrics) {
			bf_diag_set(d, "repetitions.target_metric", "\"%s\" is not a metric of "
			    "recipe %s", job->target_metric, rc->name);
			return BF_ERR_INVALID;
		}
	}
	if (job->preset != NULL && json_object_get(rc->presets, job->preset) == NULL) {
		bf_diag_set(d, "preset", "\"%s\" is not one of %s", job->preset,
		    job_preset_names(rc, names, sizeof(names)));
		return BF_ERR_INVALID;
	}
	json_object_foreach(job->matrix, k, arr) {
		jx_path(ap, sizeof(ap), "matrix", k);
		p = recipe_param(rc, k);
		if (p != NULL && knob_find(k) != NULL) {
			bf_diag_set(d, ap, "is both a parameter of recipe %s and a knob; rename "
			    "the parameter", rc->name);
			return BF_ERR_INVALID;
		}
		if (p == NULL && knob_find(k) != NULL) {
			json_array_foreach(arr, i, v) {
				jx_path_idx(ep, sizeof(ep), ap, i);
				if ((r = job_check_knob(k, v, ep, d)) != 0)
					return r;
			}
			continue;
		}
		if (p == NULL && job_is_boot_axis(k)) {
			if (json_object_get(job->json, k) != NULL) {
				bf_diag_set(d, ap, "is both an axis and a fixed \"%s\" of the job", k);
				return BF_ERR_INVALID;
			}
			json_array_foreach(arr, i, v) {
				jx_path_idx(ep, sizeof(ep), ap, i);
				if (!json_is_string(v)) {
					bf_diag_set(d, ep, "expected a string, got %s",
					    jx_type_name(v));
					return BF_ERR_INVALID;
				}
				if ((r = strcmp(k, "kernel") == 0 ?
				    job_check_kernel(json_string_value(v), ep, d) :
				    job_check_cmdline(json_string_value(v), ep, d)) != 0)
					return r;
			}
			continue;
		}
		if (p == NULL) {
			bf_diag_set(d, ap, "names no parameter or knob; parameters are %s",
			    recipe_param_names(rc, names, sizeof(names)));
			return BF_ERR_INVALID;
		}
		json_array_foreach(arr, i, v) {
			jx_path_idx(ep, sizeof(ep), ap, i);
			if ((r = recipe_check_value(p, v, workdir_root, ep, d)) != 0)
				return r;
		}
	}
	json_object_foreach(job->params, k, v) {
		jx_path(ap, sizeof(ap), "params", k);
		if ((p = recipe_param(rc, k)) == NULL) {
			bf_diag_set(d, ap, "names no parameter; parameters are %s",
			    recipe_param_names(rc, names, sizeof(names)));
			return BF_ERR_INVALID;
		}
		if ((r = recipe_check_value(p, v, workdir_root, ap, d)) != 0)
			return r;
	}
	if ((r = job_check_path_defaults(job, rc, workdir_root, d)) != 0)
		return r;
	json_object_foreach(job->knobs, k, v) {
		if (recipe_param(rc, k) != NULL) {
			bf_diag_set(d, jx_path(ap, sizeof(ap), "knobs", k), "is both a parameter "
			    "of recipe %s and a knob; rename the parameter", rc->name);
			return BF_ERR_INVALID;
		}
	}
	if ((r = matrix_count(job->matrix, &n, d)) != 0)
		return r;
	return 0;
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
