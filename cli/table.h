/*
 * table.h: aligned plain-text tables for the CLI. Cells are copied when a
 * row is added and made safe for a terminal there: control characters
 * (C0, DEL, C1) and malformed UTF-8 become '?', since every cell may come
 * from the coordinator and so from a lab machine's output. Widths count
 * UTF-8 code points; a cell wider than its column's max is cut with "...".
 */
#ifndef BF_CLI_TABLE_H
#define BF_CLI_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "buf.h"

#define TABLE_LEFT	0
#define TABLE_RIGHT	1

struct table_col {
	const char *head;	/* header text, e.g. "STATE" */
	size_t max;		/* widest a cell may be, in code points; 0 = no limit */
	int align;		/* TABLE_LEFT or TABLE_RIGHT */
};

struct table {
	const struct table_col *cols;	/* borrowed; must outlive the table */
	size_t ncols;
	char **cells;			/* nrows * ncols, owned */
	size_t nrows;
	size_t cap;			/* rows allocated */
};

/* cols is borrowed. BF_ERR_INVALID when ncols is 0. */
int table_init(struct table *t, const struct table_col *cols, size_t ncols);
/* Copy one row of t->ncols cells; a NULL cell shows as "-". */
int table_add_row(struct table *t, const char *const *cells);
/* Append the table (header and rows, no trailing spaces) to out. */
int table_render(const struct table *t, struct buf *out);
/* Render and write to f; BF_ERR_IO when the write fails. */
int table_print(const struct table *t, FILE *f);
/* Free the cells; accepts NULL and a table that was never initialised
 * only if it was zeroed. */
void table_free(struct table *t);

/* A copy of s, at most max code points (0 = no limit), made safe as
 * above. Caller frees. NULL only on ENOMEM. */
char *table_sanitize(const char *s, size_t max);
/* Display width of s in code points. */
size_t table_width(const char *s);

#endif
