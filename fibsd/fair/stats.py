"""Pearson's chi-square test of dice counts against equal chances, with its p-value.

The p-value is the regularized upper incomplete gamma function Q(k/2, x/2), computed
by its power series below a + 1 and by its continued fraction above (both converge
fast there), so no statistics package is needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

_EPSILON = 1e-12
_STEPS = 1000


def chi_square(counts: Sequence[int]) -> tuple[float, float]:
    """(statistic, p-value) of ``counts`` against a uniform distribution."""
    total = sum(counts)
    if total <= 0 or len(counts) < 2:
        raise ValueError("need at least two categories and one observation")
    expected = total / len(counts)
    statistic = sum((count - expected) ** 2 for count in counts) / expected
    return statistic, upper_gamma_q((len(counts) - 1) / 2, statistic / 2)


def upper_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a), for a > 0 and x >= 0."""
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        denominator = a
        for _ in range(_STEPS):
            denominator += 1
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * _EPSILON:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    # Lentz's method for the continued fraction of Gamma(a, x).
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    fraction = d
    for i in range(1, _STEPS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        fraction *= step
        if abs(step - 1) < _EPSILON:
            break
    return math.exp(log_front) * fraction
