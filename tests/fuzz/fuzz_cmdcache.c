/*
 * fuzz_cmdcache.c: the agent's cached command answer (agent/cmdcache.c,
 * cc-version.cache), which anyone able to write beside the agent could
 * plant. Input: its first byte chooses whether the file starts with the
 * key of a real file (odd) or not; the rest is the file. A lookup runs over
 * it, then a put and a lookup that must give the put's answer back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], cache[128], bin[128], key[CMDCACHE_MAX_KEY];

static void
fz_cleanup(void)
{
	(void)unlink(cache);
	(void)unlink(bin);
	(void)rmdir(dir);
}

/* A real file to key on, and its key. */
static void
fz_init(void)
{
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/bf-fz-cmdcache.%ld", (long)getpid());
	(void)mkdir(dir, 0700);
	snprintf(cache, sizeof(cache), "%s/%s", dir, CMDCACHE_CC_NAME);
	snprintf(bin, sizeof(bin), "%s/cc", dir);
	if ((f = fopen(bin, "w")) != NULL) {
		fputs("not a compiler\n", f);
		fclose(f);
	}
	if (cmdcache_key(bin, key, sizeof(key)) != 0)
		abort();
	atexit(fz_cleanup);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char val[CMDCACHE_MAX_VALUE + 1];
	FILE *f;

	if (dir[0] == '\0')
		fz_init();
	if (size < 1)
		return 0;
	(void)unlink(cache);
	if ((f = fopen(cache, "w")) == NULL)
		return 0;
	if (data[0] & 1)
		fputs(key, f);
	fwrite(data + 1, 1, size - 1, f);
	fclose(f);
	/* an answer, when there is one, is one line without NUL */
	if (cmdcache_get(cache, key, val, sizeof(val)) == 0 &&
	    (strchr(val, '\n') != NULL || strlen(val) > CMDCACHE_MAX_VALUE))
		abort();
	cmdcache_put(cache, key, "cc (Fuzz) 1.0");
	if (cmdcache_get(cache, key, val, sizeof(val)) != 0 || strcmp(val, "cc (Fuzz) 1.0") != 0)
		abort();
	return 0;
}
