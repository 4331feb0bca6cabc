/*
 * kstore.h: the artifact directory, where kernel builds' artifacts (image,
 * modules tarball, .config, System.map, build log) are kept as files named
 * by the sha256 of their bytes (issue 18). Content-addressed: a name says
 * what the file holds, two builds with an equal artifact share it, and a
 * put of bytes already there writes nothing. The store's kernel_artifacts
 * rows (store.h) say which exist; this module only holds bytes.
 *
 * The directory is opened once (before benchfleetd's API child drops its
 * privileges) and every later access is relative to that descriptor with
 * O_NOFOLLOW, so that a symlink planted in it reaches nothing. Files are
 * written to a temporary name, fsync'd and renamed, so a reader never sees
 * half a file.
 *
 * Modes: the directory 0711, files 0644. benchfleetd's API child drops to
 * nobody and must open a file by name; it cannot list the directory. A
 * name is the sha256 of the bytes, so whoever can name a file either knows
 * its bytes already (a defconfig's hash is computable from the defconfig)
 * or was given the name by the API, which a viewer may read anyway.
 */
#ifndef BF_KSTORE_H
#define BF_KSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define KSTORE_MAX_ARTIFACT	((int64_t)1 << 30)	/* one artifact: 1 GiB */
#define KSTORE_DEFAULT_KEEP	((int64_t)20 << 30)	/* retention: 20 GiB of artifacts */

struct kstore;

/*
 * Open (making it when absent) the directory path: it must be a real
 * directory, not a symlink, owned by us and writable by no one else; it is
 * made mode 0711 (see above).
 * *out freed with kstore_close(). d says what is wrong.
 */
int kstore_open(const char *path, struct kstore **out, struct bf_diag *d);
void kstore_close(struct kstore *k);		/* accepts NULL */
/* The default directory for a store target: "artifacts" next to a SQLite
 * file, var/artifacts for PostgreSQL (as the lab key). Caller frees; NULL
 * when out of memory. */
char *kstore_default_dir(const char *store, int pg);

/* Store p[0..n) (n <= KSTORE_MAX_ARTIFACT) under its sha256, which goes
 * to sha256. Already there: 0, nothing written. */
int kstore_put(struct kstore *k, const void *p, size_t n, char sha256[65]);
/*
 * A file for reading: *fd (the caller closes) and *size. The name must be
 * 64 lowercase hex digits (anything else is BF_ERR_INVALID, never a path);
 * a regular file of at most KSTORE_MAX_ARTIFACT bytes. BF_ERR_NOTFOUND.
 */
int kstore_open_blob(struct kstore *k, const char *sha256, int *fd, int64_t *size);
/* A path on this host that names the file sha256 (through the directory's
 * descriptor: /proc/self/fd/N/<sha256>), for a reader that takes a path
 * (transport_upload); the file must exist. BF_ERR_INVALID, _NOTFOUND. */
int kstore_local_path(struct kstore *k, const char *sha256, char *out, size_t outsz);
/* Read it whole, checking that its bytes are its name: *data (malloc'd,
 * the caller frees), *n. BF_ERR_INVALID when they are not (a damaged file). */
int kstore_read(struct kstore *k, const char *sha256, void **data, size_t *n);
/* Remove it; absent is fine. */
int kstore_remove(struct kstore *k, const char *sha256);
/* Retention: store_kbuild_prune(st, keep) and the files it lets go.
 * d says what failed. */
struct store;
int kstore_prune(struct kstore *k, struct store *st, int64_t keep, struct bf_diag *d);

#endif
