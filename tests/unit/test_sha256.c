/* test_sha256.c: FIPS 180-4 vectors, chunked updates and files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "sha256.h"
#include "t.h"

static const struct {
	const char *msg;
	const char *hex;
} vectors[] = {
	{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	{"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
	    "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
};

int
main(void)
{
	struct sha256_ctx c;
	uint8_t dig[32];
	char hex[65], path[] = "/tmp/bf-sha256-XXXXXX";
	char *mil;
	size_t i, off;
	FILE *f;
	int fd;

	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		sha256_hex(vectors[i].msg, strlen(vectors[i].msg), hex);
		T_EQ_STR(hex, vectors[i].hex);
		/* byte-at-a-time gives the same digest (block-boundary handling) */
		sha256_init(&c);
		for (off = 0; off < strlen(vectors[i].msg); off++)
			sha256_update(&c, vectors[i].msg + off, 1);
		sha256_final(&c, dig);
		sha256_tohex(dig, hex);
		T_EQ_STR(hex, vectors[i].hex);
	}
	/* a million 'a', in uneven chunks */
	mil = malloc(1000000);
	T_CHECK(mil != NULL);
	if (mil == NULL)
		return t_done();
	memset(mil, 'a', 1000000);
	sha256_hex(mil, 1000000, hex);
	T_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	sha256_init(&c);
	for (off = 0; off < 1000000; off += 997)
		sha256_update(&c, mil + off, 1000000 - off < 997 ? 1000000 - off : 997);
	sha256_final(&c, dig);
	sha256_tohex(dig, hex);
	T_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

	/* lengths around the padding boundary: 55, 56, 63, 64 bytes */
	sha256_hex(mil, 55, hex);
	T_EQ_STR(hex, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	sha256_hex(mil, 56, hex);
	T_EQ_STR(hex, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
	sha256_hex(mil, 64, hex);
	T_EQ_STR(hex, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");

	/* a file, and a file that is missing */
	fd = mkstemp(path);
	T_CHECK(fd != -1);
	f = fdopen(fd, "w");
	T_CHECK(f != NULL);
	if (f != NULL) {
		fwrite(mil, 1, 1000000, f);
		fclose(f);
	}
	T_EQ_INT(sha256_file(path, hex), 0);
	T_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	unlink(path);
	T_EQ_INT(sha256_file(path, hex), BF_ERR_IO);
	T_EQ_INT(sha256_file("/", hex), BF_ERR_IO);
	free(mil);
	return t_done();
}
