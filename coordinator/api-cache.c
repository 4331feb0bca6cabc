/*
 * api-cache.c: the answers of the polling GETs (the routes with an ETag,
 * api.c) kept under the store generation they were read at. A dashboard,
 * or 64 of them, polling the jobs list re-ran the same queries and the
 * same JSON dump for data that had not changed; an answer cached under
 * generation G is served again only while store_generation still says G,
 * which no commit since allows (store.h), so it is exactly what the
 * handler would read now. Keyed by path and query arguments; answers
 * carrying a per-request header (an event id) are not kept.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"

#define API_CACHE_SLOTS		16
#define API_CACHE_MAX_KEY	512		/* a longer query is not cached */
#define API_CACHE_MAX_BODY	(512 * 1024)	/* nor a larger answer */

struct api_cache_ent {
	char key[API_CACHE_MAX_KEY];
	char gen[STORE_GENERATION_MAX + 2];
	char *body;
	size_t len;
	uint64_t used;
};

struct api_cache {
	pthread_mutex_t mu;
	struct api_cache_ent e[API_CACHE_SLOTS];
	uint64_t tick;
};

struct key_acc {
	char *k;
	size_t n, cap;
	int over;
};

static enum MHD_Result
key_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct key_acc *a = cls;
	size_t kl = strlen(key), vl = value != NULL ? strlen(value) : 0;

	(void)kind;
	/* "&k=v": NUL-separated, so that no value can forge another key */
	if (a->over || kl + vl + 3 > a->cap - a->n) {
		a->over = 1;
		return MHD_NO;
	}
	a->k[a->n++] = '\0';
	memcpy(a->k + a->n, key, kl);
	a->n += kl;
	a->k[a->n++] = value != NULL ? '=' : '\0';
	memcpy(a->k + a->n, value != NULL ? value : "", vl);
	a->n += vl;
	return MHD_YES;
}

/* rq's key (path, then its arguments in order) into k; its length, or 0
 * when it does not fit. */
static size_t
cache_key(struct api_req *rq, char *k, size_t cap)
{
	struct key_acc a = { .k = k, .n = 0, .cap = cap, .over = 0 };
	size_t pl = strlen(rq->path);

	if (pl + 1 > cap)
		return 0;
	memcpy(k, rq->path, pl);
	a.n = pl;
	MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, key_arg, &a);
	if (a.over || a.n >= cap)
		return 0;
	memset(k + a.n, 0, cap - a.n);	/* compared whole: no stale tail */
	return a.n;
}

int
api_cache_new(struct api_cache **out)
{
	struct api_cache *c;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return BF_ERR_ALLOC;
	if (pthread_mutex_init(&c->mu, NULL) != 0) {
		free(c);
		return BF_ERR_SYS;
	}
	*out = c;
	return 0;
}

void
api_cache_free(struct api_cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < API_CACHE_SLOTS; i++)
		free(c->e[i].body);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

int
api_cache_get(struct api_cache *c, struct api_req *rq, struct api_resp *rs)
{
	char key[API_CACHE_MAX_KEY];
	char *body = NULL;
	size_t i, len = 0;

	if (c == NULL || rs->etag[0] == '\0' || cache_key(rq, key, sizeof(key)) == 0)
		return 0;
	pthread_mutex_lock(&c->mu);
	for (i = 0; i < API_CACHE_SLOTS; i++) {
		struct api_cache_ent *e = &c->e[i];

		if (e->body == NULL || strcmp(e->gen, rs->etag) != 0 ||
		    memcmp(e->key, key, sizeof(key)) != 0)
			continue;
		if ((body = malloc(e->len + 1)) != NULL) {
			memcpy(body, e->body, e->len);
			body[e->len] = '\0';
			len = e->len;
			e->used = ++c->tick;
		}
		break;
	}
	pthread_mutex_unlock(&c->mu);
	if (body == NULL)
		return 0;
	rs->status = MHD_HTTP_OK;
	rs->text = body;
	rs->text_len = len;
	rs->ctype = "application/json";
	return 1;
}

void
api_cache_put(struct api_cache *c, struct api_req *rq, const struct api_resp *rs)
{
	char key[API_CACHE_MAX_KEY];
	struct api_cache_ent *e;
	char *body;
	size_t i, pick = 0;

	if (c == NULL || rs->etag[0] == '\0' || rs->status != MHD_HTTP_OK ||
	    rs->text == NULL || rs->text_len > API_CACHE_MAX_BODY || rs->has_event_id ||
	    cache_key(rq, key, sizeof(key)) == 0 || (body = malloc(rs->text_len + 1)) == NULL)
		return;
	memcpy(body, rs->text, rs->text_len);
	body[rs->text_len] = '\0';
	pthread_mutex_lock(&c->mu);
	/* the key's slot (an older generation's answer), else a free one,
	 * else the least recently used */
	for (i = 0; i < API_CACHE_SLOTS; i++)
		if (c->e[i].body != NULL && memcmp(c->e[i].key, key, sizeof(key)) == 0)
			break;
	if (i < API_CACHE_SLOTS)
		pick = i;
	else
		for (i = 0; i < API_CACHE_SLOTS; i++) {
			if (c->e[i].body == NULL) {
				pick = i;
				break;
			}
			if (c->e[i].used < c->e[pick].used)
				pick = i;
		}
	e = &c->e[pick];
	free(e->body);
	memcpy(e->key, key, sizeof(key));
	memcpy(e->gen, rs->etag, sizeof(e->gen));
	e->body = body;
	e->len = rs->text_len;
	e->used = ++c->tick;
	pthread_mutex_unlock(&c->mu);
}
