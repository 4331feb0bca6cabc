/*
 * test_b64.c: base64 both ways; decoding refuses anything but the one
 * strict encoding of a byte string.
 */
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "buf.h"
#include "err.h"
#include "t.h"

int
main(void)
{
	static const struct {
		const char *raw, *enc;
	} ok[] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
		{ "\xff\xfe\x00", "//4A" },
	};
	static const char *const bad[] = {
		"Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zg==Zg==", "Zm 9", "Zm9v\n", "Zm-v", "=Zm9",
	};
	struct buf b;
	size_t i, n;

	buf_init(&b, 0);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		n = i == 7 ? 3 : strlen(ok[i].raw);
		buf_reset(&b);
		T_EQ_INT(b64_encode(&b, ok[i].raw, n), 0);
		T_EQ_STR(b.len ? b.data : "", ok[i].enc);
		buf_reset(&b);
		T_EQ_INT(b64_decode(&b, ok[i].enc, strlen(ok[i].enc)), 0);
		T_CHECK(b.len == n && (n == 0 || memcmp(b.data, ok[i].raw, n) == 0));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		buf_reset(&b);
		T_EQ_INT(b64_decode(&b, bad[i], strlen(bad[i])), BF_ERR_PARSE);
	}
	buf_free(&b);
	return t_done();
}
