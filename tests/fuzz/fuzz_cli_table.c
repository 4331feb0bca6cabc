/*
 * fuzz_cli_table.c: the CLI's terminal-safety layer (cli/table.c), which
 * every string from the coordinator (and so from a lab machine) passes
 * through: rows of tab-separated cells, rendered with column caps. The
 * rendered text must hold no control character but '\n' and no DEL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FC_COLS 3

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct table_col cols[FC_COLS] = {
		{ "ID", 0, TABLE_RIGHT }, { "NAME", 12, TABLE_LEFT }, { "STATE", 3, TABLE_LEFT },
	};
	char *text, *line, *save = NULL, *s;
	const char *cells[FC_COLS];
	struct table t;
	struct buf out;
	size_t i, k;

	if (size > 1 << 16 || (text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if ((s = table_sanitize(text, size > 0 ? data[0] % 40 : 0)) != NULL) {
		for (i = 0; s[i] != '\0'; i++)
			if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f)
				abort();
		(void)table_width(s);
		free(s);
	}
	memset(&t, 0, sizeof(t));
	if (table_init(&t, cols, FC_COLS) != 0)
		goto out;
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *c = line, *tab;

		for (k = 0; k < FC_COLS; k++) {
			cells[k] = c;
			if (c != NULL && (tab = strchr(c, '\t')) != NULL) {
				*tab = '\0';
				c = tab + 1;
			} else {
				c = NULL;
			}
		}
		if (table_add_row(&t, cells) != 0)
			break;
	}
	buf_init(&out, 4 << 20);
	if (table_render(&t, &out) == 0) {
		for (i = 0; i < out.len; i++)
			if (((unsigned char)out.data[i] < 0x20 && out.data[i] != '\n') ||
			    (unsigned char)out.data[i] == 0x7f)
				abort();
	}
	buf_free(&out);
out:
	table_free(&t);
	free(text);
	return 0;
}
