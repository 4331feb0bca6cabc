/*
 * test_shquote.c: quoted words, checked by letting a real /bin/sh read them
 * back: each hostile value must come back as one word, byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "buf.h"
#include "err.h"
#include "shquote.h"
#include "t.h"

static const struct {
	const char *in;
	const char *out;
} cases[] = {
	{"", "''"},
	{"abc", "'abc'"},
	{"it's", "'it'\\''s'"},
	{"'", "''\\'''"},
	{"''", "''\\'''\\'''"},
	{"; touch /tmp/pwned", "'; touch /tmp/pwned'"},
	{"$(id)", "'$(id)'"},
	{"`id`", "'`id`'"},
	{"a\nb", "'a\nb'"},
	{"\\", "'\\'"},
	{"*?[!]~ $HOME \"x\"", "'*?[!]~ $HOME \"x\"'"},
};

/* sh -c 'printf %s "$1"' sh WORD: the shell splits and expands WORD as it would. */
static void
roundtrip(const char *val)
{
	struct buf cmd, got;
	char chunk[256];
	size_t n;
	FILE *p;
	int st;

	buf_init(&cmd, 0);
	buf_init(&got, 0);
	T_EQ_INT(buf_puts(&cmd, "set -- "), 0);
	T_EQ_INT(shquote(&cmd, val), 0);
	T_EQ_INT(buf_puts(&cmd, "; [ $# -eq 1 ] || exit 3; printf %s \"$1\""), 0);
	p = popen(cmd.data, "r");
	T_CHECK(p != NULL);
	if (p != NULL) {
		while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
			T_EQ_INT(buf_append(&got, chunk, n), 0);
		st = pclose(p);
		T_EQ_INT(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
		T_EQ_STR(got.data ? got.data : "", val);
	}
	buf_free(&cmd);
	buf_free(&got);
}

int
main(void)
{
	struct buf b;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf_init(&b, 0);
		T_EQ_INT(shquote(&b, cases[i].in), 0);
		T_EQ_STR(b.data, cases[i].out);
		buf_free(&b);
		roundtrip(cases[i].in);
	}
	/* appends after existing text */
	buf_init(&b, 0);
	T_EQ_INT(buf_puts(&b, "echo "), 0);
	T_EQ_INT(shquote(&b, "a b"), 0);
	T_EQ_STR(b.data, "echo 'a b'");
	buf_free(&b);
	/* over the cap: the buffer is left as it was, no half word */
	buf_init(&b, 12);
	T_EQ_INT(buf_puts(&b, "echo "), 0);
	T_EQ_INT(shquote(&b, "it's long"), BF_ERR_TOOBIG);
	T_EQ_STR(b.data, "echo ");
	T_EQ_INT(b.len, 5);
	T_EQ_INT(shquote(&b, "ab'c"), BF_ERR_TOOBIG);
	T_EQ_STR(b.data, "echo ");
	T_EQ_INT(shquote(&b, "ok"), 0);
	T_EQ_STR(b.data, "echo 'ok'");
	buf_free(&b);
	return t_done();
}
