#!/usr/bin/env python3
"""effects_check.py: the hand-checked vectors of tests/unit/coord_test_repro_effects.c.

The comparison of effects (docs/bundle.md, Effects) computed again from its
definition, independently of common/stats.c: means and sample variances by
Python's statistics module, the t quantile by mpmath (40 digits; findroot on
the regularised incomplete beta), logs and exps by mpmath too. Run it and
paste the numbers into the test's table; it is not a test dependency.

Groups: a0, a1 (the bundle's baseline cell and cell), b0, b1 (here).
  ln r_a = ln(m_a1 / m_a0), ln r_b likewise, D = ln r_b - ln r_a
  v_g = s_g^2 / (n_g m_g^2)                       delta method, per group
  se = sqrt(sum v_g), nu = (sum v_g)^2 / sum(v_g^2 / (n_g - 1))
  ratio = exp(D), CI = exp(D -+ t_{(1+level)/2, nu} se)
  a side's effect: 100 (r - 1), 95% CI from its two groups alone
"""
import statistics as st

import mpmath as mp

mp.mp.dps = 40


def tq(p, nu):
    """t quantile: P(T <= t) = p, p > 0.5."""
    nu = mp.mpf(nu)

    def sf(t):
        x = nu / (nu + t * t)
        return mp.betainc(nu / 2, mp.mpf(1) / 2, 0, x, regularized=True) / 2

    return mp.findroot(lambda t: sf(t) - (1 - mp.mpf(p)), mp.mpf(2))


def group(v):
    m = mp.mpf(st.fmean(v))
    var = mp.mpf(st.variance(v))
    return m, var / (len(v) * m * m), len(v)


def ws(gs):
    sv = sum(g[1] for g in gs)
    sv2 = sum(g[1] ** 2 / (g[2] - 1) for g in gs)
    return mp.sqrt(sv), (sv * sv / sv2 if sv2 > 0 else sum(g[2] for g in gs) - len(gs))


def ci(ln, se, nu, level):
    if se == 0:
        return mp.exp(ln), mp.exp(ln)
    t = tq((1 + mp.mpf(level)) / 2, nu)
    return mp.exp(ln - t * se), mp.exp(ln + t * se)


def case(name, a0, a1, b0, b1):
    g = [group(x) for x in (a0, a1, b0, b1)]
    lna = mp.log(g[1][0] / g[0][0])
    lnb = mp.log(g[3][0] / g[2][0])
    d = lnb - lna
    sea, nua = ws(g[0:2])
    seb, nub = ws(g[2:4])
    se, nu = ws(g)
    alo, ahi = ci(lna, sea, nua, 0.95)
    blo, bhi = ci(lnb, seb, nub, 0.95)
    lo90, hi90 = ci(d, se, nu, 0.90)
    lo95, hi95 = ci(d, se, nu, 0.95)
    f = lambda x: mp.nstr(x, 17)
    print(f"{name}:")
    print(f"  pct_bundle {f(100 * (mp.exp(lna) - 1))} [{f(100 * (alo - 1))}, {f(100 * (ahi - 1))}]")
    print(f"  pct_here   {f(100 * (mp.exp(lnb) - 1))} [{f(100 * (blo - 1))}, {f(100 * (bhi - 1))}]")
    print(f"  ratio {f(mp.exp(d))} nu {f(nu)}")
    print(f"  ci90 [{f(lo90)}, {f(hi90)}] ci95 [{f(lo95)}, {f(hi95)}]")


# The vectors, as in the C test's table.
A0 = [100.0, 101.0, 99.0, 100.5, 99.5]
A1 = [90.8, 91.2, 90.6, 91.0, 90.4]
B0 = [110.0, 111.0, 109.0, 110.5, 109.5]
case("reproduces (the same -9.2% on a 10% faster lab)", A0, A1, B0,
     [99.9, 100.3, 99.7, 100.1, 99.5])
case("differs (the seed: -9.2% there, -15% here)", A0, A1, B0,
     [93.5, 93.9, 93.3, 93.7, 93.1])
case("inconclusive (noisy)", [100.0, 110.0, 90.0], [95.0, 104.0, 86.0],
     [100.0, 112.0, 91.0], [94.0, 107.0, 84.0])
case("both means negative on a side", [-100.0, -101.0, -99.0], [-90.0, -91.0, -89.5],
     [-100.0, -101.0, -99.0], [-90.0, -91.0, -89.5])
