/*
 * agent_test_bind.c: CPU/node list parsing and formatting, with hostile
 * lists (signs, spaces, descending ranges, huge numbers, empty parts).
 */
#include <string.h>

#include "bind.h"
#include "err.h"
#include "t.h"

static const struct {
	const char *in;
	int r;
	const char *out;
} cases[] = {
	{ "0", 0, "0" },
	{ "0-3", 0, "0-3" },
	{ "0-3,8,10-11", 0, "0-3,8,10-11" },
	{ "3,2,1,0", 0, "0-3" },
	{ "1023", 0, "1023" },
	{ "0-1023", 0, "0-1023" },
	{ "1024", BF_ERR_INVALID, NULL },
	{ "", BF_ERR_INVALID, NULL },
	{ ",", BF_ERR_INVALID, NULL },
	{ "1,", BF_ERR_INVALID, NULL },
	{ ",1", BF_ERR_INVALID, NULL },
	{ "3-1", BF_ERR_INVALID, NULL },
	{ "-1", BF_ERR_INVALID, NULL },
	{ "+1", BF_ERR_INVALID, NULL },
	{ "1-+3", BF_ERR_INVALID, NULL },
	{ "1--3", BF_ERR_INVALID, NULL },
	{ " 1", BF_ERR_INVALID, NULL },
	{ "1 ", BF_ERR_INVALID, NULL },
	{ "0x1", BF_ERR_INVALID, NULL },
	{ "99999999999999999999999", BF_ERR_INVALID, NULL },
	{ "0-3;id", BF_ERR_INVALID, NULL },
	{ "1-2-3", BF_ERR_INVALID, NULL },
};

int
main(void)
{
	unsigned long mask[BIND_MAX_CPUS / BIND_WORD_BITS];
	char why[128], out[256];
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		r = bind_parse_list(cases[i].in, mask, BIND_MAX_CPUS, why, sizeof(why));
		T_EQ_INT(r, cases[i].r);
		if (r != 0) {
			T_CHECK(why[0] != '\0');
			continue;
		}
		bind_format_list(mask, BIND_MAX_CPUS, out, sizeof(out));
		T_EQ_STR(out, cases[i].out);
	}
	/* nodes have their own bound */
	T_EQ_INT(bind_parse_list("4", mask, 4, why, sizeof(why)), BF_ERR_INVALID);
	T_CONTAINS(why, "0..3");
	return t_done();
}
