"""Intraclass correlations: the six Shrout & Fleiss (1979) forms with F-based intervals.

From the two-way ANOVA of a complete n targets × k raters table — between-targets mean square
``BMS``, within-target ``WMS``, between-raters ``JMS`` and residual ``EMS``:

* ICC(1,1) = (BMS - WMS) / (BMS + (k-1) WMS)            ICC(1,k) = (BMS - WMS) / BMS
* ICC(2,1) = (BMS - EMS) / (BMS + (k-1) EMS + k (JMS - EMS) / n)
  ICC(2,k) = (BMS - EMS) / (BMS + (JMS - EMS) / n)
* ICC(3,1) = (BMS - EMS) / (BMS + (k-1) EMS)            ICC(3,k) = (BMS - EMS) / BMS

ICC(2,1) is McGraw & Wong's ICC(A,1) and ICC(3,1) their ICC(C,1). Confidence intervals are the
F-based ones of Shrout & Fleiss (1979) and McGraw & Wong (1996), with Satterthwaite's degrees of
freedom for ICC(2,·).

References
----------
Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
reliability. Psychological Bulletin, 86(2), 420-428.
McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation
coefficients. Psychological Methods, 1(1), 30-46.
Koo, T. K., & Li, M. Y. (2016). A guideline of selecting and reporting intraclass correlation
coefficients for reliability research. Journal of Chiropractic Medicine, 15(2), 155-163.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .layout import Ratings

__all__ = ["ICCValue", "ICCResult", "icc", "icc_from_matrix", "ICC_FORMS"]

ICC_FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")


@dataclass(frozen=True)
class ICCValue:
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class ICCResult:
    forms: dict[str, ICCValue]
    n_items: int
    n_raters: int
    n_dropped: int
    raters_dropped: tuple = ()


def icc_from_matrix(x: np.ndarray, ci: float = 0.95) -> dict[str, ICCValue]:
    """The six forms for a complete **targets × raters** matrix (no missing values).

    Examples
    --------
    Shrout & Fleiss (1979), Table 2: 6 targets × 4 judges.

    >>> x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6],
    ...               [10, 5, 6, 9], [6, 2, 4, 7]], float)
    >>> {k: round(v.value, 2) for k, v in icc_from_matrix(x).items()}
    {'ICC1': 0.17, 'ICC2': 0.29, 'ICC3': 0.71, 'ICC1k': 0.44, 'ICC2k': 0.62, 'ICC3k': 0.91}
    """
    n, k = x.shape
    if n < 2 or k < 2 or np.isnan(x).any():
        raise ValueError("ICC needs a complete table of at least 2 targets × 2 raters")
    grand = x.mean()
    ss_total = np.sum((x - grand) ** 2)
    ss_rows = k * np.sum((x.mean(axis=1) - grand) ** 2)
    ss_cols = n * np.sum((x.mean(axis=0) - grand) ** 2)
    ss_err = ss_total - ss_rows - ss_cols
    bms = ss_rows / (n - 1)
    wms = (ss_total - ss_rows) / (n * (k - 1))
    jms = ss_cols / (k - 1)
    ems = ss_err / ((n - 1) * (k - 1))
    # Mean squares that are zero up to rounding (e.g. identical target means) are zero; this
    # keeps a 0/0 from turning into a huge number instead of "undefined".
    tiny = 1e-12 * max(1.0, float(ss_total))
    bms, wms, jms, ems = (0.0 if abs(v) < tiny else float(v) for v in (bms, wms, jms, ems))
    a = 1 - ci
    out: dict[str, ICCValue] = {}
    nan = float("nan")

    def safe(f):
        with np.errstate(divide="ignore", invalid="ignore"):
            try:
                v = float(f())
            except ZeroDivisionError:
                return nan
        return v if np.isfinite(v) else nan

    scale = max(bms, wms, jms, ems)

    def div(num: float, den: float) -> float:
        # a denominator that is zero up to rounding makes the coefficient undefined
        return nan if abs(den) <= 1e-9 * scale else num / den

    icc1 = div(bms - wms, bms + (k - 1) * wms)
    icc2 = div(bms - ems, bms + (k - 1) * ems + k * (jms - ems) / n)
    icc3 = div(bms - ems, bms + (k - 1) * ems)
    icc1k = div(bms - wms, bms)
    icc2k = div(bms - ems, bms + (jms - ems) / n)
    icc3k = div(bms - ems, bms)

    # ICC(1,·): one-way model
    f1 = safe(lambda: bms / wms)
    df1, df2 = n - 1, n * (k - 1)
    fl = f1 / stats.f.ppf(1 - a / 2, df1, df2)
    fu = f1 * stats.f.ppf(1 - a / 2, df2, df1)
    out["ICC1"] = ICCValue(icc1, safe(lambda: (fl - 1) / (fl + k - 1)),
                           safe(lambda: (fu - 1) / (fu + k - 1)))
    out["ICC1k"] = ICCValue(icc1k, safe(lambda: 1 - 1 / fl), safe(lambda: 1 - 1 / fu))

    # ICC(3,·): two-way mixed, consistency
    f3 = safe(lambda: bms / ems)
    df2e = (n - 1) * (k - 1)
    fl3 = f3 / stats.f.ppf(1 - a / 2, df1, df2e)
    fu3 = f3 * stats.f.ppf(1 - a / 2, df2e, df1)
    out["ICC3"] = ICCValue(icc3, safe(lambda: (fl3 - 1) / (fl3 + k - 1)),
                           safe(lambda: (fu3 - 1) / (fu3 + k - 1)))
    out["ICC3k"] = ICCValue(icc3k, safe(lambda: 1 - 1 / fl3), safe(lambda: 1 - 1 / fu3))

    # ICC(2,·): two-way random, absolute agreement; Satterthwaite df (McGraw & Wong 1996)
    fj = safe(lambda: jms / ems)
    vn = (k - 1) * (n - 1) * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    vd = (n - 1) * k ** 2 * icc2 ** 2 * fj ** 2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    v = safe(lambda: vn / vd)
    if np.isfinite(v) and v > 0:
        f2u = stats.f.ppf(1 - a / 2, n - 1, v)
        f2l = stats.f.ppf(1 - a / 2, v, n - 1)
        lb2 = safe(lambda: n * (bms - f2u * ems)
                   / (f2u * (k * jms + (k * n - k - n) * ems) + n * bms))
        ub2 = safe(lambda: n * (f2l * bms - ems)
                   / (k * jms + (k * n - k - n) * ems + n * f2l * bms))
    else:
        lb2 = ub2 = nan
    out["ICC2"] = ICCValue(icc2, lb2, ub2)
    out["ICC2k"] = ICCValue(icc2k, safe(lambda: lb2 * k / (1 + lb2 * (k - 1))),
                            safe(lambda: ub2 * k / (1 + ub2 * (k - 1))))
    return {f: out[f] for f in ICC_FORMS}


def _complete_block(present: np.ndarray) -> np.ndarray:
    """Raters to keep for the largest complete items × raters table (most cells, >= 2 raters).

    Candidates are every rater together and the rater sets that items were actually rated by
    (the most frequent 50), which finds the blocks of overlap designs such as "each item to 3
    of 6 raters"; ties go to more raters.
    """
    n_r = present.shape[1]
    cands = [np.ones(n_r, bool)]
    sets, freq = np.unique(present, axis=0, return_counts=True)
    for row in sets[np.argsort(-freq)][:50]:
        if row.sum() >= 2:
            cands.append(row.astype(bool))
    best, best_score = cands[0], (-1, -1)
    for c in cands:
        n_items = int(present[:, c].all(axis=1).sum())
        score = (n_items * int(c.sum()) if n_items >= 2 else 0, int(c.sum()))
        if score > best_score:
            best, best_score = c, score
    return best


def icc(r: Ratings, ci: float = 0.95) -> ICCResult | None:
    """ICCs on a complete items × raters table; None when fewer than 2 × 2 remain.

    Items missing a kept rater's score are dropped (``n_dropped``). When the table with every
    rater is not the largest complete one (e.g. each item went to 3 of 6 raters), the raters
    of the largest complete block are kept and the others listed in ``raters_dropped``.
    """
    present = ~np.isnan(r.matrix)
    keep = _complete_block(present) if r.n_raters > 2 else np.ones(r.n_raters, bool)
    sub = r.matrix[:, keep]
    complete = ~np.isnan(sub).any(axis=1)
    x = sub[complete]
    if x.shape[0] < 2 or x.shape[1] < 2:
        return None
    dropped = tuple(rt for rt, k in zip(r.raters, keep, strict=True) if not k)
    return ICCResult(icc_from_matrix(x, ci), int(x.shape[0]), int(x.shape[1]),
                     int(r.n_items - x.shape[0]), dropped)
