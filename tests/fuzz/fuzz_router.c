/*
 * fuzz_router.c: the HTTP request router of coordinator/api.c (route_match
 * is static, so api.c is compiled into this harness): every route pattern
 * against a fuzzed path. A match must leave captures that the handlers may
 * trust: {id} in 1..INT64_MAX, {name} a valid name of at most BF_MAX_NAME
 * bytes. The first byte picks the method, which is matched as dispatch
 * does before any handler (and any store) is reached.
 */
#include "../../coordinator/api.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "POST", "DELETE", "PUT", "HEAD" };
	const char *method;
	struct api_req rq;
	char path[2048];
	size_t i, n;

	if (size == 0)
		return 0;
	method = methods[data[0] % 5];
	n = size - 1 < sizeof(path) - 1 ? size - 1 : sizeof(path) - 1;
	memcpy(path, data + 1, n);
	path[n] = '\0';
	for (i = 0; i < API_NROUTES; i++) {
		memset(&rq, 0, sizeof(rq));
		rq.id = -1;
		if (!route_match(api_routes[i].pattern, path, &rq))
			continue;
		if (strstr(api_routes[i].pattern, "{id}") != NULL && rq.id < 1)
			abort();
		if (strstr(api_routes[i].pattern, "{name}") != NULL &&
		    (strlen(rq.name) > BF_MAX_NAME || jx_check_name(rq.name, "", NULL) != 0))
			abort();
		/* Every route has a role; 0 would be a route added without one. */
		if (api_routes[i].need == 0)
			abort();
		(void)strcmp(api_routes[i].method, method);
	}
	return 0;
}
