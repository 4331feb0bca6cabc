/*
 * err.c: text for the BF_ERR_* codes and the bf_diag message helper.
 * libc only: the static agent compiles this file directly.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

/* Indexed by -code, so a new code only needs a line here. */
static const char *const err_text[] = {
	[0] = "success",
	[-BF_ERR_ALLOC] = "out of memory",
	[-BF_ERR_INVALID] = "invalid value",
	[-BF_ERR_RANGE] = "value out of range",
	[-BF_ERR_PARSE] = "malformed input",
	[-BF_ERR_TOOBIG] = "input too large",
	[-BF_ERR_NOTFOUND] = "not found",
	[-BF_ERR_EXISTS] = "already exists",
	[-BF_ERR_IO] = "input/output error",
	[-BF_ERR_SYS] = "system call failed",
	[-BF_ERR_DB] = "store failed",
	[-BF_ERR_SSH] = "SSH transport failed",
	[-BF_ERR_HOSTKEY] = "host key unknown or changed",
	[-BF_ERR_AUTH] = "authentication refused",
	[-BF_ERR_TIMEOUT] = "timed out",
	[-BF_ERR_PROTO] = "protocol violation by the peer",
	[-BF_ERR_STATE] = "not allowed in the current state",
	[-BF_ERR_CANCELLED] = "cancelled",
	[-BF_ERR_LOST] = "connection to the machine lost",
};

const char *
bf_err_str(int r)
{
	if (r > 0 || r <= BF_ERR_LAST)
		return "unknown error";
	if ((size_t)-r >= sizeof(err_text) / sizeof(err_text[0]) || err_text[-r] == NULL)
		return "unknown error";
	return err_text[-r];
}

void
bf_diag_clear(struct bf_diag *d)
{
	if (d == NULL)
		return;
	d->field[0] = '\0';
	d->msg[0] = '\0';
}

void
bf_diag_set(struct bf_diag *d, const char *field, const char *fmt, ...)
{
	va_list ap;
	size_t off = 0;
	int n;

	if (d == NULL)
		return;
	d->field[0] = '\0';
	d->msg[0] = '\0';
	if (field != NULL && field[0] != '\0') {
		/* snprintf truncates safely; an over-long path is cut, not overrun */
		snprintf(d->field, sizeof(d->field), "%s", field);
		n = snprintf(d->msg, sizeof(d->msg), "%s: ", field);
		if (n < 0)
			n = 0;
		off = (size_t)n < sizeof(d->msg) ? (size_t)n : sizeof(d->msg) - 1;
	}
	va_start(ap, fmt);
	vsnprintf(d->msg + off, sizeof(d->msg) - off, fmt, ap);
	va_end(ap);
}

void
bf_diag_list_clear(struct bf_diag_list *l)
{
	if (l == NULL)
		return;
	l->n = 0;
	l->total = 0;
}

void
bf_diag_list_add(struct bf_diag_list *l, const struct bf_diag *d)
{
	size_t i;

	if (l == NULL || d == NULL || d->msg[0] == '\0')
		return;
	for (i = 0; d->field[0] != '\0' && i < l->n; i++)
		if (strcmp(l->item[i].field, d->field) == 0)
			return;
	l->total++;
	if (l->n < BF_DIAG_LIST_MAX)
		l->item[l->n++] = *d;
}
