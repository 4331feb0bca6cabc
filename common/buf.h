/*
 * buf.h: a growable byte buffer with a hard cap. Appending past the cap
 * fails with BF_ERR_TOOBIG and leaves the buffer as it was.
 */
#ifndef BF_BUF_H
#define BF_BUF_H

#include <stdarg.h>
#include <stddef.h>

/* A result the caller must look at: an append that failed left the buffer
 * short, and output built from it would be silently truncated. */
#ifndef BF_WUR
#define BF_WUR __attribute__((warn_unused_result))
#endif

struct buf {
	char *data;	/* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	size_t max;	/* cap on len; 0 means BF_MAX_AGENT_OUTPUT */
};

void buf_init(struct buf *b, size_t max);
BF_WUR int buf_append(struct buf *b, const void *p, size_t n);
BF_WUR int buf_puts(struct buf *b, const char *s);
BF_WUR int buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
BF_WUR int buf_vprintf(struct buf *b, const char *fmt, va_list ap);
void buf_reset(struct buf *b);		/* len = 0, keeps memory */
void buf_free(struct buf *b);		/* accepts NULL */
/* Hand the data to the caller (who frees it with free()); b is emptied.
 * Returns "" (allocated) for an empty buffer; NULL only on ENOMEM. */
char *buf_steal(struct buf *b);

#endif
