/*
 * api.h: the HTTP API under /api/v1 (see DESIGN.md), on libmicrohttpd.
 */
#ifndef BF_API_H
#define BF_API_H

#include "err.h"
#include "recipes.h"
#include "sched.h"
#include "store.h"

struct api_config {
	const char *addr;		/* numeric IPv4/IPv6 address */
	int port;			/* 0 picks a free port */
	const char *web_dir;		/* static files served at /, or NULL */
	int auth_required;		/* tokens even while the store has none */
	const char *tls_cert;		/* PEM files: HTTPS when both are set */
	const char *tls_key;
	/* Signs with the lab key (held by the privileged process); NULL: no key. */
	int (*lab_sign)(void *arg, const unsigned char *msg, size_t len,
	    unsigned char sig[64]);
	void *lab_sign_arg;
	unsigned char lab_pub[32];	/* the lab key's public half */
	int has_lab_key;
	const char *workdir_root;	/* --workdir-root: path parameters must be under it */
	const char *allow_hosts;	/* --allow-host NAME[:PORT],...: more Host names */
};

struct api;
struct events;

/* Starts serving at once. Borrowed pointers must outlive the api; ev may be
 * NULL (then GET /events answers 503). */
int api_start(const struct api_config *cfg, struct store *st, const struct recipes *rs,
    struct sched *sc, struct events *ev, struct api **out, struct bf_diag *d);
/* The port actually bound (useful with port 0). */
int api_port(const struct api *a);
void api_stop(struct api *a);		/* accepts NULL */

#endif
