/*
 * coord_test_fingerprint.c: the probe line as the runner decodes it, and
 * the shape rules a bundle's fingerprints are held to (fingerprint.c):
 * the agent's real line is accepted and comes back canonical; anything
 * else, including what the agent would never print, is refused naming
 * the field, with nothing returned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "fingerprint.h"
#include "t.h"

#define SHA "2787e8f1d4147a2816fb615c2e0e4b1a852a5202cf0db8898a7a4d4ea658937b"

/* decode line; expect r, and (on error) the field */
static void
expect(const char *line, int want, const char *field)
{
	struct bf_diag d;
	char *text = (char *)1, sha[65];
	int r;

	bf_diag_clear(&d);
	r = fingerprint_decode(line, strlen(line), &text, sha, &d);
	T_EQ_INT(r, want);
	if (want != 0) {
		T_CHECK(text == NULL);
		if (field != NULL)
			T_EQ_STR(d.field, field);
		T_CHECK(d.msg[0] != '\0');
	}
	free(want == 0 ? text : NULL);
}

static void
test_good(void)
{
	static const char line[] = "{\"type\":\"fingerprint\",\"sha256\":\"" SHA "\","
	    "\"cpu_model\":\"AMD EPYC 9654\",\"cores\":96,\"microcode\":null,"
	    "\"numa_nodes\":[{\"node\":0,\"mem_kb\":24683756},{\"node\":1,\"mem_kb\":1}],"
	    "\"identity\":[\"a\",\"b\"],\"thp_enabled\":\"madvise\"}";
	struct bf_diag d;
	char *text = NULL, *again = NULL, sha[65];

	bf_diag_clear(&d);
	T_EQ_INT(fingerprint_decode(line, strlen(line), &text, sha, &d), 0);
	T_EQ_STR(sha, SHA);
	T_CHECK(text != NULL);
	if (text == NULL)
		return;
	/* canonical: sorted keys, compact; decoding it again is the same */
	T_CHECK(strncmp(text, "{\"cores\":96,\"cpu_model\":", 24) == 0);
	T_CHECK(strstr(text, "\": ") == NULL && strstr(text, ", ") == NULL);
	T_EQ_INT(fingerprint_decode(text, strlen(text), &again, sha, &d), 0);
	T_EQ_STR(again, text);
	free(again);
	free(text);
}

static void
test_refused(void)
{
	struct buf b;
	int i;

	expect("", BF_ERR_PARSE, NULL);
	expect("not json", BF_ERR_PARSE, NULL);
	expect("[1,2]", BF_ERR_PROTO, "probe");
	expect("{\"type\":\"fingerprint\"}", BF_ERR_INVALID, "probe.sha256");
	expect("{\"type\":\"hello\",\"sha256\":\"" SHA "\"}", BF_ERR_PROTO, "probe.type");
	expect("{\"type\":\"fingerprint\",\"sha256\":\"ABC\"}", BF_ERR_PROTO, "probe.sha256");
	expect("{\"type\":\"fingerprint\",\"sha256\":\"2787E8F1D4147A2816FB615C2E0E4B1A852A5202CF0DB8898A7A4D4EA658937B\"}",
	    BF_ERR_PROTO, "probe.sha256");
	expect("{\"type\":\"fingerprint\",\"sha256\":7}", BF_ERR_INVALID, "probe.sha256");
	/* shapes a bundle could not carry */
	expect("{\"type\":\"fingerprint\",\"sha256\":\"" SHA "\",\"x\":{\"y\":1}}", BF_ERR_INVALID,
	    "probe.x");
	expect("{\"type\":\"fingerprint\",\"sha256\":\"" SHA "\",\"x\":[[1]]}", BF_ERR_INVALID,
	    "probe.x");
	expect("{\"type\":\"fingerprint\",\"sha256\":\"" SHA "\",\"x\":[{\"a\":{\"b\":1}}]}",
	    BF_ERR_INVALID, "probe.x");
	/* duplicate keys are refused by the parser */
	expect("{\"type\":\"fingerprint\",\"type\":\"fingerprint\",\"sha256\":\"" SHA "\"}",
	    BF_ERR_PARSE, NULL);

	/* too many keys */
	buf_init(&b, 1 << 20);
	T_EQ_INT(buf_puts(&b, "{\"type\":\"fingerprint\",\"sha256\":\"" SHA "\""), 0);
	for (i = 0; i < FINGERPRINT_MAX_KEYS; i++)
		T_EQ_INT(buf_printf(&b, ",\"k%d\":1", i), 0);
	T_EQ_INT(buf_puts(&b, "}"), 0);
	expect(b.data, BF_ERR_TOOBIG, "probe");
	buf_free(&b);
	/* a string over BF_MAX_STR */
	buf_init(&b, 1 << 20);
	T_EQ_INT(buf_puts(&b, "{\"type\":\"fingerprint\",\"sha256\":\"" SHA "\",\"cmdline\":\""), 0);
	for (i = 0; i <= BF_MAX_STR; i++)
		T_EQ_INT(buf_append(&b, "a", 1), 0);
	T_EQ_INT(buf_puts(&b, "\"}"), 0);
	expect(b.data, BF_ERR_TOOBIG, "probe.cmdline");
	buf_free(&b);
	/* an array over 1024 elements */
	buf_init(&b, 1 << 20);
	T_EQ_INT(buf_puts(&b, "{\"type\":\"fingerprint\",\"sha256\":\"" SHA "\",\"a\":[0"), 0);
	for (i = 0; i < 1024; i++)
		T_EQ_INT(buf_puts(&b, ",0"), 0);
	T_EQ_INT(buf_puts(&b, "]}"), 0);
	expect(b.data, BF_ERR_TOOBIG, "probe.a");
	buf_free(&b);
}

int
main(void)
{
	test_good();
	test_refused();
	return t_done();
}
