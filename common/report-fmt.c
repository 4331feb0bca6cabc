/*
 * report-fmt.c: the words and digits of one table field, as the text and
 * markdown tables print them (how a number is rounded, what an undefined
 * statistic says instead), and the UTF-8 cleaning of user text that every
 * format but CSV applies.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "report.h"
#include "report-int.h"

#define MAX_FIXED	9	/* a 0 shows at most this many decimals */
/* At most 1 + 1 + 17 + 1 characters, or 24 in e-notation. */
#define NUM_FIELD	30

const char *const report_col_head[NCOL] = {
	"cell", "n", "mean", "CoV%", "95% CI", "% change", "95% CI of change",
	"Welch p", "sig"
};
const int report_col_right[NCOL] = { 0, 1, 1, 1, 0, 1, 0, 1, 0 };

const char *const report_bcol_head[NBCOL] = {
	"cell", "boots", "iter/boot", "sd between", "sd within", "CoV% between",
	"CoV% within", "CI dof", "m*"
};
const int report_bcol_right[NBCOL] = { 0, 1, 1, 1, 1, 1, 1, 1, 1 };

const char *
report_direction_words(const struct report_metric *mt)
{
	if (mt->no_direction)
		return "no better or worse";
	return mt->higher_better ? "Higher is better" : "Lower is better";
}

const char *
report_stat_name(enum report_stat st)
{
	return st == REPORT_STAT_MEDIAN ? "median" : st == REPORT_STAT_MIN ? "min" : "mean";
}

const char *
report_head(const struct report_model *m, const struct report_model_metric *mm, int col)
{
	if (col == C_N && mm->nmulti > 0)
		return REPORT_HEAD_BXI;
	if (col == C_MEAN && m->in->stat != REPORT_STAT_MEAN)
		return report_stat_name(m->in->stat);
	if (col == C_P && m->in->stat == REPORT_STAT_MEDIAN)
		return m->in->adjust == REPORT_ADJUST_HOLM ? "MW p (Holm)" : "MW p";
	if (col == C_P && m->in->adjust == REPORT_ADJUST_HOLM)
		return "Welch p (Holm)";
	return report_col_head[col];
}

int
report_stat_parse(const char *s, enum report_stat *out)
{
	if (s == NULL || strcmp(s, "mean") == 0)
		*out = REPORT_STAT_MEAN;
	else if (strcmp(s, "median") == 0)
		*out = REPORT_STAT_MEDIAN;
	else if (strcmp(s, "min") == 0)
		*out = REPORT_STAT_MIN;
	else
		return BF_ERR_INVALID;
	return 0;
}

int
report_adjust_parse(const char *s, enum report_adjust *out)
{
	if (s == NULL || strcmp(s, "none") == 0)
		*out = REPORT_ADJUST_NONE;
	else if (strcmp(s, "holm") == 0)
		*out = REPORT_ADJUST_HOLM;
	else
		return BF_ERR_INVALID;
	return 0;
}

const char *
report_direction_name(const struct report_metric *mt)
{
	if (mt->no_direction)
		return "none";
	return mt->higher_better ? "higher" : "lower";
}

/*
 * Decimals for the mean and CI of one row: enough for 4 significant digits
 * of the mean and 2 of the CI's half-width, so a CI never collapses to a
 * point (1e12 +- 1 prints 1000000000000.0 [999999999999.2, ...]). May be
 * negative (only the digits before the point matter): fmt_numn prints no
 * decimals then, or that many significant digits in e-notation.
 */
int
report_row_decimals(const struct stats_summary *s)
{
	double x = fabs(s->mean), h = (s->ci_hi - s->ci_lo) / 2;
	int dec = REPORT_DEC_NONE, k;

	if (isfinite(x) && x > 0) {
		dec = 3 - (int)floor(log10(x));
		if (isfinite(h) && h > 0 && (k = 1 - (int)floor(log10(h))) > dec)
			dec = k;
	}
	return dec;
}

/* A spread shows 3 significant digits. */
static int
sd_decimals(double x)
{
	if (!isfinite(x) || x <= 0)
		return 0;
	return 2 - (int)floor(log10(x));
}

/*
 * x with dec decimals, or the same significant digits (at most 17, all a
 * double has) in e-notation when that is shorter: 1e12 +- 1 prints
 * 1000000000000.0, 1e-9 +- 1e-12 1.0000e-09. sign: a leading '+'.
 */
static void
fmt_digits(char *f, size_t size, double x, int dec, int sign)
{
	int sig, ilog, nfix, nexp;

	if (!isfinite(x)) {
		snprintf(f, size, "-");
		return;
	}
	if (dec == REPORT_DEC_NONE)
		dec = 4;
	if (x == 0) {
		snprintf(f, size, sign ? "%+.*f" : "%.*f", dec > 0 && dec <= MAX_FIXED ? dec : 0, x);
		return;
	}
	ilog = (int)floor(log10(fabs(x)));
	sig = ilog + 1 + dec;
	sig = sig < 2 ? 2 : sig > 17 ? 17 : sig;
	nfix = (dec > 0 ? dec + 1 : 0) + (ilog >= 0 ? ilog + 1 : 1);
	nexp = sig + 5;
	if (nfix <= nexp || (ilog >= 0 && ilog < 15 && dec <= 0))
		snprintf(f, size, sign ? "%+.*f" : "%.*f", dec > 0 ? dec : 0, x);
	else
		snprintf(f, size, sign ? "%+.*e" : "%.*e", sig - 1, x);
}

static void
fmt_numn(char *f, size_t size, double x, int dec)
{
	fmt_digits(f, size, x, dec, 0);
}

/* Decimals of a percentage whose spread is h: 2, or as many as keep 2
 * significant digits of h. */
static int
pct_decimals(double h)
{
	int k;

	if (!isfinite(h) || h <= 0)
		return 2;
	k = 1 - (int)floor(log10(h));
	return k > 2 ? k : 2;
}

int
report_pct_decimals(const struct report_row *s)
{
	return pct_decimals((s->cmp.pct.hi - s->cmp.pct.lo) / 2);
}

/* A percentage with dec decimals ("+1.73", "+1.0e-10" for the change of
 * 1e12 +- 1 data); 3 significant digits past 1e6 (a CoV or change that
 * large is a bad baseline, not a precise number). */
static void
fmt_pctn(char *f, size_t size, double x, int sign, int dec)
{
	if (fabs(x) >= 1e6)
		snprintf(f, size, sign ? "%+.3g" : "%.3g", x);
	else
		fmt_digits(f, size, x, dec, sign);
}

/* An end of the CI of change: never a bare 0 for a non-zero end, so a CI
 * that excludes 0 shows it ("+0.0004", not "+0.00"). */
static void
fmt_pct_end(char *f, size_t size, double x, int dec)
{
	fmt_pctn(f, size, x, 1, dec);
	while (x != 0 && isfinite(x) && strtod(f, NULL) == 0 && dec < 17)
		fmt_pctn(f, size, x, 1, ++dec);
}

static void
fmt_num(char *f, double x, int dec)
{
	fmt_numn(f, REPORT_FIELD, x, dec);
}

/* p with 4 decimals, or as many more as show which side of 0.05 it is on
 * (0.04996 is 0.04996, not 0.0500). */
static void
fmt_p(char *f, double p)
{
	int dec;

	if (isnan(p)) {
		snprintf(f, REPORT_FIELD, "-");
		return;
	}
	if (p < 0.0001) {
		snprintf(f, REPORT_FIELD, "<0.0001");
		return;
	}
	for (dec = 4; dec < 17; dec++) {
		double v;

		snprintf(f, REPORT_FIELD, "%.*f", dec, p);
		v = strtod(f, NULL);
		if (p == 0.05 || ((v < 0.05) == (p < 0.05) && v != 0.05))
			break;
	}
}

void
report_row_fields(const struct report_row *s, int dec, char f[NCOL][REPORT_FIELD])
{
	char lo[NUM_FIELD], hi[NUM_FIELD];
	const struct stats_pct *p = &s->cmp.pct;
	size_t na = s->beff.n, nb = s->eff.n;
	int pdec = report_pct_decimals(s);

	if (dec == REPORT_SIG_DIGITS)
		dec = report_row_decimals(&s->eff);
	f[C_LABEL][0] = '\0';
	if (s->multi && s->tl.m_min != s->tl.m_max)
		snprintf(f[C_N], REPORT_FIELD, "%zux%zu-%zu", s->tl.nboots, s->tl.m_min,
		    s->tl.m_max);
	else if (s->multi)
		snprintf(f[C_N], REPORT_FIELD, "%zux%zu", s->tl.nboots, s->tl.m_min);
	else if (s->shape_bxi && s->all.n > 0)
		snprintf(f[C_N], REPORT_FIELD, "1x%zu", s->all.n);
	else
		snprintf(f[C_N], REPORT_FIELD, "%zu", s->all.n);
	f[C_MEAN][0] = f[C_COV][0] = f[C_CI][0] = '\0';
	f[C_PCT][0] = f[C_PCTCI][0] = f[C_P][0] = '\0';
	snprintf(f[C_SIG], REPORT_FIELD, "%s", s->mark);
	if (s->all.n == 0) {
		snprintf(f[C_MEAN], REPORT_FIELD, W_NOSAMPLES);
	} else {
		fmt_num(f[C_MEAN], s->stat_value, dec);
		if (isnan(s->eff.cov))
			snprintf(f[C_COV], REPORT_FIELD, "-");
		else
			fmt_pctn(f[C_COV], REPORT_FIELD, s->eff.cov, 0,
			    s->eff.cov >= 0.01 ? 2 : pct_decimals(s->eff.cov));
		if (s->boots_equal) {
			snprintf(f[C_CI], REPORT_FIELD, W_BOOTSEQ, s->cov_within);
		} else if (s->eff.n < 2) {
			snprintf(f[C_CI], REPORT_FIELD, W_NOCI);
		} else if (isnan(s->stat_lo)) {
			snprintf(f[C_CI], REPORT_FIELD, "-");
		} else {
			fmt_numn(lo, sizeof(lo), s->stat_lo, dec);
			fmt_numn(hi, sizeof(hi), s->stat_hi, dec);
			snprintf(f[C_CI], REPORT_FIELD, "[%s, %s]%s", lo, hi,
			    s->ci_clipped ? "c" : "");
		}
	}
	if (!s->has_cmp) {
		if (s->is_base)
			snprintf(f[C_PCT], REPORT_FIELD, "baseline");
		return;
	}
	if (na == 0 || nb == 0) {
		snprintf(f[C_PCT], REPORT_FIELD, "-");
		return;
	}
	if (isnan(p->pct))
		snprintf(f[C_PCT], REPORT_FIELD, s->beff.mean == 0 ? W_UNDEF : "-");
	else
		fmt_pctn(f[C_PCT], REPORT_FIELD, p->pct, 1, pdec);
	if (p->unbounded) {
		snprintf(f[C_PCTCI], REPORT_FIELD, W_UNBOUNDED);
	} else if (s->boots_equal && s->beff.sd == 0 && s->eff.sd == 0) {
		snprintf(f[C_PCTCI], REPORT_FIELD, "boot means equal");
	} else if (na < 2 || nb < 2) {
		snprintf(f[C_PCTCI], REPORT_FIELD, W_NOCI);
	} else if (isnan(p->lo)) {
		snprintf(f[C_PCTCI], REPORT_FIELD, "-");
	} else {
		fmt_pct_end(lo, sizeof(lo), p->lo, pdec);
		fmt_pct_end(hi, sizeof(hi), p->hi, pdec);
		snprintf(f[C_PCTCI], REPORT_FIELD, "[%s, %s]%s", lo, hi,
		    s->log_ratio ? "l" : "");
	}
	if (na >= 2 && nb >= 2 && isnan(s->p) && s->boots_equal && s->has_cmp)
		snprintf(f[C_P], REPORT_FIELD, "-");
	else if (na >= 2 && nb >= 2 && isnan(s->p))
		snprintf(f[C_P], REPORT_FIELD, W_NOVAR);
	else
		fmt_p(f[C_P], s->p);
	if (s->has_padj) {
		char q[REPORT_FIELD], a[REPORT_FIELD];

		memcpy(q, f[C_P], sizeof(q));
		fmt_p(a, s->p_adj);
		snprintf(f[C_P], REPORT_FIELD, "%.24s (%.24s)", q, a);
	}
}

void
report_boot_fields(const struct report_row *s, int with_mstar, char f[NBCOL][REPORT_FIELD])
{
	double sdb = sqrt(s->tl.sigma_boot2), sdw = sqrt(s->tl.sw2);

	f[B_LABEL][0] = '\0';
	snprintf(f[B_BOOTS], REPORT_FIELD, "%zu", s->tl.nboots);
	if (s->tl.m_min == s->tl.m_max)
		snprintf(f[B_ITERS], REPORT_FIELD, "%zu", s->tl.m_min);
	else
		snprintf(f[B_ITERS], REPORT_FIELD, "%zu-%zu", s->tl.m_min, s->tl.m_max);
	fmt_num(f[B_SDB], sdb, sd_decimals(sdb));
	fmt_num(f[B_SDW], sdw, sd_decimals(sdw));
	if (isnan(s->cov_between))
		snprintf(f[B_COVB], REPORT_FIELD, "-");
	else
		fmt_pctn(f[B_COVB], REPORT_FIELD, s->cov_between, 0, s->cov_between >= 0.01 ?
		    2 : pct_decimals(s->cov_between));
	if (isnan(s->cov_within))
		snprintf(f[B_COVW], REPORT_FIELD, "-");
	else
		fmt_pctn(f[B_COVW], REPORT_FIELD, s->cov_within, 0, s->cov_within >= 0.01 ?
		    2 : pct_decimals(s->cov_within));
	snprintf(f[B_DOF], REPORT_FIELD, "%zu", s->tl.nboots - 1);
	if (!with_mstar)
		f[B_MSTAR][0] = '\0';
	else if (s->has_mstar)
		snprintf(f[B_MSTAR], REPORT_FIELD, "%zu", s->mstar);
	else
		snprintf(f[B_MSTAR], REPORT_FIELD, "n/a");
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
static size_t
utf8_seq(const unsigned char *s)
{
	size_t n, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

char *
report_clean(const char *s, int ctl, size_t *width)
{
	size_t i = 0, k, n = strlen(s), w = 0;
	char *t;

	if ((t = malloc(n + 1)) == NULL)
		return NULL;
	while (i < n) {
		unsigned char ch = (unsigned char)s[i];

		if ((k = utf8_seq((const unsigned char *)s + i)) == 0) {
			t[i++] = '?';
		} else if (k == 1) {
			t[i++] = ctl && (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
		} else {
			memcpy(t + i, s + i, k);
			i += k;
		}
		w++;
	}
	t[n] = '\0';
	if (width != NULL)
		*width = w;
	return t;
}
