/*
 * fuzz_jx.c: jx_loads (size cap, depth cap, duplicate keys) and every jx
 * getter on every member of what it accepts, with the paths built as the
 * API builds them.
 */
#include <stdint.h>
#include <string.h>

#include "caps.h"
#include "jx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
walk(const json_t *v, const char *path, int depth)
{
	char sub[512], repr[128];
	const char *key, *s;
	json_t *m, *o;
	int64_t i64;
	double dbl;
	size_t idx;
	int b;

	(void)jx_repr(v, repr, sizeof(repr));
	(void)jx_type_name(v);
	(void)jx_as_str(v, 64, &s, path, NULL);
	(void)jx_as_int(v, -1000, 1000, &i64, path, NULL);
	(void)jx_as_num(v, -1e9, 1e9, &dbl, path, NULL);
	if (depth > 40)
		return;
	if (json_is_object(v)) {
		static const char *const allowed[] = { "a", "b", "name", NULL };

		(void)jx_only_keys(v, allowed, path, NULL);
		json_object_foreach((json_t *)v, key, m) {
			(void)jx_str(v, key, JX_REQUIRED, BF_MAX_NAME, &s, path, NULL);
			(void)jx_int(v, key, JX_OPTIONAL, 0, 100, &i64, path, NULL);
			(void)jx_num(v, key, JX_OPTIONAL, 0, 1, &dbl, path, NULL);
			(void)jx_bool(v, key, JX_OPTIONAL, &b, path, NULL);
			(void)jx_obj(v, key, JX_OPTIONAL, &o, path, NULL);
			(void)jx_arr(v, key, JX_OPTIONAL, 1, 3, &o, path, NULL);
			(void)jx_check_name(key, path, NULL);
			walk(m, jx_path(sub, sizeof(sub), path, key), depth + 1);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, idx, m)
			walk(m, jx_path_idx(sub, sizeof(sub), path, idx), depth + 1);
	} else if (json_is_string(v)) {
		(void)jx_check_name(json_string_value(v), path, NULL);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bf_diag d;
	json_t *doc = NULL;

	/* A small cap as well as the real one: the TOOBIG path gets hit. */
	if (jx_loads((const char *)data, size, size > 64 ? 64 : size + 1, &doc, &d) == 0)
		json_decref(doc);
	doc = NULL;
	if (jx_loads((const char *)data, size, BF_MAX_API_BODY, &doc, &d) != 0)
		return 0;
	walk(doc, "", 0);
	json_decref(doc);
	return 0;
}
