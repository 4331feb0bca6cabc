/*
 * json.h: the agent's own small JSON, since it links libc only. A strict
 * recursive-descent parser for the step (RFC 8259 plus caps: depth, size,
 * string length, members per container; no NUL in strings, no duplicate
 * keys, valid UTF-8 only) and a writer for the JSON lines it prints.
 */
#ifndef BF_AGENT_JSON_H
#define BF_AGENT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "caps.h"

/* Longest decoded string (key or value): an argv element is the longest
 * legitimate string in a step. */
#define JSON_MAX_STRING		BF_MAX_ARG
/* Members of one array or object. Bounds the quadratic duplicate-key check
 * and is far above any step field (argv is capped at BF_MAX_ARGV). */
#define JSON_MAX_MEMBERS	1024

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUM,
	JSON_STR,
	JSON_ARR,
	JSON_OBJ
};

struct json {
	enum json_type type;
	int boolean;		/* JSON_BOOL */
	double num;		/* JSON_NUM */
	int is_int;		/* JSON_NUM written without fraction/exponent and fits int64 */
	int64_t i;		/* JSON_NUM when is_int */
	char *str;		/* JSON_STR: NUL-terminated, contains no NUL */
	size_t len;		/* JSON_STR: bytes in str */
	char *key;		/* set when this node is an object member */
	struct json **items;	/* JSON_ARR elements or JSON_OBJ members, in order */
	size_t n;
	size_t cap;
};

/*
 * Parse exactly one JSON value from text[0..len) (at most BF_MAX_STEP bytes).
 * On success *out is a tree the caller frees with json_free(). On failure
 * returns BF_ERR_PARSE/TOOBIG/RANGE/ALLOC and d (may be NULL) says at which
 * byte offset and why.
 */
int json_parse(const char *text, size_t len, struct json **out, struct bf_diag *d);
void json_free(struct json *j);		/* accepts NULL */

/* Member of an object by key, or NULL (also when obj is not an object). */
const struct json *json_get(const struct json *obj, const char *key);
/* Name of a type, for messages ("string", "object", ...). */
const char *json_type_name(enum json_type t);

/* Append s[0..len) as a quoted JSON string. Control characters are escaped,
 * NUL and invalid UTF-8 bytes become U+FFFD, so any bytes give a line that
 * strict parsers (ours, jansson's defaults) accept. */
int json_put_str(struct buf *b, const char *s, size_t len);
/* Append a finite double; NaN and infinities (never valid JSON) become null. */
int json_put_num(struct buf *b, double v);

#endif
