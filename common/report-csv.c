/*
 * report-csv.c: the report as CSV (RFC 4180): a header, then one row per
 * metric and cell and no other lines. Numbers at full precision (the
 * shortest %.15g-%.17g that reads back);
 * an undefined one is an empty field, with the row's note saying why; a
 * counter's higher_better is empty (it has no better or worse).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "report.h"
#include "report-int.h"

/* Quote a field that holds a comma, quote, CR or LF; double quotes. */
static int
csv_field(struct buf *out, const char *s, int first)
{
	int r;

	if (!first && (r = buf_puts(out, ",")) != 0)
		return r;
	if (strpbrk(s, ",\"\r\n") == NULL)
		return buf_puts(out, s);
	if ((r = buf_puts(out, "\"")) != 0)
		return r;
	for (; *s; s++)
		if ((r = buf_append(out, s, 1)) != 0 ||
		    (*s == '"' && (r = buf_append(out, s, 1)) != 0))
			return r;
	return buf_puts(out, "\"");
}

/* x at full precision: the shortest of %.15g, %.16g, %.17g that reads
 * back as x. */
static int
csv_num(struct buf *out, double x)
{
	char f[40];
	int p;

	if (!isfinite(x))
		return buf_puts(out, ",");
	for (p = 15; p < 17; p++) {
		snprintf(f, sizeof(f), "%.*g", p, x);
		if (strtod(f, NULL) == x)
			break;
	}
	if (p == 17)
		snprintf(f, sizeof(f), "%.17g", x);
	return buf_printf(out, ",%s", f);
}

static const char *const csv_head =
    "metric,unit,higher_better,cell,baseline_cell,n,mean,sd,cov_pct,ci_lo,ci_hi,"
    "pct_change,pct_ci_lo,pct_ci_hi,pct_ci_unbounded,welch_t,welch_df,welch_p,"
    "significant,boots,sd_between,sd_within,m_opt,"
    "stat,value,value_ci_lo,value_ci_hi,ci_clipped,pct_ci_method,p,p_holm,low_n,"
    "fewer_boots,cov_between_pct,cov_within_pct,mw_u,mw_p,note\r\n";

static int
csv_row(const struct report_model *m, const struct report_metric *mt, size_t c,
    const struct report_row *s, struct buf *out)
{
	const char *note;
	int r;

	if ((r = csv_field(out, mt->name, 1)) != 0 ||
	    (r = csv_field(out, mt->unit != NULL ? mt->unit : "", 0)) != 0 ||
	    (r = (mt->no_direction ? buf_puts(out, ",") :
	    buf_printf(out, ",%d", mt->higher_better != 0))) != 0 ||
	    (r = csv_field(out, m->cells[c].label, 0)) != 0 ||
	    (r = csv_field(out, s->has_cmp ?
	    m->cells[m->cells[c].baseline].label : "", 0)) != 0 ||
	    (r = buf_printf(out, ",%zu", s->all.n)) != 0 ||
	    (r = csv_num(out, s->eff.mean)) != 0 ||
	    (r = csv_num(out, s->eff.sd)) != 0 ||
	    (r = csv_num(out, s->eff.cov)) != 0 ||
	    (r = csv_num(out, m->in->stat == REPORT_STAT_MEAN ? s->stat_lo : s->eff.ci_lo)) != 0 ||
	    (r = csv_num(out, m->in->stat == REPORT_STAT_MEAN ? s->stat_hi : s->eff.ci_hi)) != 0)
		return r;
	if (s->has_cmp) {
		if ((r = csv_num(out, s->cmp.pct.pct)) != 0 ||
		    (r = csv_num(out, s->cmp.pct.lo)) != 0 ||
		    (r = csv_num(out, s->cmp.pct.hi)) != 0 ||
		    (r = buf_printf(out, ",%d", s->cmp.pct.unbounded)) != 0 ||
		    (r = csv_num(out, s->cmp.welch.t)) != 0 ||
		    (r = csv_num(out, s->cmp.welch.nu)) != 0 ||
		    (r = csv_num(out, s->cmp.welch.p)) != 0 ||
		    (r = buf_printf(out, ",%d", s->cmp.significant)) != 0)
			return r;
	} else if ((r = buf_puts(out, ",,,,,,,,")) != 0) {
		return r;
	}
	if (s->multi) {
		if ((r = buf_printf(out, ",%zu", s->tl.nboots)) != 0 ||
		    (r = csv_num(out, sqrt(s->tl.sigma_boot2))) != 0 ||
		    (r = csv_num(out, sqrt(s->tl.sw2))) != 0)
			return r;
		r = s->has_mstar ? buf_printf(out, ",%zu", s->mstar) : buf_puts(out, ",");
	} else {
		r = buf_puts(out, s->all.n > 0 ? ",1,,," : ",,,,");
	}
	if (r != 0)
		return r;
	if ((r = csv_field(out, report_stat_name(m->in->stat), 0)) != 0 ||
	    (r = csv_num(out, s->stat_value)) != 0 ||
	    (r = csv_num(out, s->stat_lo)) != 0 ||
	    (r = csv_num(out, s->stat_hi)) != 0 ||
	    (r = buf_printf(out, ",%d", s->ci_clipped)) != 0)
		return r;
	if (s->has_cmp)
		r = buf_printf(out, ",%s", s->log_ratio ? "log ratio" : "fieller");
	else
		r = buf_puts(out, ",");
	if (r != 0 || (r = csv_num(out, s->has_cmp ? s->p : NAN)) != 0 ||
	    (r = csv_num(out, s->has_padj ? s->p_adj : NAN)) != 0)
		return r;
	if (s->has_cmp)
		r = buf_printf(out, ",%d,%d", s->low_n, s->fewer_boots);
	else
		r = buf_puts(out, ",,");
	if (r != 0 || (r = csv_num(out, s->cov_between)) != 0 ||
	    (r = csv_num(out, s->cov_within)) != 0)
		return r;
	if (s->has_mw)
		r = (r = csv_num(out, s->mw.u)) != 0 ? r : csv_num(out, s->mw.p);
	else
		r = buf_puts(out, ",,");
	/* One note column: the comparison's reason first, else the row's. */
	note = s->cmp_note != NULL ? s->cmp_note : s->note;
	if (r != 0 || (r = csv_field(out, note ? note : "", 0)) != 0)
		return r;
	return buf_puts(out, "\r\n");
}

int
report_render_csv(const struct report_model *m, struct buf *out)
{
	const struct report_model_metric *mm;
	size_t i, c;
	int r;

	if ((r = buf_puts(out, csv_head)) != 0)
		return r;
	for (i = 0; i < m->nmetrics; i++) {
		mm = &m->metrics[i];
		for (c = 0; c < m->ncells; c++)
			if ((r = csv_row(m, mm->metric, c, &mm->rows[c], out)) != 0)
				return r;
	}
	return 0;
}
