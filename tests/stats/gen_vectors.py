#!/usr/bin/python3
"""
gen_vectors.py: reference values for common/stats.c and the report, computed
with Debian's python3-scipy (scipy 1.10, numpy 1.24 on Debian 12), written to
tests/stats/vectors.json. tests/unit/test_stats_vectors.c and
tests/integration/compare.sh check benchfleet against that file, so neither
needs scipy. See tests/stats/README.md.

Each case compares a sample set B with a baseline A, as a report row does.
Where scipy has the function, scipy computes the value:
  mean, sd             numpy.mean, numpy.std(ddof=1)
  cov                  100 * sd / |mean|  (scipy.stats.variation with ddof=1)
  ci                   mean -/+ t * sd / sqrt(n), t = the 0.975 t quantile
  welch t, p           scipy.stats.ttest_ind(B, A, equal_var=False)
  welch df             Welch-Satterthwaite (scipy 1.10 does not return it)
  pct, pct ci          100 (mB/mA - 1); Fieller's 95% CI with t at the Welch df
  mw u, p              scipy.stats.mannwhitneyu(B, A, 'two-sided', method=M)
The t quantiles are brentq roots of scipy.stats.t.sf, not t.ppf: in scipy
1.10 t.ppf (cephes stdtri) is off by up to 3e-9 relative, t.sf is not; each
is cross-checked with mpmath (python3-mpmath) at 40 digits. The % change and
its Fieller CI are evaluated in mpmath from the exact samples, and the ends
are checked to solve the defining quadratic (mB - r mA)^2 = t^2 (vB + r^2 vA).
Mann-Whitney's method M is the one benchfleet's STATS_MW_AUTO picks: exact
when there are no ties and both n <= 10 or (as scipy's "auto") the smaller
n <= 8, with both n <= 50; otherwise asymptotic (tie and continuity
corrected). The file records it.

Run: /usr/bin/python3 tests/stats/gen_vectors.py [OUT]   (default: next to
this script). Output is deterministic (seeded numpy Generator).
"""
import json
import math
import os
import sys
import warnings

import numpy as np
import scipy
import scipy.optimize
import scipy.stats

import mpmath

SEED = 20261202
MW_EXACT_AUTO = 10
MW_EXACT_SCIPY = 8
MW_EXACT_MAX = 50
MW_EXACT_SCIPY_MAX = 200


def tq(p, nu):
    """t with P(T <= t) = p for 0.5 < p < 1, as a root of t.sf."""
    q = 1 - p
    hi = 1.0
    while scipy.stats.t.sf(hi, nu) > q:
        hi *= 2
    t = scipy.optimize.brentq(lambda x: scipy.stats.t.sf(x, nu) - q, 0, hi,
                              xtol=1e-300, rtol=1e-15, maxiter=1000)
    mpmath.mp.dps = 40
    nu_m = mpmath.mpf(nu)

    def sf(x):
        x = mpmath.mpf(x)
        return mpmath.betainc(nu_m / 2, mpmath.mpf(1) / 2, 0,
                              nu_m / (nu_m + x * x), regularized=True) / 2

    ref = mpmath.findroot(lambda x: sf(x) - (1 - mpmath.mpf(p)), t)
    err = abs(float(ref) - t) / t
    assert err < 1e-13, (p, nu, t, float(ref), err)
    return t


def summary(v):
    v = np.asarray(v, dtype=float)
    n = len(v)
    s = {"n": n, "mean": None, "sd": None, "cov": None, "ci_lo": None,
         "ci_hi": None}
    if n == 0:
        return s
    mean = float(np.mean(v))
    s["mean"] = mean
    if n < 2:
        return s
    sd = float(np.std(v, ddof=1))
    s["sd"] = sd
    if mean != 0:
        s["cov"] = 100 * abs(float(scipy.stats.variation(v, ddof=1)))
    h = tq(0.975, n - 1) * sd / math.sqrt(n)
    s["ci_lo"] = mean - h
    s["ci_hi"] = mean + h
    return s


def welch(a, b):
    """t, df and p of B against A; None where undefined."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return None, None, None
    va = float(np.var(a, ddof=1)) / na
    vb = float(np.var(b, ddof=1)) / nb
    if va + vb == 0:
        return None, None, None
    df = (va + vb) ** 2 / (va * va / (na - 1) + vb * vb / (nb - 1))
    res = scipy.stats.ttest_ind(b, a, equal_var=False)
    return float(res.statistic), df, float(res.pvalue)


def fieller(a, b, df):
    """pct, lo, hi, unbounded: Fieller's 95% CI of mB/mA as a % change.

    Evaluated in mpmath at 40 digits from the exact samples (t from tq), so
    that the expected values are the true ones, not a double evaluation of
    the same formula: 100 (rho - 1) loses digits when rho is near 1.
    """
    mpmath.mp.dps = 40
    na, nb = len(a), len(b)
    am = [mpmath.mpf(float(x)) for x in a]
    bm = [mpmath.mpf(float(x)) for x in b]
    ma = mpmath.fsum(am) / na
    mb = mpmath.fsum(bm) / nb
    if ma == 0:
        return None, None, None, True
    d = (mb - ma) / ma
    pct = float(100 * d)
    if na < 2 or nb < 2:
        return pct, None, None, False
    va = mpmath.fsum([(x - ma) ** 2 for x in am]) / (na - 1) / na
    vb = mpmath.fsum([(x - mb) ** 2 for x in bm]) / (nb - 1) / nb
    t = mpmath.mpf(0) if va + vb == 0 else mpmath.mpf(tq(0.975, df))
    g = t * t * va / (ma * ma)
    if g >= 1:
        return pct, None, None, True
    rho = mb / ma
    h = abs(t / ma) * mpmath.sqrt(vb * (1 - g) + rho * rho * va)
    lo = (d + g - h) / (1 - g)
    hi = (d + g + h) / (1 - g)
    # The ends solve (mB - r mA)^2 = t^2 (vB + r^2 vA), r = 1 + lo or 1 + hi.
    for r in (1 + lo, 1 + hi):
        lhs = (mb - r * ma) ** 2
        rhs = t ** 2 * (vb + r * r * va)
        assert abs(lhs - rhs) <= mpmath.mpf(10) ** -30 * (rhs + lhs + 1), (lhs, rhs)
    return pct, float(100 * lo), float(100 * hi), False


def mw(a, b):
    """U of B (scipy's mannwhitneyu(B, A).statistic), p, method."""
    na, nb = len(a), len(b)
    if na == 0 or nb == 0:
        return None, None, None
    allv = np.concatenate([a, b])
    tied = len(np.unique(allv)) < len(allv)
    exact = (not tied and
             ((na <= MW_EXACT_AUTO and nb <= MW_EXACT_AUTO) or
              (min(na, nb) <= MW_EXACT_SCIPY and
               max(na, nb) <= MW_EXACT_SCIPY_MAX)))
    method = "exact" if exact else "asymptotic"
    res = scipy.stats.mannwhitneyu(b, a, alternative="two-sided",
                                   use_continuity=True, method=method)
    return float(res.statistic), float(res.pvalue), method


def case(name, a, b, note=""):
    a = [float(x) for x in a]
    b = [float(x) for x in b]
    t, df, p = welch(np.array(a), np.array(b))
    if len(a) and len(b):
        pct, lo, hi, unb = fieller(np.array(a), np.array(b), df)
    else:
        pct, lo, hi, unb = None, None, None, False
    u, mp, method = mw(np.array(a), np.array(b))
    sig = (p is not None and p < 0.05 and lo is not None and
           (lo > 0 or hi < 0))
    return {
        "name": name, "note": note, "a": a, "b": b,
        "sa": summary(a), "sb": summary(b),
        "welch_t": t, "welch_df": df, "welch_p": p,
        "pct": pct, "pct_lo": lo, "pct_hi": hi, "pct_unbounded": unb,
        "significant": sig,
        "mw_u": u, "mw_p": mp, "mw_method": method,
    }


def cases():
    rng = np.random.default_rng(SEED)
    out = []
    # Random sets of every kind and size 2..50 (B shifted a little).
    sizes = [2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50]
    for i, n in enumerate(sizes):
        m = int(rng.integers(2, 51))
        loc = float(rng.choice([1.0, 382.2, 0.1879, 13720556.0, 1e-4]))
        sd = loc * float(rng.choice([0.002, 0.01, 0.05]))
        a = rng.normal(loc, sd, n)
        b = rng.normal(loc * (1 + float(rng.choice([0, 0.01, 0.03]))), sd, m)
        out.append(case(f"normal-{n}-vs-{m}", a, b))
    for n, m in [(3, 3), (5, 8), (10, 10), (20, 13), (50, 50), (2, 7)]:
        a = rng.lognormal(0.0, 0.5, n) * 100
        b = rng.lognormal(0.1, 0.5, m) * 100
        out.append(case(f"lognormal-{n}-vs-{m}", a, b))
    for n, m in [(4, 4), (9, 11), (30, 30), (6, 45)]:
        a = 10 + rng.standard_t(2, n)
        b = 10.5 + rng.standard_cauchy(m) * 0.2
        out.append(case(f"heavy-tailed-{n}-vs-{m}", a, b,
                        "Student t(2) baseline, Cauchy compared"))
    # The seeds' numbers: lat_pagefault 0.4068 +- 0.001 vs 0.4294 (us), 10
    # runs each, rounded to 4 decimals as a benchmark prints them (ties).
    a = np.round(rng.normal(0.4068, 0.0015, 10), 4)
    b = np.round(rng.normal(0.4294, 0.0011, 10), 4)
    out.append(case("seeds-lat-pagefault", a, b,
                    "0.4068 vs 0.4294 us, 4 decimals: ties"))
    # btree seconds, 5 runs, 1 decimal
    out.append(case("seeds-btree", [381.5, 382.9, 382.0, 381.8, 382.8],
                    [388.1, 392.0, 385.2, 389.9, 388.8]))
    # Redis ops/s, large values tightly spread.
    a = np.round(rng.normal(141030744, 141030744 * 0.00372, 8))
    b = np.round(rng.normal(139586376, 139586376 * 0.00561, 8))
    out.append(case("seeds-redis-ops", a, b, "1.4e8 with CoV 0.4%"))
    # Ties everywhere (integers), asymptotic MW with tie correction.
    out.append(case("ties-integers", [3, 4, 4, 5, 5, 5, 6, 6, 7, 4, 5],
                    [5, 5, 6, 6, 6, 7, 7, 8, 6, 5, 7, 6]))
    out.append(case("ties-small", [1, 2, 2], [2, 3, 3, 4]))
    out.append(case("all-tied", [5, 5, 5], [5, 5, 5, 5],
                    "every value equal: no variance, MW p = 1"))
    # Zero variance on one side, on both sides.
    out.append(case("zero-variance-baseline", [16385] * 5,
                    [16385, 16390, 16388, 16400, 16391]))
    out.append(case("zero-variance-compared", [10.2, 10.4, 10.1, 10.3],
                    [11.0, 11.0, 11.0]))
    out.append(case("zero-variance-both", [5, 5, 5], [6, 6, 6],
                    "no Welch test; the Fieller CI collapses to the point"))
    # A baseline with mean 0, and one not distinguishable from 0.
    out.append(case("baseline-mean-0", [-1, 1, -0.5, 0.5], [2, 2.1, 1.9, 2.05],
                    "% change undefined, CI unbounded"))
    out.append(case("baseline-near-0", [-1, 1.2, -0.5, 0.6],
                    [2, 2.1, 1.9, 2.05], "Fieller g >= 1: CI unbounded"))
    # Negative means (a % change of a negative baseline).
    out.append(case("negative-means", [-10.2, -10.5, -9.9, -10.1],
                    [-11.0, -11.4, -10.8, -11.1, -11.2]))
    # n = 1 on either side, on both.
    out.append(case("n1-compared", [0.4068, 0.4071, 0.4065, 0.4070], [0.4294],
                    "n=1, no CI"))
    out.append(case("n1-baseline", [0.4068], [0.4294, 0.4290, 0.4299],
                    "n=1, no CI"))
    out.append(case("n1-both", [7.0], [8.0], "n=1, no CI"))
    # n = 2: one degree of freedom, the widest t.
    out.append(case("n2-both", [100.0, 104.0], [110.0, 109.0]))
    # Big offset, tiny spread: a naive sum of squares loses every digit,
    # Welford does not. Binary fractions, so that the means are exact
    # doubles: 1e9 + 0.1 is not, and no double mean of such data is good
    # to 1e-9 in a 0.2 difference (scipy's is not either).
    out.append(case("big-offset", [1e9 + 0.125, 1e9 + 0.25, 1e9 + 0.375, 1e9 + 0.5],
                    [1e9 + 0.375, 1e9 + 0.625, 1e9 + 0.5, 1e9 + 0.75],
                    "1e9 + k/8: exact means; the spread is 1e-10 of the values"))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "vectors.json")
    with warnings.catch_warnings():
        # ttest_ind on n = 1 and variation on n = 1 warn; we store null.
        warnings.simplefilter("ignore")
        cs = cases()
    doc = {
        "generator": "tests/stats/gen_vectors.py",
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "mpmath": mpmath.__version__,
        "seed": SEED,
        "tolerance": "1e-9 relative; absolute (1e-9 x scale) near 0",
        "cases": cs,
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")
    print(f"{path}: {len(cs)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
