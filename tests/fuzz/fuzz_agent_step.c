/*
 * fuzz_agent_step.c: the agent's step parser (what the coordinator sends
 * over SSH) and, for a step it accepts, its metric rules (regex, CSV, JSON
 * path) run over workload output. Input: the step document, a NUL byte,
 * then the workload's output; without a NUL, a fixed output is used.
 * The output is passed NUL-terminated, as the agent's capture buffers
 * always are (struct buf): metric.c bounds regexec with REG_STARTEND, but
 * ASan's regexec interceptor ignores that flag and strlen()s the string,
 * which reports a read past an unterminated buffer that glibc never does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "step.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed_out[] =
    "ops/s: 1,234.5\npages/s: 3.5e6\nfaults: 12\np99=17\n"
    "name,value,unit\nrps,1000,ops/s\n{\"a\":{\"b\":[1,2,{\"c\":3.25}]}}\n";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *out = fixed_out;
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = size, olen = sizeof(fixed_out) - 1, i;
	struct step *st = NULL;
	char *copy = NULL;
	struct bf_diag d;
	double v;

	if (nul != NULL) {
		tlen = (size_t)(nul - data);
		out = (const char *)nul + 1;
		olen = size - tlen - 1;
	}
	if (step_parse(text, tlen, &st, &d) != 0)
		return 0;
	if ((copy = malloc(olen + 1)) != NULL) {
		memcpy(copy, out, olen);
		copy[olen] = '\0';
		for (i = 0; i < st->nmetrics; i++)
			(void)metric_extract(&st->metrics[i], copy, olen, &v);
	}
	free(copy);
	step_free(st);
	return 0;
}
