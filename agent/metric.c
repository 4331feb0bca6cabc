/*
 * metric.c: extraction of metrics from a workload's captured output: a
 * regex (the capture may hold NUL bytes, so matching uses REG_STARTEND over
 * the counted buffer), a CSV column (redis-benchmark --csv), or a path into
 * one JSON document.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "err.h"
#include "ajson.h"
#include "metric.h"
#include "parse.h"

#define METRIC_MAX_FIELDS	256	/* columns of one CSV row */
#define METRIC_MAX_FIELD	1024	/* bytes of one CSV field */

static int
metric_regex(const struct step_metric *m, const char *out, size_t len, double *value)
{
	regmatch_t pm[2];
	char num[METRIC_MAX_NUM];
	size_t i, n = 0;
	int flags = 0;

	if (m == NULL || !m->re_ok || out == NULL)
		return BF_ERR_INVALID;
	pm[0].rm_so = 0;
	pm[0].rm_eo = (regoff_t)len;
#ifdef REG_STARTEND
	flags = REG_STARTEND;
#endif
	if (regexec(&m->re, out, 2, pm, flags) != 0 || pm[1].rm_so < 0)
		return BF_ERR_NOTFOUND;
	for (i = (size_t)pm[1].rm_so; i < (size_t)pm[1].rm_eo; i++) {
		if (out[i] == ',')
			continue;
		if (n == sizeof(num))
			return BF_ERR_TOOBIG;
		num[n++] = out[i];
	}
	return parse_double_n(num, n, value);
}

/*
 * Field number col (0-based) of the CSV line p[0..n): fields split at
 * commas, a field in double quotes may hold commas and "" for a quote.
 * Returns the field's length, or -1 when the row has fewer fields.
 */
static long
metric_csv_field(const char *p, size_t n, size_t col, char *out, size_t outsz)
{
	size_t i = 0, f = 0, o = 0;
	int q = 0;

	while (i <= n) {
		if (i == n || (!q && p[i] == ',')) {
			if (f == col) {
				out[o] = '\0';
				return (long)o;
			}
			f++;
			o = 0;
			i++;
			if (i > n)
				break;
			continue;
		}
		if (p[i] == '"') {
			if (q && i + 1 < n && p[i + 1] == '"') {
				if (o + 1 < outsz && f == col)
					out[o++] = '"';
				i += 2;
				continue;
			}
			q = !q;
			i++;
			continue;
		}
		if (f == col && o + 1 < outsz)
			out[o++] = p[i];
		i++;
	}
	return -1;
}

/* Next line of buf[*pos..len): its start and length without \r\n. */
static int
metric_next_line(const char *buf, size_t len, size_t *pos, const char **lp, size_t *ln)
{
	const char *nl;
	size_t n;

	if (*pos >= len)
		return 0;
	*lp = buf + *pos;
	nl = memchr(*lp, '\n', len - *pos);
	n = nl != NULL ? (size_t)(nl - *lp) : len - *pos;
	*pos += n + (nl != NULL);
	if (n > 0 && (*lp)[n - 1] == '\r')
		n--;
	*ln = n;
	return 1;
}

static int
metric_csv(const struct step_metric *m, const char *out, size_t len, double *value)
{
	char field[METRIC_MAX_FIELD];
	const char *lp;
	size_t pos = 0, ln, col;
	long fl;
	int r, have_header = 0;

	for (;;) {
		if (!metric_next_line(out, len, &pos, &lp, &ln))
			return BF_ERR_NOTFOUND;
		if (ln == 0 || memchr(lp, ',', ln) == NULL)
			continue;	/* not a CSV line (progress output, blank) */
		if (!have_header) {
			/* the header: the first CSV line naming the column */
			for (col = 0; col < METRIC_MAX_FIELDS; col++) {
				if ((fl = metric_csv_field(lp, ln, col, field, sizeof(field))) < 0)
					break;
				if (strcmp(field, m->column) == 0) {
					have_header = 1;
					break;
				}
			}
			if (!have_header)
				continue;
			continue;
		}
		if (metric_csv_field(lp, ln, 0, field, sizeof(field)) < 0 ||
		    strstr(field, m->row_match) == NULL)
			continue;
		if ((fl = metric_csv_field(lp, ln, col, field, sizeof(field))) < 0)
			return BF_ERR_NOTFOUND;
		return parse_double_n(field, (size_t)fl, value);
	}
	return r;
}

static int
metric_json(const struct step_metric *m, const char *out, size_t len, double *value)
{
	struct ajson *doc = NULL;
	const struct ajson *cur;
	const char *p, *dot;
	char seg[BF_MAX_NAME * 4];
	int64_t idx;
	size_t n;
	int r;

	if (len > BF_MAX_STEP) {
		r = BF_ERR_TOOBIG;
		goto out;
	}
	/* trailing whitespace and newlines are fine; trailing data is not */
	if ((r = ajson_parse(out, len, &doc, NULL)) != 0)
		goto out;
	cur = doc;
	for (p = m->path; cur != NULL; p = dot + 1) {
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(seg)) {
			r = BF_ERR_NOTFOUND;
			goto out;
		}
		memcpy(seg, p, n);
		seg[n] = '\0';
		if (cur->type == AJSON_OBJ)
			cur = ajson_get(cur, seg);
		else if (cur->type == AJSON_ARR && parse_i64(seg, 0, (int64_t)cur->n - 1, &idx) == 0)
			cur = cur->items[idx];
		else
			cur = NULL;
		if (dot == NULL)
			break;
	}
	if (cur == NULL) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	if (cur->type == AJSON_NUM)
		*value = cur->num;
	else if (cur->type == AJSON_STR) {
		if ((r = parse_double(cur->str, value)) != 0)
			goto out;
	} else {
		r = BF_ERR_PARSE;
		goto out;
	}
	r = 0;
out:
	ajson_free(doc);
	return r;
}

int
metric_extract(const struct step_metric *m, const char *out, size_t len, double *value)
{
	if (m == NULL || out == NULL)
		return BF_ERR_INVALID;
	switch (m->rule) {
	case STEP_RULE_CSV:
		return metric_csv(m, out, len, value);
	case STEP_RULE_JSON:
		return metric_json(m, out, len, value);
	default:
		return metric_regex(m, out, len, value);
	}
}
