/*
 * api.h: the HTTP API under /api/v1 (see DESIGN.md), on libmicrohttpd.
 */
#ifndef BF_API_H
#define BF_API_H

#include "err.h"
#include "recipes.h"
#include "sched.h"
#include "store.h"

/*
 * What the API asks of the scheduler's side: with kick NULL, api_start uses
 * direct calls on its sched (one process, --privsep no); in the API child
 * of privsep they go over the monitor's socket (monitor.h).
 */
struct api_ctl {
	void (*kick)(void *arg, int machines);	/* new work; machines: the list changed */
	int (*probe)(void *arg, const char *name);	/* BF_ERR_NOTFOUND: no worker */
	int (*key_readable)(void *arg, const char *path);	/* 0: the daemon can */
	void *arg;
};

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
	const char *kernel_git_roots;	/* --kernel-git-roots: DIR:DIR of a job's kernels, or NULL */
	struct kstore *artifacts;	/* --artifact-dir, opened (borrowed), or NULL */
	const char *allow_hosts;	/* --allow-host NAME[:PORT],...: more Host names */
	/* Or the text of those PEM files, read before privileges were
	 * dropped (privsep's API child): tls_cert/tls_key then only name
	 * them. Copied. */
	const char *tls_cert_pem;
	const char *tls_key_pem;
	struct api_ctl ctl;
};

struct api;
struct events;
struct kstore;

/* Starts serving at once. Borrowed pointers must outlive the api; ev may be
 * NULL (then GET /events answers 503); sc is used only without cfg->ctl. */
int api_start(const struct api_config *cfg, struct store *st, const struct recipes *rs,
    struct sched *sc, struct events *ev, struct api **out, struct bf_diag *d);
/* A PEM file of at most 64 KiB into *out (NUL-terminated, *lenp bytes);
 * the caller wipes and frees it. d names what. */
int api_read_pem(const char *path, const char *what, char **out, size_t *lenp,
    struct bf_diag *d);
/* The port actually bound (useful with port 0). */
int api_port(const struct api *a);
void api_stop(struct api *a);		/* accepts NULL */

#endif
