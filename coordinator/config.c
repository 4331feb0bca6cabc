/*
 * config.c: benchfleetd's --config file (see config.h). The file is
 * written by the coordinator's admin, but it is still checked line by line
 * with a cap, and every error names the file and the line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

#define CONFIG_VIS	64	/* bytes of file text quoted in a message */

struct config_ctx {
	const char *path;
	int lineno;
	const struct config_ops *ops;
	void *arg;
	int argc;		/* the command line, whose options win */
	char *const *argv;
	struct bf_diag *d;
};

/* A printable, bounded copy of s for a message: a control byte or a
 * non-ASCII byte becomes '?', a long text ends in "...". */
static const char *
config_vis(const char *s, char *out, size_t outsz)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i < outsz - 4 && i < CONFIG_VIS; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (s[i] != '\0')
		memcpy(out + i, "...", 3), i += 3;
	out[i] = '\0';
	return out;
}

static int
config_fail(struct config_ctx *c, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
config_fail(struct config_ctx *c, int r, const char *fmt, ...)
{
	char msg[BF_DIAG_MSG];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bf_diag_set(c->d, NULL, "%s:%d: %s", c->path, c->lineno, msg);
	return r;
}

/* One line into buf, newline dropped. 1: a line; 0: end of file; else
 * BF_ERR_TOOBIG (over cap - 1 bytes), BF_ERR_PARSE (a NUL byte), BF_ERR_IO. */
static int
config_getline(FILE *f, char *buf, size_t cap, size_t *lenp)
{
	size_t len = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (c == '\0')
			return BF_ERR_PARSE;
		if (len >= cap - 1)
			return BF_ERR_TOOBIG;
		buf[len++] = (char)c;
	}
	if (ferror(f))
		return BF_ERR_IO;
	if (c == EOF && len == 0)
		return 0;
	buf[len] = '\0';
	*lenp = len;
	return 1;
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* s with blanks cut off both ends, in place. */
static char *
trim(char *s)
{
	char *e;

	while (is_blank(*s))
		s++;
	for (e = s + strlen(s); e > s && is_blank(e[-1]); e--)
		;
	*e = '\0';
	return s;
}

/* Cut a trailing comment: a '#' first in the value or after a blank. */
static void
cut_comment(char *v)
{
	char *p;

	for (p = v; *p != '\0'; p++) {
		if (*p == '#' && (p == v || is_blank(p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

/* True when argv gives option name itself (values of options skipped). */
static int
config_on_cmdline(const struct config_ctx *c, const char *name)
{
	int i;

	for (i = 1; i < c->argc; i++) {
		if (strncmp(c->argv[i], "--", 2) != 0)
			continue;
		if (strcmp(c->argv[i] + 2, name) == 0)
			return 1;
		if (strcmp(c->argv[i], "--config") == 0 ||
		    c->ops->kind(c->argv[i] + 2) == CONFIG_VALUE)
			i++;
	}
	return 0;
}

/*
 * Split a profile's value into w, in place in v (a word is never longer
 * than its text). Messages say which byte; no value text is quoted back,
 * as a profile may hold a password.
 */
static int
config_split(struct config_ctx *c, const char *key, char *v, struct config_words *w)
{
	char *p = v, *o = v;
	int inq, quoted;

	w->n = 0;
	for (;;) {
		while (is_blank(*p))
			p++;
		if (*p == '\0' || *p == '#')
			break;
		if (w->n >= CONFIG_MAX_WORDS)
			return config_fail(c, BF_ERR_TOOBIG, "%s: more than %d words", key,
			    CONFIG_MAX_WORDS);
		w->word[w->n] = o;
		inq = quoted = 0;
		for (; *p != '\0' && (inq || !is_blank(*p)); p++) {
			unsigned char ch = (unsigned char)*p;

			if (ch == '\'') {
				inq = !inq;
				quoted = 1;
				continue;
			}
			if (ch < 0x20 || ch == 0x7f)
				return config_fail(c, BF_ERR_INVALID, "%s: control byte 0x%02x in "
				    "word %zu", key, ch, w->n + 1);
			if (!inq && (ch == '"' || ch == '\\'))
				return config_fail(c, BF_ERR_INVALID, "%s: word %zu: '%c' is not "
				    "quoting here; put a literal part in single quotes", key,
				    w->n + 1, ch);
			*o++ = *p;
		}
		if (inq)
			return config_fail(c, BF_ERR_PARSE, "%s: word %zu: unclosed single quote",
			    key, w->n + 1);
		/* o may catch up with p only at a separator, which is consumed */
		if (*p != '\0')
			p++;
		*o++ = '\0';
		w->quoted[w->n] = (unsigned char)quoted;
		w->n++;
	}
	w->word[w->n] = NULL;
	if (w->n == 0)
		return config_fail(c, BF_ERR_INVALID, "%s needs a command", key);
	return 0;
}

/* "KIND.NAME = WORDS": a profile for the caller. */
static int
config_profile(struct config_ctx *c, char *k, char *v)
{
	struct config_words w;
	struct bf_diag d2;
	char vis[CONFIG_VIS + 4], known[256], *dot = strchr(k, '.');
	const char *const *kinds = c->ops->profile_kinds;
	size_t i;
	int r;

	*dot = '\0';
	known[0] = '\0';
	for (i = 0; kinds != NULL && kinds[i] != NULL; i++) {
		if (strcmp(kinds[i], k) == 0)
			break;
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s.NAME",
		    i > 0 ? ", " : "", kinds[i]);
	}
	if (kinds == NULL || kinds[i] == NULL) {
		*dot = '.';
		return config_fail(c, BF_ERR_INVALID, "unknown option \"%s\"%s%s",
		    config_vis(k, vis, sizeof(vis)), known[0] ? "; profiles are " : "", known);
	}
	*dot = '.';
	if ((r = config_split(c, k, v, &w)) != 0)
		return r;
	bf_diag_clear(&d2);
	*dot = '\0';
	r = c->ops->profile(c->arg, k, dot + 1, &w, &d2);
	*dot = '.';
	if (r != 0)
		return config_fail(c, r, "%s: %s", config_vis(k, vis, sizeof(vis)),
		    d2.msg[0] ? d2.msg : bf_err_str(r));
	return 0;
}

/* One non-blank, non-comment line "key = value". */
static int
config_setting(struct config_ctx *c, char *line)
{
	enum config_kind kind;
	char vis[CONFIG_VIS + 4], *eq, *k, *v;
	int r;

	if ((eq = strchr(line, '=')) == NULL)
		return config_fail(c, BF_ERR_PARSE, "\"%s\": expected \"key = value\"",
		    config_vis(line, vis, sizeof(vis)));
	*eq = '\0';
	k = trim(line);
	v = eq + 1;
	if (*k == '\0')
		return config_fail(c, BF_ERR_PARSE, "no option name before '='");
	/* an option name has no dot: this is a profile, with its own comments */
	if (strchr(k, '.') != NULL)
		return config_profile(c, k, trim(v));
	cut_comment(v);
	v = trim(v);
	if ((kind = c->ops->kind(k)) == CONFIG_NONE)
		return config_fail(c, BF_ERR_INVALID, "unknown option \"%s\"",
		    config_vis(k, vis, sizeof(vis)));
	if (kind == CONFIG_VALUE && *v == '\0')
		return config_fail(c, BF_ERR_INVALID, "%s needs a value", k);
	if (kind == CONFIG_FLAG && strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
		return config_fail(c, BF_ERR_INVALID, "%s: \"%s\" is not yes or no", k,
		    config_vis(v, vis, sizeof(vis)));
	if (config_on_cmdline(c, k))
		return 0;
	if ((r = c->ops->set(c->arg, k, v)) != 0)
		return config_fail(c, r, "%s: %s", k, bf_err_str(r));
	return 0;
}

static int
config_file(struct config_ctx *c)
{
	char line[CONFIG_MAX_LINE + 1], *s;
	size_t len;
	FILE *f;
	int r;

	c->lineno = 0;
	if ((f = fopen(c->path, "r")) == NULL) {
		bf_diag_set(c->d, NULL, "%s: %s", c->path, strerror(errno));
		return BF_ERR_IO;
	}
	for (;;) {
		c->lineno++;
		if ((r = config_getline(f, line, sizeof(line), &len)) == 0)
			break;
		if (r == BF_ERR_TOOBIG) {
			r = config_fail(c, r, "line longer than %d bytes", CONFIG_MAX_LINE);
			goto out;
		}
		if (r == BF_ERR_PARSE) {
			r = config_fail(c, r, "NUL byte in the line");
			goto out;
		}
		if (r < 0) {
			r = config_fail(c, r, "read error: %s", strerror(errno));
			goto out;
		}
		s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		if ((r = config_setting(c, s)) != 0)
			goto out;
	}
	r = 0;
out:
	fclose(f);
	return r;
}

int
config_read(const char *path, const struct config_ops *ops, void *arg, struct bf_diag *d)
{
	struct config_ctx c;

	memset(&c, 0, sizeof(c));
	c.path = path;
	c.ops = ops;
	c.arg = arg;
	c.d = d;
	return config_file(&c);
}

int
config_load(int argc, char *const *argv, const struct config_ops *ops, void *arg,
    struct bf_diag *d)
{
	struct config_ctx c;
	int i, r;

	memset(&c, 0, sizeof(c));
	c.ops = ops;
	c.arg = arg;
	c.argc = argc;
	c.argv = argv;
	c.d = d;
	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0)
			continue;
		if (strcmp(argv[i], "--config") != 0) {
			if (ops->kind(argv[i] + 2) == CONFIG_VALUE)
				i++;
			continue;
		}
		if (++i >= argc) {
			bf_diag_set(d, NULL, "--config needs FILE");
			return BF_ERR_INVALID;
		}
		c.path = argv[i];
		if ((r = config_file(&c)) != 0)
			return r;
	}
	return 0;
}
