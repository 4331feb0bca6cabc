/*
 * test_fold.c: perf script text folded into stacks (real-looking, odd and
 * hostile lines), the flame graph drawn from them (escaping, widths, a
 * document python's XML parser would take), and the diff of two profiles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "err.h"
#include "flame.h"
#include "fold.h"
#include "profdiff.h"
#include "t.h"

/* What perf 6.1 prints with -F comm,tid,ip,sym,dso for two samples. */
static const char script_real[] =
    "benchfleet-agen  7301 \n"
    "\t          4011a0 work_cpu_mix (/usr/local/bin/benchfleet-agent)\n"
    "\t          401900 work_cpu (/usr/local/bin/benchfleet-agent)\n"
    "\t          401000 main (/usr/local/bin/benchfleet-agent)\n"
    "\n"
    "benchfleet-agen  7301 \n"
    "\t          4011a0 work_cpu_mix (/usr/local/bin/benchfleet-agent)\n"
    "\t          401900 work_cpu (/usr/local/bin/benchfleet-agent)\n"
    "\t          401000 main (/usr/local/bin/benchfleet-agent)\n"
    "\n"
    "benchfleet-agen  7301 \n"
    "\tffffffff8133cac0 native_set_pte+0x0 ([kernel.kallsyms])\n"
    "\t          401900 work_cpu (/usr/local/bin/benchfleet-agent)\n"
    "\t               0 [unknown] ([unknown])\n"
    "\n";

static const char last_over[] = "a 1\n\t 1 x (/x)\n\nbb 2\n\t 2 yyyyyyyyyyyyyyyyyyyyyyyy (/y)\n";

static char *
fold_text(const char *in, size_t len, size_t chunk, size_t max, int *rp, struct fold *keep)
{
	struct fold f;
	struct buf out;
	size_t i, n;
	int r = 0;

	fold_init(&f, max);
	buf_init(&out, 0);
	for (i = 0; i < len && r == 0; i += n) {
		n = len - i < chunk ? len - i : chunk;
		r = fold_feed(&f, in + i, n);
	}
	if (r == 0)
		r = fold_finish(&f, &out);
	*rp = r;
	if (keep != NULL) {
		keep->samples = f.samples;
		keep->odd = f.odd;
		keep->truncated = f.truncated;
	}
	fold_free(&f);
	return buf_steal(&out);
}

static void
test_fold_real(void)
{
	struct fold st;
	size_t chunk;
	char *s;
	int r;

	/* the same text whatever the chunking of the pipe */
	for (chunk = 1; chunk <= sizeof(script_real); chunk = chunk * 3 + 1) {
		s = fold_text(script_real, strlen(script_real), chunk, 4096, &r, &st);
		T_EQ_INT(r, 0);
		T_EQ_STR(s, "benchfleet-agen;[unknown];work_cpu;native_set_pte 1\n"
		    "benchfleet-agen;main;work_cpu;work_cpu_mix 2\n");
		T_EQ_INT(st.samples, 3);
		free(s);
	}
	/* no trailing blank line, CRLF, a comm with spaces, a missing symbol
	 * named by its object, a "+0x" offset stripped */
	s = fold_text("Web Content 12\r\n\t 10 [unknown] (/usr/lib/libxul.so)\r\n"
	    "\t 20 f+0x1f (/x)", strlen("Web Content 12\r\n\t 10 [unknown] (/usr/lib/libxul.so)\r\n"
	    "\t 20 f+0x1f (/x)"), 7, 4096, &r, NULL);
	T_EQ_INT(r, 0);
	T_EQ_STR(s, "Web Content;f;[libxul.so] 1\n");
	free(s);
}

static void
test_fold_hostile(void)
{
	struct fold st;
	struct buf in;
	char *s;
	int r, i;

	/* ';' in a symbol cannot add a frame, a newline cannot start a stack,
	 * control bytes and bad UTF-8 become '?', good UTF-8 stays */
	s = fold_text("a;b 1\n\t 1 evil;fake\x01\x7f (/x)\n\t 2 \xc3\xa9t\xe9 (/y)\n"
	    "\t 3 x\xed\xa0\x80 (/z)\n\n", strlen("a;b 1\n\t 1 evil;fake\x01\x7f (/x)\n\t 2 "
	    "\xc3\xa9t\xe9 (/y)\n\t 3 x\xed\xa0\x80 (/z)\n\n"), 5, 4096, &r, &st);
	T_EQ_INT(r, 0);
	T_EQ_STR(s, "a:b;x???;\xc3\xa9t?;evil:fake?? 1\n");
	free(s);
	/* frames before any header, a frame without an address, a header
	 * alone, a line of only spaces: counted or harmless */
#define ODD "\t 1 orphan (/x)\ncomm\n\tnoaddr sym\n\t zz sym (/x)\n   \nc2 5\n"
	s = fold_text(ODD, strlen(ODD), 64, 4096, &r, &st);
#undef ODD
	T_EQ_INT(r, 0);
	T_EQ_STR(s, "c2 1\ncomm 1\n");
	T_EQ_INT(st.odd, 3);
	free(s);
	/* a line past BF_MAX_FOLD_LINE is skipped, not cut into a stack */
	buf_init(&in, 0);
	T_OK(buf_puts(&in, "c 1\n\t 1 "));
	for (i = 0; i < BF_MAX_FOLD_LINE; i++)
		T_OK(buf_puts(&in, "A"));
	T_OK(buf_puts(&in, " (/x)\n\t 2 ok (/x)\n\n"));
	s = fold_text(in.data, in.len, 4000, 1 << 20, &r, &st);
	T_EQ_INT(r, 0);
	T_EQ_STR(s, "c;ok 1\n");
	T_EQ_INT(st.odd, 1);
	free(s);
	/* a deep stack keeps its innermost frames under [truncated] */
	buf_reset(&in);
	T_OK(buf_puts(&in, "deep 1\n"));
	for (i = 0; i < BF_MAX_FOLD_FRAMES + 10; i++)
		T_OK(buf_printf(&in, "\t %x f%d (/x)\n", i + 1, i));
	T_OK(buf_puts(&in, "\n"));
	s = fold_text(in.data, in.len, 999, 1 << 22, &r, &st);
	T_EQ_INT(r, 0);
	T_CHECK(s != NULL && strncmp(s, "deep;[truncated];f511;f510;", 27) == 0);
	T_CHECK(s != NULL && strstr(s, ";f1;f0 1\n") != NULL && strstr(s, ";f512;") == NULL);
	T_EQ_INT(st.truncated, 1);
	free(s);
	/* a symbol is cut at BF_MAX_FOLD_SYMBOL bytes */
	buf_reset(&in);
	T_OK(buf_puts(&in, "c 1\n\t 1 "));
	for (i = 0; i < BF_MAX_FOLD_SYMBOL + 50; i++)
		T_OK(buf_puts(&in, "B"));
	T_OK(buf_puts(&in, " (/x)\n\n"));
	s = fold_text(in.data, in.len, 100, 1 << 20, &r, NULL);
	T_EQ_INT(r, 0);
	T_EQ_INT(s != NULL ? strlen(s) : 0, 2 + BF_MAX_FOLD_SYMBOL + 3);
	free(s);
	/* over the cap: BF_ERR_TOOBIG, nothing half-written */
	s = fold_text(script_real, strlen(script_real), 50, 60, &r, NULL);
	T_EQ_INT(r, BF_ERR_TOOBIG);
	T_EQ_STR(s, "");
	free(s);
	/* the same when only the last event, with no blank line after it (perf
	 * killed mid-write), passes the cap: not a profile short of a stack
	 * (found by fuzz_fold) */
	s = fold_text(last_over, strlen(last_over), 7, 24, &r, &st);
	T_EQ_INT(r, BF_ERR_TOOBIG);
	T_EQ_STR(s, "");
	free(s);
	buf_free(&in);
}

static void
test_fold_parse(void)
{
	static const struct {
		const char *line;
		int r;
		size_t stack;
		unsigned long long count;
	} cases[] = {
		{ "a;b 12", 0, 3, 12 },
		{ "a b;c d 7", 0, 7, 7 },
		{ "a;b", BF_ERR_PARSE, 0, 0 },
		{ "a;b 0", BF_ERR_PARSE, 0, 0 },
		{ "a;b 012", BF_ERR_PARSE, 0, 0 },
		{ " 5", BF_ERR_PARSE, 0, 0 },
		{ "5", BF_ERR_PARSE, 0, 0 },
		{ "a 99999999999999999", BF_ERR_PARSE, 0, 0 },
		{ "a 9007199254740993", BF_ERR_PARSE, 0, 0 },
		{ "a 9007199254740992", 0, 1, 9007199254740992ULL },
		{ "a;b 1x", BF_ERR_PARSE, 0, 0 },
	};
	size_t i, sl;
	uint64_t c;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sl = 0;
		c = 0;
		T_EQ_INT(fold_parse_line(cases[i].line, strlen(cases[i].line), &sl, &c),
		    cases[i].r);
		if (cases[i].r == 0) {
			T_EQ_INT(sl, cases[i].stack);
			T_EQ_INT(c, cases[i].count);
		}
	}
	T_CHECK(fold_stack_cmp_str("a;b", 3, "a;b;c", 5) < 0);
	T_CHECK(fold_stack_cmp_str("a;b;c", 5, "a;b!", 4) < 0);
	T_CHECK(fold_stack_cmp_str("a;b", 3, "a;b", 3) == 0);
}

/* The width of the <rect> whose <title> starts with name. */
static double
svg_width(const char *svg, const char *name)
{
	char key[256];
	const char *p;

	snprintf(key, sizeof(key), "<title>%s (", name);
	if ((p = strstr(svg, key)) == NULL || (p = strstr(p, "width=\"")) == NULL)
		return -1;
	return strtod(p + 7, NULL);
}

static void
test_flame(void)
{
	static const char folded[] = "app;main;hot 60\napp;main;cold 20\napp;main 20\n"
	    "app;<script>alert(1)</script>&\"' 1\nnot a line\n";
	struct bf_diag d;
	struct buf out;
	double all, hot, cold, mainw;

	buf_init(&out, 0);
	T_EQ_INT(flame_svg(folded, strlen(folded), "run 7 <b>", &out, &d), 0);
	T_CHECK(out.data != NULL && strncmp(out.data, "<?xml", 5) == 0);
	T_CONTAINS(out.data, "</svg>\n");
	/* no markup from a symbol or the title, no script anywhere */
	T_CHECK(out.data != NULL && strstr(out.data, "<script") == NULL &&
	    strstr(out.data, "<b>") == NULL);
	T_CONTAINS(out.data, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;");
	T_CONTAINS(out.data, "run 7 &lt;b&gt;");
	T_CONTAINS(out.data, "101 samples; 1 lines skipped");
	/* widths proportional to samples: 1180 px for 101 samples */
	all = svg_width(out.data, "all");
	hot = svg_width(out.data, "hot");
	cold = svg_width(out.data, "cold");
	mainw = svg_width(out.data, "main");
	T_NEAR(all, 1180.0, 0.01);
	T_NEAR(hot, 1180.0 * 60 / 101, 0.01);
	T_NEAR(cold, 1180.0 * 20 / 101, 0.01);
	T_NEAR(mainw, 1180.0 * 100 / 101, 0.01);
	T_CONTAINS(out.data, "<title>hot (60 samples, 59.41%)</title>");
	/* unsorted input and repeated stacks draw one frame per name */
	buf_reset(&out);
	T_EQ_INT(flame_svg("x;b 1\nx;a 1\nx;b 2\nx 1\n", strlen("x;b 1\nx;a 1\nx;b 2\nx 1\n"), NULL, &out, &d), 0);
	T_CONTAINS(out.data, "<title>b (3 samples, 60.00%)</title>");
	T_CHECK(strstr(strstr(out.data, "<title>b (") + 1, "<title>b (") == NULL);
	/* nothing to draw */
	buf_reset(&out);
	T_EQ_INT(flame_svg("junk\n", 5, NULL, &out, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "folded");
	buf_free(&out);
}

static const struct profdiff_row *
diff_row(const struct profdiff *p, const char *sym)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->rows[i].symbol, sym) == 0)
			return &p->rows[i];
	return NULL;
}

static void
test_profdiff(void)
{
	/* A: walk is 10% self; B: 40%. rec recurses: counted once per stack */
	static const char a[] = "w;main;work 90\nw;main;work;walk 10\nw;rec;rec 5\n";
	static const char b[] = "w;main;work 60\nw;main;work;walk 40\n";
	struct profdiff *p = NULL;
	const struct profdiff_row *w;
	struct bf_diag d;
	struct buf out;

	T_EQ_INT(profdiff_compute(a, strlen(a), b, strlen(b), &p, &d), 0);
	if (p == NULL)
		return;
	T_EQ_INT(p->samples_a, 105);
	T_EQ_INT(p->samples_b, 100);
	w = diff_row(p, "walk");
	T_CHECK(w != NULL);
	if (w != NULL) {
		T_NEAR(w->self_a, 100.0 * 10 / 105, 1e-9);
		T_NEAR(w->self_b, 40.0, 1e-9);
		T_NEAR(w->incl_b, 40.0, 1e-9);
	}
	w = diff_row(p, "rec");
	T_CHECK(w != NULL && w->incl_a > 4.76 && w->incl_a < 4.77 && w->self_b == 0);
	w = diff_row(p, "main");
	T_CHECK(w != NULL && w->self_a == 0 && w->incl_b == 100.0);
	T_CHECK(diff_row(p, "w") == NULL);	/* the comm is not a symbol */
	/* ordered by the larger change: walk first (+30.48 self) */
	T_EQ_STR(p->rows[0].symbol, "walk");
	buf_init(&out, 0);
	T_EQ_INT(profdiff_render_text(p, 1, "run 1", "run 2", &out), 0);
	T_CONTAINS(out.data, "   9.52   40.00   +30.48     9.52   40.00   +30.48  walk\n");
	T_CONTAINS(out.data, "(3 more symbols; --top N shows more)");
	buf_free(&out);
	{
		json_t *j = profdiff_json(p, 0, 0), *row;

		T_CHECK(j != NULL);
		T_EQ_INT(json_integer_value(json_object_get(j, "samples_b")), 100);
		T_EQ_INT(json_array_size(json_object_get(j, "rows")), p->n);
		row = json_array_get(json_object_get(j, "rows"), 0);
		T_EQ_STR(json_string_value(json_object_get(row, "symbol")), "walk");
		T_NEAR(json_real_value(json_object_get(row, "self_change_pp")),
		    40.0 - 100.0 * 10 / 105, 1e-9);
		json_decref(j);
	}
	profdiff_free(p);
	p = NULL;
	T_EQ_INT(profdiff_compute(a, strlen(a), "bad\n", 4, &p, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "b");
	T_CHECK(p == NULL);
	profdiff_free(NULL);
}

/*
 * One profile: rows by self share, then inclusive, then name; the top
 * table and its JSON carry exactly those shares; no sample is an error.
 */
static void
test_profdiff_one(void)
{
	static const char a[] = "w;main;work 90\nw;main;work;walk 10\nw;rec;rec 5\n"
	    "garbage line\nw;zed;zed 5\n";
	struct profdiff *p = NULL;
	struct bf_diag d;
	struct buf out;
	json_t *j, *row;

	T_EQ_INT(profdiff_one(a, strlen(a), &p, &d), 0);
	if (p == NULL)
		return;
	T_EQ_INT(p->samples_a, 110);
	T_EQ_INT(p->samples_b, 0);
	T_EQ_INT(p->bad_a, 1);
	/* work 81.82 self; walk 9.09; rec and zed tie at 4.55 (by name); main
	 * last: no self sample, 90.91 inclusive */
	T_EQ_INT(p->n, 5);
	if (p->n == 5) {
		T_EQ_STR(p->rows[0].symbol, "work");
		T_EQ_STR(p->rows[1].symbol, "walk");
		T_EQ_STR(p->rows[2].symbol, "rec");
		T_EQ_STR(p->rows[3].symbol, "zed");
		T_EQ_STR(p->rows[4].symbol, "main");
		T_NEAR(p->rows[4].incl_a, 100.0 * 100 / 110, 1e-9);
		T_CHECK(p->rows[0].self_b == 0 && p->rows[0].incl_b == 0);
	}
	buf_init(&out, 0);
	T_EQ_INT(profdiff_render_top(p, 2, "run 7 (cpu-clock)", &out), 0);
	T_CONTAINS(out.data, "run 7 (cpu-clock): 110 samples, 5 symbols\n");
	T_CONTAINS(out.data, "  81.82   90.91  work\n   9.09    9.09  walk\n(3 more symbols");
	T_CHECK(strstr(out.data, "  rec\n") == NULL);
	T_CONTAINS(out.data, "skipped 1 lines that are not \"STACK COUNT\"");
	buf_free(&out);
	j = profdiff_json(p, 1, 1);
	T_CHECK(j != NULL);
	T_EQ_INT(json_integer_value(json_object_get(j, "samples")), 110);
	T_EQ_INT(json_integer_value(json_object_get(j, "symbols")), 5);
	T_EQ_INT(json_array_size(json_object_get(j, "rows")), 1);
	row = json_array_get(json_object_get(j, "rows"), 0);
	T_EQ_STR(json_string_value(json_object_get(row, "symbol")), "work");
	T_NEAR(json_real_value(json_object_get(row, "self_pct")), 100.0 * 90 / 110, 1e-9);
	json_decref(j);
	profdiff_free(p);
	p = NULL;
	T_EQ_INT(profdiff_one("w;a 0\n", 6, &p, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "a");
	T_CHECK(p == NULL);
}

int
main(void)
{
	test_fold_real();
	test_fold_hostile();
	test_fold_parse();
	test_flame();
	test_profdiff();
	test_profdiff_one();
	return t_done();
}
