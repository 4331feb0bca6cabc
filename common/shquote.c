/*
 * shquote.c: the one audited shell quoting helper. Single quotes keep every
 * byte literal except the single quote itself, which is written as '\''.
 */
#include <string.h>

#include "buf.h"
#include "err.h"
#include "shquote.h"

int
shquote(struct buf *out, const char *s)
{
	size_t start = out->len;
	const char *p, *q;
	int r;

	if ((r = buf_append(out, "'", 1)) != 0)
		goto out;
	for (p = s; (q = strchr(p, '\'')) != NULL; p = q + 1) {
		if ((r = buf_append(out, p, (size_t)(q - p))) != 0 ||
		    (r = buf_append(out, "'\\''", 4)) != 0)
			goto out;
	}
	if ((r = buf_puts(out, p)) != 0 || (r = buf_append(out, "'", 1)) != 0)
		goto out;
	r = 0;
out:
	if (r != 0) {
		/* never leave half a word behind: a cut quote is worse than none */
		out->len = start;
		if (out->data != NULL)
			out->data[start] = '\0';
	}
	return r;
}
