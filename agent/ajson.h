/*
 * ajson.h: the agent's own small JSON, since it links libc only. A strict
 * recursive-descent parser for the step (RFC 8259 plus caps: depth, size,
 * string length, members per container; no NUL in strings, no duplicate
 * keys, valid UTF-8 only) and a writer for the JSON lines it prints.
 * Prefixed ajson_/AJSON_, not json_: jansson owns json_* and JSON_NULL, and
 * the fuzz and unit builds see both in one program.
 */
#ifndef BF_AGENT_AJSON_H
#define BF_AGENT_AJSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "caps.h"

/* Longest decoded string (key or value): an argv element is the longest
 * legitimate string in a step. */
#define AJSON_MAX_STRING		BF_MAX_ARG
/* Members of one array or object. Bounds the quadratic duplicate-key check
 * and is far above any step field (argv is capped at BF_MAX_ARGV). */
#define AJSON_MAX_MEMBERS	1024

enum ajson_type {
	AJSON_NULL,
	AJSON_BOOL,
	AJSON_NUM,
	AJSON_STR,
	AJSON_ARR,
	AJSON_OBJ
};

struct ajson {
	enum ajson_type type;
	int boolean;		/* AJSON_BOOL */
	double num;		/* AJSON_NUM */
	int is_int;		/* AJSON_NUM written without fraction/exponent and fits int64 */
	int64_t i;		/* AJSON_NUM when is_int */
	char *str;		/* AJSON_STR: NUL-terminated, contains no NUL */
	size_t len;		/* AJSON_STR: bytes in str */
	char *key;		/* set when this node is an object member */
	struct ajson **items;	/* AJSON_ARR elements or AJSON_OBJ members, in order */
	size_t n;
	size_t cap;
};

/*
 * Parse exactly one JSON value from text[0..len) (at most BF_MAX_STEP bytes).
 * On success *out is a tree the caller frees with ajson_free(). On failure
 * returns BF_ERR_PARSE/TOOBIG/RANGE/ALLOC and d (may be NULL) says at which
 * byte offset and why.
 */
int ajson_parse(const char *text, size_t len, struct ajson **out, struct bf_diag *d);
void ajson_free(struct ajson *j);		/* accepts NULL */

/* Member of an object by key, or NULL (also when obj is not an object). */
const struct ajson *ajson_get(const struct ajson *obj, const char *key);
/* Name of a type, for messages ("string", "object", ...). */
const char *ajson_type_name(enum ajson_type t);

/* Append s[0..len) as a quoted JSON string. Control characters are escaped,
 * NUL and invalid UTF-8 bytes become U+FFFD, so any bytes give a line that
 * strict parsers (ours, jansson's defaults) accept. */
int ajson_put_str(struct buf *b, const char *s, size_t len);
/* Append a finite double; NaN and infinities (never valid JSON) become null. */
int ajson_put_num(struct buf *b, double v);

#endif
