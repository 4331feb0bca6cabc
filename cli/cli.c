/*
 * cli.c: calling the coordinator's API and turning its answers into text
 * for a person. Everything here treats the answer as untrusted: values
 * are type-checked before use and sanitised before they reach a terminal.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "err.h"
#include "jx.h"
#include "parse.h"
#include "table.h"

#define CLI_MSG_MAX	1000	/* code points of a server message we show */

void
cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("benchfleet: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int
cli_status_err(long status)
{
	switch (status) {
	case 400:
	case 422:
		return BF_ERR_INVALID;
	case 401:
	case 403:
		return BF_ERR_AUTH;
	case 404:
		return BF_ERR_NOTFOUND;
	case 409:
		return BF_ERR_STATE;
	case 413:
		return BF_ERR_TOOBIG;
	default:
		return BF_ERR_PROTO;
	}
}

/* The rest of a refused job's detail.errors (the first is "error"): one
 * line each, and how many more the coordinator found past its cap. */
static void
cli_report_more(const json_t *detail)
{
	const json_t *errs = json_object_get(detail, "errors"), *e;
	json_int_t total = json_integer_value(json_object_get(detail, "errors_total"));
	char *t;
	size_t i;

	for (i = 1; i < json_array_size(errs); i++) {
		e = json_object_get(json_array_get(errs, i), "error");
		if (json_is_string(e) && (t = table_sanitize(json_string_value(e), CLI_MSG_MAX)) != NULL) {
			cli_err("%s", t);
			free(t);
		}
	}
	if (total > (json_int_t)json_array_size(errs))
		cli_err("... and %lld more errors", (long long)(total - (json_int_t)json_array_size(errs)));
}

/* Print the error of a non-2xx answer: {"error": "...", "detail": ...}. */
static void
cli_report_status(const struct http_resp *resp)
{
	json_t *doc = NULL, *detail;
	const char *error = NULL, *extra = NULL, *field = NULL, *s;
	char *e1 = NULL, *e2 = NULL, *body = NULL;
	struct bf_diag d;
	size_t n;

	if (resp->body.len > 0 &&
	    jx_loads(resp->body.data, resp->body.len, BF_MAX_API_RESPONSE, &doc, &d) == 0 &&
	    json_is_object(doc) && json_is_string(json_object_get(doc, "error")))
		error = json_string_value(json_object_get(doc, "error"));
	if (error == NULL) {
		/* Not our API's error shape: show the first line of whatever came. */
		if (resp->body.len > 0) {
			n = strcspn(resp->body.data, "\r\n");
			if ((body = strndup(resp->body.data, n)) != NULL)
				e1 = table_sanitize(body, 200);
		}
		cli_err("HTTP %ld from %s%s%s%s", resp->status, resp->url,
		    e1 != NULL && *e1 != '\0' ? ": " : "", e1 != NULL ? e1 : "",
		    resp->status >= 300 && resp->status < 400 ? " (redirects are not followed)" : "");
		goto out;
	}
	detail = json_object_get(doc, "detail");
	if (json_is_string(detail))
		extra = json_string_value(detail);
	else if (json_is_object(detail)) {
		if (json_is_string(json_object_get(detail, "field")))
			field = json_string_value(json_object_get(detail, "field"));
		if (json_is_string(json_object_get(detail, "message")))
			extra = json_string_value(json_object_get(detail, "message"));
		else if (json_is_string(json_object_get(detail, "msg")))
			extra = json_string_value(json_object_get(detail, "msg"));
	}
	if (extra != NULL && strcmp(extra, error) == 0)
		extra = NULL;
	/* benchfleetd's messages already start with the field's path. */
	if (field != NULL && strstr(error, field) != NULL)
		field = NULL;
	e1 = table_sanitize(error, CLI_MSG_MAX);
	s = extra != NULL ? extra : field;
	e2 = s != NULL ? table_sanitize(s, CLI_MSG_MAX) : NULL;
	if (e1 == NULL)
		cli_err("HTTP %ld from %s", resp->status, resp->url);
	else if (e2 == NULL)
		cli_err("%s", e1);
	else if (extra != NULL)
		cli_err("%s: %s", e1, e2);
	else
		cli_err("%s (at %s)", e1, e2);
	if (json_is_object(detail))
		cli_report_more(detail);
out:
	free(body);
	free(e1);
	free(e2);
	json_decref(doc);
}

int
cli_call(struct cli *c, const char *method, const char *path, const char *body,
    size_t bodylen, struct http_resp *resp)
{
	char *why = NULL;
	int r;

	if ((r = http_request(&c->http, method, path, body, bodylen, resp)) != 0) {
		why = table_sanitize(c->http.errbuf, 300);
		if (r == BF_ERR_LOST)
			cli_err("cannot reach the coordinator at %s: %s", resp->url,
			    why != NULL ? why : "");
		else if (r == BF_ERR_TIMEOUT)
			cli_err("the coordinator at %s did not answer in time: %s", resp->url,
			    why != NULL ? why : "");
		else
			cli_err("%s: %s", resp->url[0] != '\0' ? resp->url : path,
			    why != NULL && *why != '\0' ? why : bf_err_str(r));
		goto out;
	}
	if (resp->status < 200 || resp->status > 299) {
		cli_report_status(resp);
		r = cli_status_err(resp->status);
		goto out;
	}
	r = 0;
out:
	free(why);
	return r;
}

int
cli_call_json(struct cli *c, const char *method, const char *path, const char *body,
    size_t bodylen, struct http_resp *resp, json_t **out)
{
	json_t *doc = NULL;
	struct bf_diag d;
	int r;

	*out = NULL;
	if ((r = cli_call(c, method, path, body, bodylen, resp)) != 0)
		goto out;
	if ((r = jx_loads(resp->body.data != NULL ? resp->body.data : "", resp->body.len,
	    BF_MAX_API_RESPONSE, &doc, &d)) != 0) {
		cli_err("malformed answer from %s: %s", resp->url, d.msg);
		r = BF_ERR_PROTO;
		goto out;
	}
	if (!json_is_object(doc)) {
		cli_err("malformed answer from %s: not a JSON object", resp->url);
		r = BF_ERR_PROTO;
		goto out;
	}
	*out = doc;
	doc = NULL;
	r = 0;
out:
	json_decref(doc);
	return r;
}

int
cli_exit(int r)
{
	if (r == 0)
		return CLI_EXIT_OK;
	if (r == BF_ERR_LOST || r == BF_ERR_TIMEOUT)
		return CLI_EXIT_UNREACHABLE;
	return CLI_EXIT_FAIL;
}

int
cli_print_body(const struct http_resp *resp)
{
	if (resp->body.len > 0 && fwrite(resp->body.data, 1, resp->body.len, stdout) !=
	    resp->body.len)
		return BF_ERR_IO;
	if (resp->body.len > 0 && resp->body.data[resp->body.len - 1] != '\n')
		fputc('\n', stdout);
	return 0;
}

int
cli_parse_id(const struct cmd_entry *e, const char *what, const char *s, int64_t *out)
{
	if (parse_i64(s, 1, INT64_MAX, out) != 0)
		return cmd_usage_error(e, "%s: \"%s\" is not a positive integer", what, s);
	return 0;
}

const char *
cli_cell(const json_t *obj, const char *key, char *buf, size_t bufsz)
{
	const json_t *v = obj != NULL ? json_object_get(obj, key) : NULL;
	char *dump;

	if (v == NULL || json_is_null(v))
		return "-";
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, bufsz, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	if (json_is_real(v)) {
		snprintf(buf, bufsz, "%.6g", json_real_value(v));
		return buf;
	}
	if (json_is_true(v))
		return "true";
	if (json_is_false(v))
		return "false";
	if ((dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return "?";
	snprintf(buf, bufsz, "%s", dump);
	free(dump);
	return buf;
}

const char *
cli_time(const json_t *obj, const char *key, char *buf, size_t bufsz)
{
	const json_t *v = obj != NULL ? json_object_get(obj, key) : NULL;
	double t;
	time_t tt;
	struct tm tm;

	if (!json_is_number(v))
		return cli_cell(obj, key, buf, bufsz);
	t = json_number_value(v);
	if (t > 95617584000.0)		/* past year 5000: milliseconds */
		t /= 1000.0;
	if (!(t >= 0 && t < 95617584000.0))
		return cli_cell(obj, key, buf, bufsz);
	tt = (time_t)t;
	if (gmtime_r(&tt, &tm) == NULL || strftime(buf, bufsz, "%Y-%m-%d %H:%M:%SZ", &tm) == 0)
		return cli_cell(obj, key, buf, bufsz);
	return buf;
}

void
cli_print_line(FILE *f, const char *prefix, const char *s)
{
	char *clean = table_sanitize(s, 0);

	fprintf(f, "%s%s\n", prefix != NULL ? prefix : "", clean != NULL ? clean : "?");
	free(clean);
}

static void
cli_print_field(const json_t *obj, const char *key)
{
	char buf[1024], head[80], *k;
	const char *v;

	if (json_is_object(json_object_get(obj, key)) || json_is_array(json_object_get(obj, key)))
		v = cli_cell(obj, key, buf, sizeof(buf));
	else if (strstr(key, "_at") != NULL || strcmp(key, "last_seen") == 0)
		v = cli_time(obj, key, buf, sizeof(buf));
	else
		v = cli_cell(obj, key, buf, sizeof(buf));
	k = table_sanitize(key, 40);
	snprintf(head, sizeof(head), "%s:", k != NULL ? k : "?");
	free(k);
	fprintf(stdout, "%-14s ", head);
	cli_print_line(stdout, NULL, v);
}

void
cli_print_fields(const json_t *obj, const char *const *keys)
{
	const char *key;
	json_t *v;
	size_t i;

	if (keys != NULL) {
		for (i = 0; keys[i] != NULL; i++)
			if (json_object_get(obj, keys[i]) != NULL)
				cli_print_field(obj, keys[i]);
		return;
	}
	json_object_foreach((json_t *)obj, key, v)
		cli_print_field(obj, key);
}
