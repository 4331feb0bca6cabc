/*
 * fuzz_agent_json.c: the agent's own JSON parser (agent/ajson.c, libc only)
 * on arbitrary bytes, and a re-serialisation of every string and number it
 * accepts through ajson_put_str/ajson_put_num (what the agent prints back).
 */
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "ajson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
walk(const struct ajson *j, struct buf *b, int depth)
{
	size_t i;

	if (depth > 64)
		return;
	switch (j->type) {
	case AJSON_STR:
		/* str holds no NUL and is len bytes long. */
		if (strlen(j->str) != j->len)
			__builtin_trap();
		(void)ajson_put_str(b, j->str, j->len);
		break;
	case AJSON_NUM:
		(void)ajson_put_num(b, j->num);
		break;
	case AJSON_ARR:
	case AJSON_OBJ:
		for (i = 0; i < j->n; i++) {
			if (j->type == AJSON_OBJ) {
				(void)ajson_get(j, j->items[i]->key);
				(void)ajson_put_str(b, j->items[i]->key, strlen(j->items[i]->key));
			}
			walk(j->items[i], b, depth + 1);
		}
		break;
	default:
		break;
	}
	(void)ajson_type_name(j->type);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ajson *j = NULL;
	struct bf_diag d;
	struct buf b;

	if (ajson_parse((const char *)data, size, &j, &d) != 0)
		return 0;
	buf_init(&b, 1 << 20);
	walk(j, &b, 0);
	buf_free(&b);
	ajson_free(j);
	return 0;
}
