/*
 * coord_test_repro_env.c: why a reproduction differs (repro-env.c). The
 * snapshots of each cell, bundle's lab vs here, grouped when equal; a cell
 * without a snapshot on a side is not compared; drift within a side; the
 * counters that changed, ranked THP first, without gauges or a stray
 * fault; a workload metric that differs names both; a version-1 bundle
 * says what cannot be compared; a hostile snapshot is refused naming its
 * key and a hostile value cannot forge a line of the text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "err.h"
#include "repro.h"
#include "t.h"

#define SA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SC "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define SD "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"

static json_t *
j(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);

	if (v == NULL)
		fprintf(stderr, "test JSON: %s at %d\n", e.text, e.position);
	return v;
}

/* Verdict rows as repro_report_json makes them. */
#define ROW(metric, verdict, ma, lo_a, hi_a, mb, lo_b, hi_b) \
	"{\"metric\":\"" metric "\",\"verdict\":\"" verdict "\"," \
	"\"original\":{\"n\":3,\"mean\":" #ma ",\"ci_lo\":" #lo_a ",\"ci_hi\":" #hi_a "}," \
	"\"reproduced\":{\"n\":3,\"mean\":" #mb ",\"ci_lo\":" #lo_b ",\"ci_hi\":" #hi_b "}}"

static const char bundle_text[] = "{\"snapshots\":{"
    "\"" SA "\":{\"kernel.boot_id\":\"b1\",\"transparent_hugepage/defrag\":\"madvise\","
    "\"vm.zone_reclaim_mode\":\"0\"},"
    "\"" SB "\":{\"kernel.boot_id\":\"b2\",\"transparent_hugepage/defrag\":\"madvise\","
    "\"vm.zone_reclaim_mode\":\"0\"}},"
    "\"runs\":["
    "{\"id\":1,\"cell_index\":0,\"label\":\"thp=never\",\"snapshot_sha256\":\"" SA "\"},"
    "{\"id\":2,\"cell_index\":1,\"label\":\"thp=always\",\"snapshot_sha256\":\"" SB "\"},"
    "{\"id\":3,\"cell_index\":2,\"label\":\"x\",\"snapshot_sha256\":null}]}";

static const char here_runs_text[] = "["
    "{\"id\":11,\"cell_index\":0,\"label\":\"thp=never\",\"snapshot_sha256\":\"" SC "\"},"
    "{\"id\":12,\"cell_index\":1,\"label\":\"thp=always\",\"snapshot_sha256\":\"" SD "\"},"
    "{\"id\":13,\"cell_index\":2,\"label\":\"x\",\"snapshot_sha256\":\"" SD "\"}]";

static const char here_snaps_text[] = "{"
    "\"" SC "\":{\"kernel.boot_id\":\"h1\",\"transparent_hugepage/defrag\":\"always\","
    "\"vm.zone_reclaim_mode\":\"0\"},"
    "\"" SD "\":{\"kernel.boot_id\":\"h2\",\"transparent_hugepage/defrag\":\"always\","
    "\"vm.zone_reclaim_mode\":\"1\"}}";

static const char rep_text[] = "{\"cells\":["
    "{\"cell_index\":0,\"label\":\"thp=never\",\"metrics\":["
    ROW("rps", "differs", 100, 99, 101, 80, 79, 81) ","
    ROW("vmstat.thp_fault_alloc", "inconclusive", 0, 0, 0, 5000, 4990, 5010) ","
    ROW("vmstat.pgmajfault", "inconclusive", 0, 0, 0, 0.33, -1.1, 1.8) ","
    ROW("vmstat.nr_kernel_stack", "differs", 0, 0, 0, 32, 31, 33) ","
    ROW("pmu.dTLB-load-misses", "differs", 900, 890, 910, 300, 290, 310) "]},"
    "{\"cell_index\":1,\"label\":\"thp=always\",\"metrics\":["
    ROW("rps", "reproduced", 100, 99, 101, 100, 99, 101) "]},"
    "{\"cell_index\":2,\"label\":\"x\",\"metrics\":[]}]}";

static void
test_groups_and_explanations(void)
{
	json_t *b = j(bundle_text), *hr = j(here_runs_text), *hs = j(here_snaps_text),
	    *rep = j(rep_text), *es, *g, *c0, *m, *cc;
	struct bf_diag d;
	struct buf out;

	if (b == NULL || hr == NULL || hs == NULL || rep == NULL) {
		T_CHECK(0);
		goto out;
	}
	bf_diag_clear(&d);
	T_EQ_INT(repro_env_snapshots(b, hr, hs, rep, &d), 0);
	es = json_object_get(rep, "environment_snapshots");
	T_CHECK(json_is_null(json_object_get(es, "note")));
	/* cells 0 and 1 differ differently (zone_reclaim_mode only in 1);
	 * cell 2 has no snapshot in the bundle: not compared */
	T_EQ_INT(json_array_size(json_object_get(es, "groups")), 2);
	g = json_array_get(json_object_get(es, "groups"), 0);
	T_EQ_INT(json_integer_value(json_array_get(json_object_get(g, "cells"), 0)), 0);
	T_EQ_INT(json_array_size(json_object_get(g, "cells")), 1);
	T_EQ_STR(json_string_value(json_object_get(g, "bundle_sha256")), SA);
	T_EQ_STR(json_string_value(json_object_get(g, "here_sha256")), SC);
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(g, "diff"), "n")), 1);
	g = json_array_get(json_object_get(es, "groups"), 1);
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(g, "diff"), "n")), 2);
	/* here, vm.zone_reclaim_mode changed between runs; boot ids never count */
	T_CHECK(json_is_null(json_object_get(json_object_get(es, "drift"), "bundle")));
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(
	    json_object_get(es, "drift"), "here"), "keys"), 0), "key")), "vm.zone_reclaim_mode");

	c0 = json_array_get(json_object_get(rep, "cells"), 0);
	cc = json_object_get(c0, "counters_changed");
	/* THP first, then TLB; no gauge, no stray major fault */
	T_EQ_INT(json_array_size(cc), 2);
	T_EQ_STR(json_string_value(json_array_get(cc, 0)), "vmstat.thp_fault_alloc: 0 -> 5000");
	T_EQ_STR(json_string_value(json_array_get(cc, 1)), "pmu.dTLB-load-misses: 900 -> 300");
	m = json_array_get(json_object_get(c0, "metrics"), 0);
	T_CHECK(json_object_get(m, "counter") == NULL);
	T_EQ_STR(json_string_value(json_array_get(json_object_get(json_object_get(m,
	    "explained_by"), "environment"), 0)), "transparent_hugepage/defrag: madvise -> always");
	T_EQ_INT(json_array_size(json_object_get(json_object_get(m, "explained_by"),
	    "counters")), 2);
	T_CHECK(json_is_true(json_object_get(json_array_get(json_object_get(c0, "metrics"), 1),
	    "counter")));
	/* a metric that reproduced explains nothing */
	T_CHECK(json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(rep,
	    "cells"), 1), "metrics"), 0), "explained_by") == NULL);

	buf_init(&out, 1 << 20);
	T_EQ_INT(repro_env_text(rep, &out), 0);
	T_CONTAINS(out.data, "  cells thp=never:\n  THP/mTHP: transparent_hugepage/defrag: "
	    "madvise -> always\n");
	T_CONTAINS(out.data, "changed between runs here:\n");
	T_CONTAINS(out.data, "  thp=never: vmstat.thp_fault_alloc: 0 -> 5000; "
	    "pmu.dTLB-load-misses: 900 -> 300\n");
	T_CHECK(strstr(out.data, "nr_kernel_stack") == NULL);
	buf_reset(&out);
	T_EQ_INT(repro_explain_text(m, &out), 0);
	T_CONTAINS(out.data, "explained by? environment: transparent_hugepage/defrag: madvise -> "
	    "always | counters: vmstat.thp_fault_alloc: 0 -> 5000");
	buf_free(&out);
out:
	json_decref(b);
	json_decref(hr);
	json_decref(hs);
	json_decref(rep);
}

/* A version-1 bundle has no snapshots: said, nothing compared, counters
 * still listed. A run naming a snapshot the map lacks is not compared. */
static void
test_no_snapshots(void)
{
	json_t *b = j("{\"runs\":[{\"id\":1,\"cell_index\":0,\"label\":\"a\"}]}"),
	    *hr = j(here_runs_text), *hs = j(here_snaps_text), *rep = j(rep_text), *es;
	struct bf_diag d;

	bf_diag_clear(&d);
	T_EQ_INT(repro_env_snapshots(b, hr, hs, rep, &d), 0);
	es = json_object_get(rep, "environment_snapshots");
	T_CONTAINS(json_string_value(json_object_get(es, "note")), "bundle version 1");
	T_EQ_INT(json_array_size(json_object_get(es, "groups")), 0);
	T_EQ_INT(json_array_size(json_object_get(json_array_get(json_object_get(rep, "cells"), 0),
	    "counters_changed")), 2);
	json_decref(rep);
	rep = j(rep_text);
	json_decref(b);
	b = j(bundle_text);
	T_EQ_INT(repro_env_snapshots(b, hr, NULL, rep, &d), 0);
	T_CONTAINS(json_string_value(json_object_get(json_object_get(rep,
	    "environment_snapshots"), "note")), "no run here");
	json_decref(b);
	json_decref(hr);
	json_decref(hs);
	json_decref(rep);
}

/* A snapshot value that is not a string: refused naming the key. A value
 * with a newline cannot start a line of its own in the text. */
static void
test_hostile(void)
{
	json_t *b = j(bundle_text), *hr = j(here_runs_text), *hs = j(here_snaps_text),
	    *rep = j(rep_text);
	struct bf_diag d;
	struct buf out;

	json_object_set_new(json_object_get(hs, SC), "vm.swappiness", json_integer(60));
	bf_diag_clear(&d);
	T_EQ_INT(repro_env_snapshots(b, hr, hs, rep, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "vm.swappiness");
	json_object_set_new(json_object_get(hs, SC), "vm.swappiness",
	    json_string("1\n  THP/mTHP: forged: a -> b"));
	json_decref(rep);
	rep = j(rep_text);
	bf_diag_clear(&d);
	T_EQ_INT(repro_env_snapshots(b, hr, hs, rep, &d), 0);
	buf_init(&out, 1 << 20);
	T_EQ_INT(repro_env_text(rep, &out), 0);
	T_CHECK(strstr(out.data, "\n  THP/mTHP: forged") == NULL);
	T_CONTAINS(out.data, "\\x0a");
	buf_free(&out);
	json_decref(b);
	json_decref(hr);
	json_decref(hs);
	json_decref(rep);
}

/*
 * A bundle whose job expanded its cells in another order than the rerun
 * here (a bundle from a release that stored specs with sorted keys): its
 * runs are renumbered to the cells here with the same axes; a run whose
 * axes match no cell, or two, keeps its number.
 */
static void
test_align_cells(void)
{
	json_t *b = json_loads("{\"runs\":["
	    "{\"id\":1,\"cell_index\":0,\"axes\":{\"passes\":1,\"mb\":8}},"
	    "{\"id\":2,\"cell_index\":1,\"axes\":{\"passes\":1,\"mb\":16}},"
	    "{\"id\":3,\"cell_index\":2,\"axes\":{\"passes\":2,\"mb\":8}},"
	    "{\"id\":4,\"cell_index\":3,\"axes\":{\"passes\":2,\"mb\":16}},"
	    "{\"id\":5,\"cell_index\":3,\"axes\":{\"passes\":9,\"mb\":16}},"
	    "{\"id\":6,\"cell_index\":2,\"axes\":{\"passes\":3,\"mb\":3}}]}", 0, NULL);
	json_t *here = json_loads("["
	    "{\"cell_index\":0,\"axes\":{\"mb\":8,\"passes\":1}},"
	    "{\"cell_index\":1,\"axes\":{\"mb\":8,\"passes\":2}},"
	    "{\"cell_index\":2,\"axes\":{\"mb\":16,\"passes\":1}},"
	    "{\"cell_index\":3,\"axes\":{\"mb\":16,\"passes\":2}},"
	    "{\"cell_index\":3,\"axes\":{\"mb\":16,\"passes\":2}},"
	    "{\"cell_index\":4,\"axes\":{\"mb\":3,\"passes\":3}},"
	    "{\"cell_index\":5,\"axes\":{\"mb\":3,\"passes\":3}}]", 0, NULL);
	static const int want[] = { 0, 2, 1, 3, 3, 2 };
	size_t moved = 99, i;

	T_CHECK(b != NULL && here != NULL);
	if (b == NULL || here == NULL)
		goto out;
	T_EQ_INT(repro_align_cells(b, here, &moved), 0);
	T_EQ_INT((long long)moved, 2);
	for (i = 0; i < 6; i++)
		T_EQ_INT(json_integer_value(json_object_get(json_array_get(json_object_get(b,
		    "runs"), i), "cell_index")), want[i]);
	/* nothing here to align with: nothing moves */
	json_array_clear(here);
	T_EQ_INT(repro_align_cells(b, here, &moved), 0);
	T_EQ_INT((long long)moved, 0);
out:
	json_decref(b);
	json_decref(here);
}

int
main(void)
{
	test_align_cells();
	test_groups_and_explanations();
	test_no_snapshots();
	test_hostile();
	T_CHECK(repro_is_counter("vmstat.pgfault") && repro_is_counter("pmu.cycles") &&
	    !repro_is_counter("faults") && !repro_is_counter(NULL));
	return t_done();
}
