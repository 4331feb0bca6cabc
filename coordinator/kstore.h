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
 * O_NOFOLLOW, so neither a symlink planted in it nor the process's later
 * identity changes what a name reaches. Files are 0600, written to a
 * temporary name, fsync'd and renamed, so a reader never sees half a file.
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
 * Open (making it, 0700, when absent) the directory path: it must be a
 * real directory, not a symlink, owned by us and writable by no one else.
 * *out freed with kstore_close(). d says what is wrong.
 */
int kstore_open(const char *path, struct kstore **out, struct bf_diag *d);
void kstore_close(struct kstore *k);		/* accepts NULL */

/* Store p[0..n) (n <= KSTORE_MAX_ARTIFACT) under its sha256, which goes
 * to sha256. Already there: 0, nothing written. */
int kstore_put(struct kstore *k, const void *p, size_t n, char sha256[65]);
/*
 * A file for reading: *fd (the caller closes) and *size. The name must be
 * 64 lowercase hex digits (anything else is BF_ERR_INVALID, never a path);
 * a regular file of at most KSTORE_MAX_ARTIFACT bytes. BF_ERR_NOTFOUND.
 */
int kstore_open_blob(struct kstore *k, const char *sha256, int *fd, int64_t *size);
/* Read it whole, checking that its bytes are its name: *data (malloc'd,
 * the caller frees), *n. BF_ERR_INVALID when they are not (a damaged file). */
int kstore_read(struct kstore *k, const char *sha256, void **data, size_t *n);
/* Remove it; absent is fine. */
int kstore_remove(struct kstore *k, const char *sha256);

#endif
