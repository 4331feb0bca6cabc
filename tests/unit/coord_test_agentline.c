/*
 * coord_test_agentline.c: the agent line decoder (coordinator/agentline.c),
 * table-driven: every line type the agent writes as it writes it, then
 * hostile lines (truncated, huge, deep, wrong types, NaN, unknown types and
 * fields), each of which must be refused with the field at fault named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentline.h"
#include "buf.h"
#include "t.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define SHA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

struct al_case {
	const char *line;
	int want;			/* 0, or the BF_ERR_* expected */
	enum agentline_type type;	/* decoded, or claimed when refused */
	const char *field;		/* refused: in the diagnostic's field */
};

static const struct al_case al_cases[] = {
	/* As the agent writes them (agent/emit.c, hello.c, knobset.c, run.c). */
	{ .line = "{\"type\":\"hello\",\"agent\":\"0.1.0\",\"hostname\":\"bfh1\",\"kernel\":"
	  "\"6.1.0-28-amd64\",\"arch\":\"x86_64\",\"boot_id\":\"b-1\",\"cmdline\":\"ro quiet\","
	  "\"pid\":1234}", .type = AGENTLINE_HELLO },
	{ .line = "{\"type\":\"hello\",\"boot_id\":null,\"cmdline\":null}",
	  .type = AGENTLINE_HELLO },
	{ .line = "{\"type\":\"log\",\"iteration\":0,\"stream\":\"stdout\",\"line\":\"x\"}",
	  .type = AGENTLINE_LOG },
	{ .line = "{\"type\":\"log\",\"iteration\":0,\"stream\":\"stderr\",\"line\":\"\"}",
	  .type = AGENTLINE_LOG },
	{ .line = "{\"type\":\"log\",\"iteration\":3,\"stream\":\"stdout\",\"dropped\":17}",
	  .type = AGENTLINE_LOG },
	{ .line = "{\"type\":\"knobs\",\"before\":{\"thp\":\"never\"},\"requested\":{\"thp\":"
	  "\"always\"},\"after\":{\"thp\":\"always\",\"n\":3}}", .type = AGENTLINE_KNOBS },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"warmup\":true,\"exit\":0,"
	  "\"signal\":0,\"timeout\":false,\"wall_s\":1.01,\"user_s\":1,\"sys_s\":0,"
	  "\"maxrss_kb\":2048,\"metrics\":{\"ops\":123.5},\"missing\":[]}",
	  .type = AGENTLINE_ITERATION },
	{ .line = "{\"type\":\"iteration\",\"iteration\":1,\"exit\":127,\"wall_s\":null,"
	  "\"metrics\":{\"ops\":null},\"missing\":[\"ops\"],\"error\":\"execvp: nope\"}",
	  .type = AGENTLINE_ITERATION },
	{ .line = "{\"type\":\"error\",\"msg\":\"argv[0]: bad\"}", .type = AGENTLINE_ERROR },
	{ .line = "{\"type\":\"done\",\"ok\":true,\"iterations\":3}", .type = AGENTLINE_DONE },
	{ .line = "{\"type\":\"done\"}", .type = AGENTLINE_DONE },
	{ .line = "{\"type\":\"snapshot\",\"sha256\":\"" SHA "\",\"snapshot\":"
	  "{\"kernel.release\":\"6.1.0\",\"hugetlb/x\":null}}", .type = AGENTLINE_SNAPSHOT },
	{ .line = "{\"type\":\"counters\",\"iteration\":2,\"metrics\":{\"vmstat.pgfault\":4098,"
	  "\"pmu.cycles\":1.5e9},\"unsupported\":{\"pmu.x\":\"unsupported: errno 2\"},"
	  "\"notes\":[\"n\"]}", .type = AGENTLINE_COUNTERS },
	{ .line = "{\"type\":\"counters\",\"iteration\":0,\"metrics\":{}}",
	  .type = AGENTLINE_COUNTERS },
	{ .line = "{\"type\":\"iteration\",\"iteration\":5,\"warmup\":false,\"profile\":true,"
	  "\"exit\":0}", .type = AGENTLINE_ITERATION },
	{ .line = "{\"type\":\"artifact\",\"name\":\"perf.data\",\"seq\":0,\"data\":\"YTti\"}",
	  .type = AGENTLINE_ARTIFACT },
	{ .line = "{\"type\":\"artifact_end\",\"name\":\"folded\",\"bytes\":6,\"sha256\":\""
	  SHA "\"}", .type = AGENTLINE_ARTIFACT_END },
	{ .line = "{\"type\":\"artifact_end\",\"name\":\"perf.data\",\"bytes\":40000000,"
	  "\"dropped\":\"over the cap\"}", .type = AGENTLINE_ARTIFACT_END },

	/* Not a line at all. */
	{ .line = "", .want = BF_ERR_PARSE },
	{ .line = "not json", .want = BF_ERR_PARSE },
	{ .line = "{\"type\":\"done\",\"ok\":tr", .want = BF_ERR_PARSE },	/* truncated */
	{ .line = "{\"type\":\"done\"} {}", .want = BF_ERR_PARSE },
	{ .line = "[\"done\"]", .want = BF_ERR_PROTO },
	{ .line = "\"done\"", .want = BF_ERR_PARSE },	/* jx_loads: containers only */
	{ .line = "null", .want = BF_ERR_PARSE },
	{ .line = "{}", .want = BF_ERR_PROTO, .field = "type" },
	{ .line = "{\"type\":1}", .want = BF_ERR_PROTO, .field = "type" },
	{ .line = "{\"type\":\"\"}", .want = BF_ERR_PROTO, .field = "type" },
	{ .line = "{\"type\":\"fingerprint\",\"sha256\":\"x\"}", .want = BF_ERR_PROTO,
	  .field = "type" },
	{ .line = "{\"type\":\"HELLO\"}", .want = BF_ERR_PROTO, .field = "type" },
	{ .line = "{\"type\":\"done\",\"type\":\"hello\"}", .want = BF_ERR_PARSE },
	{ .line = "{\"type\":\"done\",\"ok\":NaN}", .want = BF_ERR_PARSE },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"wall_s\":Infinity}",
	  .want = BF_ERR_PARSE },
	{ .line = "{\"type\":\"log\",\"line\":\"a\\u0000b\"}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_LOG, .field = "log.line" },

	/* Unknown fields, per type. */
	{ .line = "{\"type\":\"hello\",\"hostnme\":\"x\"}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_HELLO, .field = "hello.hostnme" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"cell\":1}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_ITERATION, .field = "iteration.cell" },
	{ .line = "{\"type\":\"done\",\"ok\":true,\"extra\":0}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_DONE, .field = "done.extra" },
	{ .line = "{\"type\":\"knobs\",\"during\":{}}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_KNOBS, .field = "knobs.during" },

	/* Wrong types and ranges. */
	{ .line = "{\"type\":\"hello\",\"hostname\":7}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_HELLO, .field = "hello.hostname" },
	{ .line = "{\"type\":\"hello\",\"hostname\":null}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_HELLO, .field = "hello.hostname" },
	{ .line = "{\"type\":\"hello\",\"pid\":-1}", .want = BF_ERR_RANGE,
	  .type = AGENTLINE_HELLO, .field = "hello.pid" },
	{ .line = "{\"type\":\"log\",\"stream\":\"stdin\",\"line\":\"x\"}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_LOG, .field = "log.stream" },
	{ .line = "{\"type\":\"log\",\"line\":[\"x\"]}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_LOG, .field = "log.line" },
	{ .line = "{\"type\":\"log\",\"line\":\"x\",\"dropped\":2}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_LOG, .field = "log" },
	{ .line = "{\"type\":\"log\",\"dropped\":-2}", .want = BF_ERR_RANGE,
	  .type = AGENTLINE_LOG, .field = "log.dropped" },
	{ .line = "{\"type\":\"knobs\",\"after\":[]}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_KNOBS, .field = "knobs.after" },
	{ .line = "{\"type\":\"knobs\",\"after\":{\"thp\":{\"x\":1}}}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_KNOBS, .field = "knobs.after.thp" },
	{ .line = "{\"type\":\"iteration\"}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_ITERATION, .field = "iteration.iteration" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":-1}", .want = BF_ERR_RANGE,
	  .type = AGENTLINE_ITERATION, .field = "iteration.iteration" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":10101}", .want = BF_ERR_RANGE,
	  .type = AGENTLINE_ITERATION, .field = "iteration.iteration" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":1.5}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_ITERATION, .field = "iteration.iteration" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":\"0\"}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_ITERATION, .field = "iteration.iteration" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":99999999999999999999999}",
	  .want = BF_ERR_PARSE },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"exit\":300}", .want = BF_ERR_RANGE,
	  .type = AGENTLINE_ITERATION, .field = "iteration.exit" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"signal\":-9}", .want = BF_ERR_RANGE,
	  .type = AGENTLINE_ITERATION, .field = "iteration.signal" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"warmup\":1}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_ITERATION, .field = "iteration.warmup" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"wall_s\":\"1.0\"}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ITERATION, .field = "iteration.wall_s" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"wall_s\":1e999}",
	  .want = BF_ERR_PARSE },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"metrics\":[1]}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ITERATION, .field = "iteration.metrics" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"metrics\":{\"ops\":true}}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ITERATION,
	  .field = "iteration.metrics.ops" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"metrics\":{\"\":1}}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ITERATION, .field = "iteration.metrics." },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"missing\":\"ops\"}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ITERATION, .field = "iteration.missing" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":0,\"missing\":[3]}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ITERATION,
	  .field = "iteration.missing[0]" },
	{ .line = "{\"type\":\"error\",\"msg\":{}}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_ERROR, .field = "error.msg" },
	{ .line = "{\"type\":\"done\",\"ok\":\"true\"}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_DONE, .field = "done.ok" },
	{ .line = "{\"type\":\"done\",\"ok\":null}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_DONE, .field = "done.ok" },
	{ .line = "{\"type\":\"done\",\"iterations\":-3}", .want = BF_ERR_RANGE,
	  .type = AGENTLINE_DONE, .field = "done.iterations" },

	/* Evidence lines an agent we did not upload might write. */
	{ .line = "{\"type\":\"snapshot\",\"sha256\":\"" SHA "\"}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_SNAPSHOT, .field = "snapshot.snapshot" },
	{ .line = "{\"type\":\"snapshot\",\"sha256\":\"ABC\",\"snapshot\":{\"a\":\"b\"}}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_SNAPSHOT, .field = "snapshot.sha256" },
	{ .line = "{\"type\":\"snapshot\",\"sha256\":\"" SHA "\",\"snapshot\":{}}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_SNAPSHOT, .field = "snapshot.snapshot" },
	{ .line = "{\"type\":\"snapshot\",\"sha256\":\"" SHA "\",\"snapshot\":{\"vm.x\":3}}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_SNAPSHOT, .field = "snapshot.snapshot.vm.x" },
	{ .line = "{\"type\":\"snapshot\",\"sha256\":\"" SHA "\",\"snapshot\":"
	  "{\"vm.x\":{\"a\":\"b\"}}}", .want = BF_ERR_INVALID, .type = AGENTLINE_SNAPSHOT,
	  .field = "snapshot.snapshot.vm.x" },
	{ .line = "{\"type\":\"snapshot\",\"sha256\":\"" SHA "\",\"snapshot\":{\"\":\"b\"}}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_SNAPSHOT, .field = "snapshot.snapshot." },
	{ .line = "{\"type\":\"snapshot\",\"sha256\":\"" SHA "\",\"snapshot\":{\"a\":\"b\"},"
	  "\"extra\":1}", .want = BF_ERR_INVALID, .type = AGENTLINE_SNAPSHOT },
	{ .line = "{\"type\":\"counters\",\"metrics\":{}}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_COUNTERS, .field = "counters.iteration" },
	{ .line = "{\"type\":\"iteration\",\"iteration\":5,\"profile\":1}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_ITERATION, .field = "iteration.profile" },
	{ .line = "{\"type\":\"artifact\",\"name\":\"/etc/passwd\",\"seq\":0,\"data\":\"\"}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ARTIFACT, .field = "artifact.name" },
	{ .line = "{\"type\":\"artifact\",\"name\":\"folded\",\"seq\":-1,\"data\":\"YTti\"}",
	  .want = BF_ERR_RANGE, .type = AGENTLINE_ARTIFACT, .field = "artifact.seq" },
	{ .line = "{\"type\":\"artifact\",\"name\":\"folded\",\"seq\":0,\"data\":7}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ARTIFACT, .field = "artifact.data" },
	{ .line = "{\"type\":\"artifact\",\"name\":\"folded\",\"seq\":0,\"data\":\"YTti\","
	  "\"path\":\"/tmp/x\"}", .want = BF_ERR_INVALID, .type = AGENTLINE_ARTIFACT },
	{ .line = "{\"type\":\"artifact_end\",\"name\":\"folded\",\"bytes\":4194305,"
	  "\"sha256\":\"" SHA "\"}", .want = BF_ERR_RANGE, .type = AGENTLINE_ARTIFACT_END,
	  .field = "artifact_end.bytes" },
	{ .line = "{\"type\":\"artifact_end\",\"name\":\"folded\",\"bytes\":6}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ARTIFACT_END, .field = "artifact_end" },
	{ .line = "{\"type\":\"artifact_end\",\"name\":\"folded\",\"bytes\":6,\"sha256\":\""
	  SHA "\",\"dropped\":\"x\"}", .want = BF_ERR_INVALID, .type = AGENTLINE_ARTIFACT_END,
	  .field = "artifact_end" },
	{ .line = "{\"type\":\"artifact_end\",\"name\":\"folded\",\"bytes\":6,\"sha256\":\"XYZ\"}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_ARTIFACT_END, .field = "artifact_end.sha256" },
	{ .line = "{\"type\":\"artifact_end\",\"name\":\"folded\",\"bytes\":6,\"sha256\":\""
	  SHA "\",\"event\":\"instructions\"}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_ARTIFACT_END, .field = "artifact_end.event" },
	{ .line = "{\"type\":\"artifact_end\",\"name\":\"folded\",\"bytes\":6,\"sha256\":\""
	  SHA "\",\"event\":7}", .want = BF_ERR_INVALID, .type = AGENTLINE_ARTIFACT_END,
	  .field = "artifact_end.event" },
	{ .line = "{\"type\":\"counters\",\"iteration\":0}", .want = BF_ERR_INVALID,
	  .type = AGENTLINE_COUNTERS, .field = "counters.metrics" },
	{ .line = "{\"type\":\"counters\",\"iteration\":0,\"metrics\":{\"pmu.cycles\":null}}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_COUNTERS, .field = "counters.metrics.pmu.cycles" },
	{ .line = "{\"type\":\"counters\",\"iteration\":0,\"metrics\":{\"a\":\"1\"}}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_COUNTERS, .field = "counters.metrics.a" },
	{ .line = "{\"type\":\"counters\",\"iteration\":0,\"metrics\":{},"
	  "\"unsupported\":{\"a\":0}}", .want = BF_ERR_INVALID, .type = AGENTLINE_COUNTERS,
	  .field = "counters.unsupported.a" },
	{ .line = "{\"type\":\"counters\",\"iteration\":0,\"metrics\":{},\"notes\":[1]}",
	  .want = BF_ERR_INVALID, .type = AGENTLINE_COUNTERS, .field = "counters.notes[0]" },
	{ .line = "{\"type\":\"counters\",\"iteration\":-1,\"metrics\":{}}",
	  .want = BF_ERR_RANGE, .type = AGENTLINE_COUNTERS, .field = "counters.iteration" },
};

static void
test_table(void)
{
	struct agentline_event ev;
	struct bf_diag d;
	size_t i;
	int r;

	for (i = 0; i < NELEM(al_cases); i++) {
		const struct al_case *c = &al_cases[i];

		r = agentline_decode(c->line, strlen(c->line), &ev, &d);
		if (r != c->want)
			fprintf(stderr, "case %zu: %s: got %d (%s)\n", i, c->line, r, d.msg);
		T_EQ_INT(r, c->want);
		if (c->want == 0) {
			T_EQ_INT(ev.type, c->type);
			T_EQ_INT(ev.claimed, c->type);
			T_CHECK(ev.doc != NULL);
		} else {
			T_EQ_INT(ev.type, AGENTLINE_NONE);
			T_EQ_INT(ev.claimed, c->type);
			T_CHECK(ev.doc == NULL);
			T_CHECK(d.msg[0] != '\0');
			if (c->field != NULL)
				T_EQ_STR(d.field, c->field);
		}
		agentline_event_clear(&ev);
		T_EQ_INT(ev.type, AGENTLINE_NONE);
	}
}

/* The fields come out typed, as the runner reads them. */
static void
test_fields(void)
{
	const struct al_case *c;
	struct agentline_event ev;
	struct bf_diag d;

	c = &al_cases[0];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_EQ_STR(ev.u.hello.agent, "0.1.0");
	T_EQ_STR(ev.u.hello.hostname, "bfh1");
	T_EQ_STR(ev.u.hello.kernel, "6.1.0-28-amd64");
	T_EQ_STR(ev.u.hello.arch, "x86_64");
	T_EQ_STR(ev.u.hello.boot_id, "b-1");
	T_EQ_STR(ev.u.hello.cmdline, "ro quiet");
	T_EQ_INT(ev.u.hello.pid, 1234);
	agentline_event_clear(&ev);

	c = &al_cases[1];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_CHECK(ev.u.hello.boot_id == NULL && ev.u.hello.cmdline == NULL);
	T_CHECK(ev.u.hello.hostname == NULL);
	T_EQ_INT(ev.u.hello.pid, -1);
	agentline_event_clear(&ev);

	c = &al_cases[3];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_CHECK(ev.u.log.is_stderr);
	T_EQ_STR(ev.u.log.line, "");
	agentline_event_clear(&ev);

	c = &al_cases[4];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_CHECK(ev.u.log.line == NULL && !ev.u.log.is_stderr);
	T_EQ_INT(ev.u.log.dropped, 17);
	T_EQ_INT(ev.u.log.iteration, 3);
	agentline_event_clear(&ev);

	c = &al_cases[5];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_EQ_STR(ev.u.knobs.text, "{\"after\":{\"n\":3,\"thp\":\"always\"},\"before\":{\"thp\":"
	    "\"never\"},\"requested\":{\"thp\":\"always\"},\"type\":\"knobs\"}");
	agentline_event_clear(&ev);

	c = &al_cases[6];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_EQ_INT(ev.u.iteration.index, 0);
	T_CHECK(ev.u.iteration.warmup && !ev.u.iteration.timeout);
	T_CHECK(ev.u.iteration.builtin_set[AGENTLINE_WALL_S]);
	T_NEAR(ev.u.iteration.builtin[AGENTLINE_WALL_S], 1.01, 1e-12);
	T_NEAR(ev.u.iteration.builtin[AGENTLINE_USER_S], 1.0, 0);
	T_NEAR(ev.u.iteration.builtin[AGENTLINE_MAXRSS_KB], 2048, 0);
	T_EQ_INT(ev.u.iteration.nmetrics, 1);
	T_EQ_STR(ev.u.iteration.metrics[0].name, "ops");
	T_NEAR(ev.u.iteration.metrics[0].value, 123.5, 0);
	T_CHECK(ev.u.iteration.metrics[0].set);
	T_EQ_INT(ev.u.iteration.nmissing, 0);
	T_CHECK(ev.u.iteration.missing_first == NULL && ev.u.iteration.error == NULL);
	agentline_event_clear(&ev);

	c = &al_cases[7];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_EQ_INT(ev.u.iteration.exit, 127);
	T_CHECK(!ev.u.iteration.builtin_set[AGENTLINE_WALL_S]);
	T_CHECK(!ev.u.iteration.builtin_set[AGENTLINE_SYS_S]);
	T_CHECK(ev.u.iteration.nmetrics == 1 && !ev.u.iteration.metrics[0].set);
	T_EQ_INT(ev.u.iteration.nmissing, 1);
	T_EQ_STR(ev.u.iteration.missing_first, "ops");
	T_EQ_STR(ev.u.iteration.error, "execvp: nope");
	agentline_event_clear(&ev);

	c = &al_cases[9];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_CHECK(ev.u.done.ok);
	T_EQ_INT(ev.u.done.iterations, 3);
	agentline_event_clear(&ev);

	c = &al_cases[10];
	T_EQ_INT(agentline_decode(c->line, strlen(c->line), &ev, &d), 0);
	T_CHECK(!ev.u.done.ok);
	T_EQ_INT(ev.u.done.iterations, -1);
	agentline_event_clear(&ev);

	agentline_event_clear(NULL);
	T_EQ_STR(agentline_type_name(AGENTLINE_ITERATION), "iteration");
	T_EQ_STR(agentline_type_name(AGENTLINE_NONE), "none");
}

/* Lines at and over the caps: the whole line, one string, many metrics,
 * deep nesting. */
static void
test_caps(void)
{
	struct agentline_event ev;
	struct bf_diag d;
	struct buf b;
	size_t i;

	buf_init(&b, 4 * BF_MAX_AGENT_LINE);

	/* a log line at its cap passes, one byte over is refused */
	T_EQ_INT(buf_puts(&b, "{\"type\":\"log\",\"line\":\""), 0);
	for (i = 0; i < AGENTLINE_MAX_LOG; i++)
		T_EQ_INT(buf_append(&b, "a", 1), 0);
	T_EQ_INT(buf_puts(&b, "\"}"), 0);
	T_EQ_INT(agentline_decode(b.data, b.len, &ev, &d), 0);
	T_EQ_INT(strlen(ev.u.log.line), AGENTLINE_MAX_LOG);
	agentline_event_clear(&ev);
	buf_reset(&b);
	T_EQ_INT(buf_puts(&b, "{\"type\":\"log\",\"line\":\""), 0);
	for (i = 0; i < AGENTLINE_MAX_LOG + 1; i++)
		T_EQ_INT(buf_append(&b, "a", 1), 0);
	T_EQ_INT(buf_puts(&b, "\"}"), 0);
	T_EQ_INT(agentline_decode(b.data, b.len, &ev, &d), BF_ERR_TOOBIG);
	T_EQ_STR(d.field, "log.line");
	agentline_event_clear(&ev);

	/* a whole line over BF_MAX_AGENT_LINE, even valid JSON */
	buf_reset(&b);
	T_EQ_INT(buf_puts(&b, "{\"type\":\"done\"}"), 0);
	while (b.len <= BF_MAX_AGENT_LINE)
		T_EQ_INT(buf_append(&b, " ", 1), 0);
	T_EQ_INT(agentline_decode(b.data, b.len, &ev, &d), BF_ERR_TOOBIG);
	T_EQ_INT(ev.type, AGENTLINE_NONE);
	agentline_event_clear(&ev);

	/* a hostname over BF_MAX_HOST */
	buf_reset(&b);
	T_EQ_INT(buf_puts(&b, "{\"type\":\"hello\",\"hostname\":\""), 0);
	for (i = 0; i < BF_MAX_HOST + 1; i++)
		T_EQ_INT(buf_append(&b, "h", 1), 0);
	T_EQ_INT(buf_puts(&b, "\"}"), 0);
	T_EQ_INT(agentline_decode(b.data, b.len, &ev, &d), BF_ERR_TOOBIG);
	T_EQ_INT(ev.claimed, AGENTLINE_HELLO);
	T_EQ_STR(d.field, "hello.hostname");
	agentline_event_clear(&ev);

	/* BF_MAX_METRICS metrics pass, one more is refused */
	for (i = BF_MAX_METRICS; i <= BF_MAX_METRICS + 1; i++) {
		size_t k;

		buf_reset(&b);
		T_EQ_INT(buf_puts(&b, "{\"type\":\"iteration\",\"iteration\":0,\"metrics\":{"), 0);
		for (k = 0; k < i; k++)
			T_EQ_INT(buf_printf(&b, "%s\"m%zu\":%zu", k ? "," : "", k, k), 0);
		T_EQ_INT(buf_puts(&b, "}}"), 0);
		T_EQ_INT(agentline_decode(b.data, b.len, &ev, &d),
		    i == BF_MAX_METRICS ? 0 : BF_ERR_TOOBIG);
		if (i == BF_MAX_METRICS) {
			T_EQ_INT(ev.u.iteration.nmetrics, BF_MAX_METRICS);
			T_EQ_STR(ev.u.iteration.metrics[BF_MAX_METRICS - 1].name, "m31");
		}
		agentline_event_clear(&ev);
	}

	/* nesting past BF_MAX_JSON_DEPTH, inside an allowed field */
	buf_reset(&b);
	T_EQ_INT(buf_puts(&b, "{\"type\":\"knobs\",\"after\":"), 0);
	for (i = 0; i < 2 * BF_MAX_JSON_DEPTH; i++)
		T_EQ_INT(buf_puts(&b, "{\"a\":"), 0);
	T_EQ_INT(buf_puts(&b, "1"), 0);
	for (i = 0; i < 2 * BF_MAX_JSON_DEPTH + 1; i++)
		T_EQ_INT(buf_puts(&b, "}"), 0);
	T_CHECK(agentline_decode(b.data, b.len, &ev, &d) != 0);
	T_EQ_INT(ev.type, AGENTLINE_NONE);
	agentline_event_clear(&ev);

	/* every prefix of a good line is refused, and frees what it parsed */
	for (i = 0; i < strlen(al_cases[6].line); i++) {
		T_CHECK(agentline_decode(al_cases[6].line, i, &ev, &d) != 0);
		T_CHECK(ev.doc == NULL);
		agentline_event_clear(&ev);
	}
	buf_free(&b);
}

/* The snapshot as the store keeps it: canonical text, whatever the agent's
 * spacing and key order; the counters borrowed, checked. */
static void
test_evidence(void)
{
	static const char snap[] = "{ \"type\":\"snapshot\", \"sha256\":\"" SHA "\","
	    " \"snapshot\": {\"vm.b\": \"2\", \"vm.a\": null, \"os.x\": \"d\\u00e9j\\u00e0\"}}";
	static const char ctr[] = "{\"type\":\"counters\",\"iteration\":4,\"metrics\":"
	    "{\"vmstat.thp_fault_alloc\":16380,\"pmu.page-faults\":3000}}";
	struct agentline_event ev;
	struct bf_diag d;

	T_EQ_INT(agentline_decode(snap, strlen(snap), &ev, &d), 0);
	T_EQ_INT(ev.type, AGENTLINE_SNAPSHOT);
	T_EQ_STR(ev.u.snapshot.agent_sha256, SHA);
	T_EQ_STR(ev.u.snapshot.text, "{\"os.x\":\"d\xc3\xa9j\xc3\xa0\",\"vm.a\":null,\"vm.b\":\"2\"}");
	T_EQ_INT(ev.u.snapshot.nkeys, 3);
	agentline_event_clear(&ev);
	T_EQ_INT(agentline_decode(ctr, strlen(ctr), &ev, &d), 0);
	T_EQ_INT(ev.type, AGENTLINE_COUNTERS);
	T_EQ_INT(ev.u.counters.iteration, 4);
	T_EQ_INT(json_object_size(ev.u.counters.metrics), 2);
	T_NEAR(json_number_value(json_object_get(ev.u.counters.metrics,
	    "vmstat.thp_fault_alloc")), 16380, 0);
	T_CHECK(ev.u.counters.unsupported == NULL && ev.u.counters.notes == NULL);
	agentline_event_clear(&ev);
}

/* The perf event an artifact was sampled on is data: decoded, or absent. */
static void
test_artifact_event(void)
{
	static const char with[] = "{\"type\":\"artifact_end\",\"name\":\"perf.data\","
	    "\"bytes\":6,\"sha256\":\"" SHA "\",\"event\":\"cpu-clock\"}";
	static const char without[] = "{\"type\":\"artifact_end\",\"name\":\"folded\","
	    "\"bytes\":0,\"dropped\":\"perf script failed\"}";
	struct agentline_event ev;
	struct bf_diag d;

	T_EQ_INT(agentline_decode(with, strlen(with), &ev, &d), 0);
	T_EQ_INT(ev.type, AGENTLINE_ARTIFACT_END);
	T_EQ_STR(ev.u.artifact_end.event, "cpu-clock");
	T_EQ_STR(ev.u.artifact_end.sha256, SHA);
	T_EQ_INT(ev.u.artifact_end.bytes, 6);
	agentline_event_clear(&ev);
	T_EQ_INT(agentline_decode(without, strlen(without), &ev, &d), 0);
	T_CHECK(ev.u.artifact_end.event == NULL);
	T_EQ_STR(ev.u.artifact_end.dropped, "perf script failed");
	agentline_event_clear(&ev);
}

int
main(void)
{
	test_table();
	test_evidence();
	test_artifact_event();
	test_fields();
	test_caps();
	return t_done();
}
