/*
 * fuzz_agent_json.c: the agent's own JSON parser (agent/json.c, libc only)
 * on arbitrary bytes, and a re-serialisation of every string and number it
 * accepts through json_put_str/json_put_num (what the agent prints back).
 */
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
walk(const struct json *j, struct buf *b, int depth)
{
	size_t i;

	if (depth > 64)
		return;
	switch (j->type) {
	case JSON_STR:
		/* str holds no NUL and is len bytes long. */
		if (strlen(j->str) != j->len)
			__builtin_trap();
		(void)json_put_str(b, j->str, j->len);
		break;
	case JSON_NUM:
		(void)json_put_num(b, j->num);
		break;
	case JSON_ARR:
	case JSON_OBJ:
		for (i = 0; i < j->n; i++) {
			if (j->type == JSON_OBJ) {
				(void)json_get(j, j->items[i]->key);
				(void)json_put_str(b, j->items[i]->key, strlen(j->items[i]->key));
			}
			walk(j->items[i], b, depth + 1);
		}
		break;
	default:
		break;
	}
	(void)json_type_name(j->type);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json *j = NULL;
	struct bf_diag d;
	struct buf b;

	if (json_parse((const char *)data, size, &j, &d) != 0)
		return 0;
	buf_init(&b, 1 << 20);
	walk(j, &b, 0);
	buf_free(&b);
	json_free(j);
	return 0;
}
