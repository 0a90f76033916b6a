"""Student's t quantiles for the confidence intervals of the standings and of the
double-dummy skill: below both, so neither imports the other for them."""

from __future__ import annotations

import math
from statistics import NormalDist

_SERIES_MAX_DF = 200


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t distribution with ``df`` degrees of freedom.

    Written here rather than taken from scipy, which the referee does not
    otherwise need. ``df`` is a positive whole number or ``math.inf`` (the
    normal distribution). Up to 200 degrees of freedom the exact distribution
    function (Abramowitz & Stegun 26.7.3/26.7.4, a finite series for whole
    ``df``) is inverted by bisection, close to machine precision; beyond that
    the Cornish-Fisher expansion (A&S 26.7.5) is used, whose relative error
    there is below 1e-8 for 1e-6 <= p <= 1 - 1e-6 (checked against scipy).
    """
    if not 0.0 < p < 1.0:  # a caller's bug, said as math's functions say theirs: a ValueError
        raise ValueError(f"p must be strictly between 0 and 1, not {p!r}")
    if df == math.inf:
        return NormalDist().inv_cdf(p)
    if not (df >= 1 and df == int(df)):
        raise ValueError(f"df must be a whole number >= 1 or math.inf, not {df!r}")
    nu = int(df)
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, nu)
    if nu > _SERIES_MAX_DF:
        return _cornish_fisher(p, nu)
    # Bisection on the central probability P(|T| <= t) = 2p - 1, which is
    # increasing in t; robust for every df and p, and cheap at these sizes.
    target = 2.0 * p - 1.0
    lo, hi = 0.0, 1.0
    while _t_central(hi, nu) < target:
        lo, hi = hi, 2.0 * hi
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return mid
        if _t_central(mid, nu) < target:
            lo = mid
        else:
            hi = mid


def _t_central(t: float, nu: int) -> float:
    """P(|T| <= t) for t >= 0 and whole ``nu`` (A&S 26.7.3 odd, 26.7.4 even)."""
    theta = math.atan(t / math.sqrt(nu))
    cos2 = math.cos(theta) ** 2
    if nu % 2 == 1:
        # (2/pi) * (theta + sin cos * sum_k a_k cos^2k), a_k = a_{k-1} * 2k / (2k + 1)
        if nu == 1:
            return (2.0 / math.pi) * theta
        term, total = 1.0, 1.0
        for k in range(1, (nu - 3) // 2 + 1):
            term *= cos2 * (2 * k) / (2 * k + 1)
            total += term
        return (2.0 / math.pi) * (theta + math.sin(theta) * math.cos(theta) * total)
    # sin * sum_k b_k cos^2k, b_k = b_{k-1} * (2k - 1) / (2k)
    term, total = 1.0, 1.0
    for k in range(1, (nu - 2) // 2 + 1):
        term *= cos2 * (2 * k - 1) / (2 * k)
        total += term
    return math.sin(theta) * total


def _cornish_fisher(p: float, nu: int) -> float:
    """t quantile from the normal one, by the expansion in powers of 1/nu (A&S 26.7.5)."""
    x = NormalDist().inv_cdf(p)
    x2 = x * x
    g1 = x * (x2 + 1) / 4
    g2 = x * ((5 * x2 + 16) * x2 + 3) / 96
    g3 = x * (((3 * x2 + 19) * x2 + 17) * x2 - 15) / 384
    g4 = x * ((((79 * x2 + 776) * x2 + 1482) * x2 - 1920) * x2 - 945) / 92160
    return x + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu
