/*
 * test_recipe_files.c: a recipe's "package", "files" and "workdir", and
 * metrics read from a workdir file (recipe-files.c): loaded, refused with
 * the field named when malformed, rendered into the agent's step, and a
 * parameter value that would add a line to a file refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"
#include "t.h"

static const char prog_text[] =
    "{\"name\": \"hpccish\", \"params\": {\"n\": {\"type\": \"int\", \"min\": 1, \"max\": 99999,"
    " \"default\": 500}, \"tag\": {\"type\": \"string\", \"max_len\": 64, \"default\": \"a b\"},"
    " \"port\": {\"type\": \"int\", \"min\": 1024, \"max\": 65535, \"default\": 7003}},"
    " \"package\": [{\"debian\": \"hpcc\", \"binary\": \"hpcc\"},"
    " {\"debian\": \"dbench\", \"binary\": \"tbench_srv\"}],"
    " \"files\": {\"hpccinf.txt\": [\"HPL input\", \"{n}  Ns\", \"tag {tag} {{x}}\"],"
    " \"empty.txt\": []},"
    " \"services\": [{\"argv\": [\"tbench_srv\"], \"ready\": {\"tcp\": \"127.0.0.1:{port}\"}}],"
    " \"command\": [\"hpcc\"],"
    " \"metrics\": [{\"name\": \"gups\", \"unit\": \"GUP/s\", \"better\": \"higher\","
    " \"source\": \"file\", \"file\": \"hpccoutf.txt\", \"regex\": \"GUPs=([0-9.]+)\"},"
    " {\"name\": \"ops\", \"unit\": \"ops/s\", \"better\": \"higher\", \"source\": \"stdout\","
    " \"regex\": \"ops ([0-9]+)\"}]}";

static void
test_good(void)
{
	struct recipe *r = NULL;
	struct bf_diag d;
	json_t *vals, *step, *pub;
	const struct recipe_file *f;
	struct buf b;
	char *dump;

	T_EQ_INT(recipe_parse(prog_text, strlen(prog_text), &r, &d), 0);
	if (r == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		return;
	}
	T_EQ_INT(r->npackages, 2);
	T_EQ_STR(r->packages[1].binary, "tbench_srv");
	T_EQ_INT(r->nfiles, 2);
	T_CHECK(r->workdir);
	T_EQ_STR(r->metrics[0].file, "hpccoutf.txt");
	T_CHECK(recipe_metric_from_output(&r->metrics[0]));
	T_CHECK((f = recipe_file(r, "hpccinf.txt")) != NULL);
	T_CHECK(recipe_file(r, "nope.txt") == NULL);

	vals = json_pack("{s:i,s:s,s:i}", "n", 2000, "tag", "$(id);`x`", "port", 7003);
	step = json_object();
	T_EQ_INT(recipe_step_json(r, vals, NULL, step, &d), 0);
	dump = json_dumps(json_object_get(step, "files"), JSON_COMPACT);
	/* values land in the text as text: no shell ever reads it */
	T_EQ_STR(dump, "[{\"name\":\"hpccinf.txt\",\"text\":\"HPL input\\n2000  Ns\\ntag $(id);`x` "
	    "{x}\\n\"},{\"name\":\"empty.txt\",\"text\":\"\"}]");
	free(dump);
	dump = json_dumps(json_object_get(step, "packages"), JSON_COMPACT | JSON_SORT_KEYS);
	T_EQ_STR(dump, "[{\"binary\":\"hpcc\",\"debian\":\"hpcc\"},"
	    "{\"binary\":\"tbench_srv\",\"debian\":\"dbench\"}]");
	free(dump);
	dump = json_dumps(json_array_get(json_object_get(step, "metrics"), 0),
	    JSON_COMPACT | JSON_SORT_KEYS);
	T_EQ_STR(dump, "{\"file\":\"hpccoutf.txt\",\"name\":\"gups\",\"regex\":\"GUPs=([0-9.]+)\","
	    "\"source\":\"file\"}");
	free(dump);
	json_decref(step);

	/* a value with a newline would add a line the recipe did not write */
	json_object_set_new(vals, "tag", json_string("ok\nN 99999999"));
	step = json_object();
	T_EQ_INT(recipe_step_json(r, vals, NULL, step, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "files.hpccinf.txt[2]");
	T_CONTAINS(d.msg, "control byte 0x0a");
	T_CHECK(json_object_get(step, "files") == NULL);
	json_decref(step);
	buf_init(&b, 64);
	json_object_set_new(vals, "tag", json_string("tab\tok"));
	T_EQ_INT(recipe_render_file(r, f, vals, &b, &d), 0);
	T_CHECK(b.len > 0 && strstr(b.data, "tag tab\tok {x}\n") != NULL);
	/* a file longer than its cap is an error, never a cut file */
	buf_reset(&b);
	json_object_set_new(vals, "tag", json_string("0123456789012345678901234567890123456789012"));
	T_CHECK(recipe_render_file(r, f, vals, &b, &d) != 0);
	buf_free(&b);
	json_decref(vals);

	pub = recipe_to_json(r);
	dump = json_dumps(json_object_get(pub, "package"), JSON_COMPACT | JSON_SORT_KEYS);
	T_EQ_STR(dump, "[{\"binary\":\"hpcc\",\"debian\":\"hpcc\"},"
	    "{\"binary\":\"tbench_srv\",\"debian\":\"dbench\"}]");
	free(dump);
	T_CHECK(json_is_true(json_object_get(pub, "workdir")));
	T_EQ_INT(json_array_size(json_object_get(json_object_get(pub, "files"), "hpccinf.txt")), 3);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(pub, "metrics"),
	    0), "file")), "hpccoutf.txt");
	json_decref(pub);
	recipe_free(r);
}

/* "package" as one object, and "workdir": true without files. */
static void
test_single(void)
{
	static const char text[] =
	    "{\"name\": \"db\", \"package\": {\"debian\": \"dbench\", \"binary\": \"dbench\"},"
	    " \"workdir\": true, \"command\": [\"dbench\", \"-D\", \".\", \"2\"],"
	    " \"metrics\": [{\"name\": \"y\", \"unit\": \"s\", \"better\": \"lower\","
	    " \"source\": \"file\", \"file\": \"out.yaml\", \"json\": \"a.b\"}]}";
	struct recipe *r = NULL;
	struct bf_diag d;
	json_t *vals, *step;
	char *dump;

	T_EQ_INT(recipe_parse(text, strlen(text), &r, &d), 0);
	if (r == NULL) {
		fprintf(stderr, "%s\n", d.msg);
		return;
	}
	T_EQ_INT(r->npackages, 1);
	T_EQ_INT(r->nfiles, 0);
	T_CHECK(r->workdir);
	vals = json_object();
	step = json_object();
	T_EQ_INT(recipe_step_json(r, vals, NULL, step, &d), 0);
	/* the workdir without files is an empty "files" */
	dump = json_dumps(step, JSON_COMPACT | JSON_SORT_KEYS);
	T_EQ_STR(dump, "{\"files\":[],\"metrics\":[{\"file\":\"out.yaml\",\"json\":\"a.b\","
	    "\"name\":\"y\",\"source\":\"file\"}],\"packages\":[{\"binary\":\"dbench\","
	    "\"debian\":\"dbench\"}]}");
	free(dump);
	json_decref(step);
	json_decref(vals);
	recipe_free(r);
}

static void
test_bad(void)
{
	static const struct {
		const char *from, *to, *field, *msg;
	} bad[] = {
		{ "{\"debian\": \"hpcc\", \"binary\": \"hpcc\"},", "{\"debian\": \"Hpcc\", "
		  "\"binary\": \"hpcc\"},", "package[0].debian", "\"Hpcc\" is not a Debian package name" },
		{ "\"binary\": \"hpcc\"},", "\"binary\": \"/usr/bin/hpcc\"},", "package[0].binary",
		  "is not a command name" },
		{ "\"binary\": \"hpcc\"},", "\"binary\": \"dbench\"},", "package[0].binary",
		  "\"dbench\" is not argv[0] of the command" },
		{ "\"binary\": \"hpcc\"},", "\"binary\": \"hpcc\", \"version\": \"1\"},", "package[0].version",
		  "unknown key" },
		{ "\"package\": [", "\"package\": [\"hpcc\", ", "package[0]", "expected an object" },
		{ "\"package\": [{\"debian\": \"hpcc\", \"binary\": \"hpcc\"},"
		  " {\"debian\": \"dbench\", \"binary\": \"tbench_srv\"}]", "\"package\": []",
		  "package", "0 packages; 1 to 8 allowed" },
		{ "\"hpccinf.txt\":", "\"../hpccinf.txt\":", "files", "\"../hpccinf.txt\" is not a file name" },
		{ "\"hpccinf.txt\":", "\".hidden\":", "files", "\".hidden\" is not a file name" },
		{ "\"hpccinf.txt\": [", "\"hpccinf.txt\": [1, ", "files.hpccinf.txt[0]", "expected a string" },
		{ "\"{n}  Ns\"", "\"{nn}  Ns\"", "files.hpccinf.txt[1]", "slot {nn}" },
		{ "\"empty.txt\": []", "\"empty.txt\": \"x\"", "files.empty.txt", "expected an array" },
		{ "\"file\": \"hpccoutf.txt\"", "\"file\": \"a/b\"", "metrics[0].file",
		  "\"a/b\" is not a file name of the workdir" },
		{ "\"source\": \"file\", \"file\": \"hpccoutf.txt\",", "\"source\": \"file\",",
		  "metrics[0].file", "is required" },
		{ "\"source\": \"stdout\",", "\"source\": \"stdout\", \"file\": \"x\",", "metrics[1].file",
		  "only for source file" },
		{ "\"files\": {\"hpccinf.txt\": [\"HPL input\", \"{n}  Ns\", \"tag {tag} {{x}}\"],"
		  " \"empty.txt\": []},", "", "metrics[0].file", "source file needs a workdir" },
		{ "\"files\": {", "\"workdir\": false, \"files\": {", "workdir", "only true" },
		{ "\"files\": {", "\"workdir\": 1, \"files\": {", "workdir", "" },
	};
	struct recipe *r;
	struct bf_diag d;
	char *txt;
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *at = strstr(prog_text, bad[i].from);

		T_CHECK(at != NULL);
		if (at == NULL) {
			fprintf(stderr, "case %zu: no %s\n", i, bad[i].from);
			continue;
		}
		n = strlen(prog_text) + strlen(bad[i].to) + 1;
		txt = malloc(n);
		snprintf(txt, n, "%.*s%s%s", (int)(at - prog_text), prog_text, bad[i].to,
		    at + strlen(bad[i].from));
		r = NULL;
		T_CHECK(recipe_parse(txt, strlen(txt), &r, &d) != 0);
		T_CHECK(r == NULL);
		T_EQ_STR(d.field, bad[i].field);
		T_CONTAINS(d.msg, bad[i].msg);
		recipe_free(r);
		free(txt);
	}
}

int
main(void)
{
	test_good();
	test_single();
	test_bad();
	return t_done();
}
