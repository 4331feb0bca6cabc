/*
 * fold.h: perf script text folded into stacks, and folded text read back.
 *
 * Folded text is one stack per line, "comm;outer;...;inner COUNT", lines in
 * frame order (fold_stack_cmp), COUNT the samples of that stack. It is what
 * the agent sends as the "folded" artifact of a profiled iteration, what
 * flame.c draws and what profdiff.c compares.
 *
 * Nothing of perf's text is trusted: a frame's symbol (a C++ or Rust name,
 * or bytes an attacker's binary chose) becomes printable UTF-8 without ';'
 * or control bytes, cut at BF_MAX_FOLD_SYMBOL bytes; a stack deeper than
 * BF_MAX_FOLD_FRAMES keeps its innermost frames under a "[truncated]" frame.
 * libc only: the agent links it.
 */
#ifndef BF_FOLD_H
#define BF_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* One distinct key with two counts (stacks: a = samples). */
struct fold_ent {
	char *key;		/* NUL-terminated, owned by the map */
	size_t len;
	uint64_t a, b;
	uint64_t stamp;		/* the caller's: fold_map_add leaves it */
};

/* A string-keyed hash map (open addressing); keys up to max_bytes in all. */
struct fold_map {
	struct fold_ent *ent;	/* cap slots, key NULL when empty */
	size_t cap, n;
	size_t bytes, max_bytes;
};

void fold_map_init(struct fold_map *m, size_t max_bytes);
/* Add a and b to key's counts (a new key starts at 0). BF_ERR_TOOBIG when
 * a new key would pass max_bytes, BF_ERR_ALLOC. */
int fold_map_add(struct fold_map *m, const char *key, size_t len, uint64_t a, uint64_t b);
struct fold_ent *fold_map_get(const struct fold_map *m, const char *key, size_t len);
/* The entries, packed to the front and sorted by cmp (the map is then only
 * good for fold_map_free). */
void fold_map_sort(struct fold_map *m, int (*cmp)(const void *, const void *));
void fold_map_free(struct fold_map *m);	/* accepts a zeroed map */

struct fold {
	struct fold_map stacks;
	struct buf line;	/* a partial line of fold_feed */
	int line_over;		/* the line passed BF_MAX_FOLD_LINE: rest skipped */
	int in_event;		/* a header line was seen, frames follow */
	char *comm;		/* of the event in progress */
	char **frames;		/* its frames as perf prints them: innermost first */
	size_t nframes;
	uint64_t samples;	/* events folded */
	uint64_t odd;		/* lines that fit nowhere, skipped */
	uint64_t truncated;	/* stacks cut at BF_MAX_FOLD_FRAMES */
	int err;		/* sticky: a fold_map_add failure */
};

#define BF_MAX_FOLD_LINE	(64 * 1024)	/* one line of perf script */

/* Folded text at most max_out bytes (the artifact's cap). */
void fold_init(struct fold *f, size_t max_out);
/* perf script output (`-F comm,tid,ip,sym,dso` with -g), in any chunks. */
int fold_feed(struct fold *f, const char *data, size_t len);
/* One line without its newline. */
int fold_line(struct fold *f, const char *line, size_t len);
/*
 * The folded text into out (appended). BF_ERR_TOOBIG when it does not fit
 * the cap given to fold_init (the caller drops the artifact), else the
 * first error fold_feed met.
 */
int fold_finish(struct fold *f, struct buf *out);
void fold_free(struct fold *f);		/* accepts a zeroed fold */

/* qsort comparator of struct fold_ent by key in frame order: a stack
 * before the stacks under it, siblings by byte order (';' sorts first). */
int fold_stack_cmp(const void *a, const void *b);
/* Same on two stack strings of the given lengths. */
int fold_stack_cmp_str(const char *a, size_t alen, const char *b, size_t blen);

/*
 * Split one line of folded text: *stack_len is the length of the stack
 * (before the last space), *count its samples (1..2^53). BF_ERR_PARSE when
 * the line is not "STACK COUNT" with a non-empty stack.
 */
int fold_parse_line(const char *line, size_t len, size_t *stack_len, uint64_t *count);

/* s[0..len) as printable UTF-8 into out (appended): control bytes, DEL and
 * invalid UTF-8 become '?', and ';' becomes ':' when no_semicolon. At most
 * max bytes are written, cut at a character boundary. */
int fold_clean(struct buf *out, const char *s, size_t len, size_t max, int no_semicolon);

#endif
