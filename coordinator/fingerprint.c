/*
 * fingerprint.c: the one place that says what a machine fingerprint may
 * look like (`benchfleet-agent probe`, docs/agent-protocol.md), for the
 * line the agent prints (runner_probe) and for a fingerprint that arrives
 * in another lab's bundle (bundle.c): a fingerprint the runner stores is
 * one a bundle of it may carry.
 */
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "err.h"
#include "fingerprint.h"
#include "jx.h"
#include "sha256.h"

int
fingerprint_check(const json_t *fp, const char *path, struct bf_diag *d)
{
	const char *k;
	json_t *v, *e, *x;
	size_t i;
	const char *kk;
	char p[160];

	if (json_object_size(fp) > FINGERPRINT_MAX_KEYS) {
		bf_diag_set(d, path, "more than %d keys", FINGERPRINT_MAX_KEYS);
		return BF_ERR_TOOBIG;
	}
	json_object_foreach((json_t *)fp, k, v) {
		jx_path(p, sizeof(p), path, k);
		if (strlen(k) > BF_MAX_NAME) {
			bf_diag_set(d, path, "a key longer than %d bytes", BF_MAX_NAME);
			return BF_ERR_INVALID;
		}
		if (json_is_string(v) && json_string_length(v) > BF_MAX_STR) {
			bf_diag_set(d, p, "longer than %d bytes", BF_MAX_STR);
			return BF_ERR_TOOBIG;
		}
		if (json_is_object(v)) {
			bf_diag_set(d, p, "expected a scalar or an array, got an object");
			return BF_ERR_INVALID;
		}
		if (!json_is_array(v))
			continue;
		if (json_array_size(v) > 1024) {
			bf_diag_set(d, p, "more than 1024 elements");
			return BF_ERR_TOOBIG;
		}
		json_array_foreach(v, i, e) {
			if (json_is_array(e) || (json_is_string(e) &&
			    json_string_length(e) > BF_MAX_STR)) {
				bf_diag_set(d, p, "element %zu: expected a scalar or a flat object", i);
				return BF_ERR_INVALID;
			}
			if (!json_is_object(e))
				continue;
			if (json_object_size(e) > 16) {
				bf_diag_set(d, p, "element %zu: more than 16 keys", i);
				return BF_ERR_TOOBIG;
			}
			json_object_foreach(e, kk, x)
				if (json_is_object(x) || json_is_array(x) || strlen(kk) > BF_MAX_NAME ||
				    (json_is_string(x) && json_string_length(x) > BF_MAX_STR)) {
					bf_diag_set(d, p, "element %zu, key %.64s: expected a short "
					    "scalar", i, kk);
					return BF_ERR_INVALID;
				}
		}
	}
	return 0;
}

int
fingerprint_decode(const char *line, size_t len, char **text, char sha256[65],
    struct bf_diag *d)
{
	json_t *fp = NULL;
	const char *type = NULL, *sha = NULL;
	int r;

	*text = NULL;
	sha256[0] = '\0';
	if ((r = jx_loads(line, len, BF_MAX_AGENT_LINE, &fp, d)) != 0)
		goto out;
	if (!json_is_object(fp)) {
		bf_diag_set(d, "probe", "expected an object, got %s", jx_type_name(fp));
		r = BF_ERR_PROTO;
		goto out;
	}
	if ((r = jx_str(fp, "type", JX_REQUIRED, 32, &type, "probe", d)) != 0 ||
	    (r = jx_str(fp, "sha256", JX_REQUIRED, 64, &sha, "probe", d)) != 0)
		goto out;
	if (strcmp(type, "fingerprint") != 0) {
		bf_diag_set(d, "probe.type", "expected \"fingerprint\", got \"%.20s\"", type);
		r = BF_ERR_PROTO;
		goto out;
	}
	if (!sha256_is_hex(sha)) {
		bf_diag_set(d, "probe.sha256", "expected 64 lowercase hex digits");
		r = BF_ERR_PROTO;
		goto out;
	}
	if ((r = fingerprint_check(fp, "probe", d)) != 0)
		goto out;
	if ((*text = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	memcpy(sha256, sha, 65);
out:
	json_decref(fp);
	return r;
}
