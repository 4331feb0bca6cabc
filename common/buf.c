/*
 * buf.c: growable byte buffer with a hard cap on its length. libc only:
 * the static agent compiles this file directly.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "caps.h"

static size_t
buf_max(const struct buf *b)
{
	return b->max != 0 ? b->max : BF_MAX_AGENT_OUTPUT;
}

void
buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

/* Make room for n more bytes plus the NUL; the cap is checked by subtraction. */
static int
buf_reserve(struct buf *b, size_t n)
{
	size_t max = buf_max(b), need, ncap;
	char *p;

	if (b->len > max || n > max - b->len)
		return BF_ERR_TOOBIG;
	need = b->len + n + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap != 0 ? b->cap : 64;
	while (ncap < need) {
		if (ncap > (max + 1) / 2) {
			ncap = max + 1;
			break;
		}
		ncap *= 2;
	}
	if (ncap < need)
		ncap = need;
	p = realloc(b->data, ncap);
	if (p == NULL)
		return BF_ERR_ALLOC;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
	int r;

	if ((r = buf_reserve(b, n)) != 0)
		return r;
	if (n != 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n, r;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return BF_ERR_INVALID;
	if ((r = buf_reserve(b, (size_t)n)) != 0)
		return r;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void
buf_free(struct buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

char *
buf_steal(struct buf *b)
{
	char *p;

	if (b->data == NULL)
		return calloc(1, 1);
	p = b->data;
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}
