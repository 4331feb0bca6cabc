/* test_buf.c: the capped buffer: growth, the cap, printf, steal. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "caps.h"
#include "t.h"

static void
test_cap(void)
{
	struct buf b;
	char big[100];

	memset(big, 'x', sizeof(big));
	buf_init(&b, 10);
	T_EQ_INT(buf_append(&b, "0123456789", 10), 0);
	T_EQ_INT(b.len, 10);
	/* one past the cap fails and leaves the buffer as it was */
	T_EQ_INT(buf_append(&b, "x", 1), BF_ERR_TOOBIG);
	T_EQ_INT(b.len, 10);
	T_EQ_STR(b.data, "0123456789");
	T_EQ_INT(buf_printf(&b, "%d", 1), BF_ERR_TOOBIG);
	T_EQ_STR(b.data, "0123456789");
	T_EQ_INT(buf_append(&b, "", 0), 0);
	/* a huge n must not wrap the length check */
	T_EQ_INT(buf_append(&b, big, (size_t)-1), BF_ERR_TOOBIG);
	buf_reset(&b);
	T_EQ_INT(b.len, 0);
	T_EQ_STR(b.data, "");
	T_EQ_INT(buf_append(&b, big, 11), BF_ERR_TOOBIG);
	T_EQ_INT(buf_append(&b, big, 10), 0);
	buf_free(&b);
	T_CHECK(b.data == NULL);
	buf_free(&b);
	buf_free(NULL);
}

static void
test_grow(void)
{
	struct buf b;
	size_t i;
	char *s;
	int ok = 1;

	buf_init(&b, 0);
	for (i = 0; i < 10000; i++)
		if (buf_printf(&b, "%zu,", i % 10) != 0)
			ok = 0;
	T_CHECK(ok);
	T_EQ_INT(b.len, 20000);
	T_EQ_INT(strlen(b.data), 20000);
	T_CHECK(memcmp(b.data, "0,1,2,", 6) == 0);
	s = buf_steal(&b);
	T_CHECK(s != NULL);
	T_EQ_INT(strlen(s), 20000);
	T_CHECK(b.data == NULL && b.len == 0);
	free(s);
	/* an empty buffer steals as an allocated "" */
	s = buf_steal(&b);
	T_EQ_STR(s, "");
	free(s);
	T_EQ_INT(buf_puts(&b, "abc"), 0);
	T_EQ_INT(buf_append(&b, "\0def", 4), 0);
	T_EQ_INT(b.len, 7);
	T_CHECK(memcmp(b.data, "abc\0def", 8) == 0);
	buf_free(&b);
}

static void
test_default_max(void)
{
	struct buf b;
	char *chunk = malloc(1024 * 1024);
	int i, r = 0;

	T_CHECK(chunk != NULL);
	if (chunk == NULL)
		return;
	memset(chunk, 'a', 1024 * 1024);
	buf_init(&b, 0);
	for (i = 0; i < BF_MAX_AGENT_OUTPUT / (1024 * 1024) && r == 0; i++)
		r = buf_append(&b, chunk, 1024 * 1024);
	T_EQ_INT(r, 0);
	T_EQ_INT(b.len, BF_MAX_AGENT_OUTPUT);
	T_EQ_INT(buf_append(&b, "a", 1), BF_ERR_TOOBIG);
	buf_free(&b);
	free(chunk);
}

int
main(void)
{
	test_cap();
	test_grow();
	test_default_max();
	return t_done();
}
