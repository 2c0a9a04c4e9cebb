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

With missing ratings the mean squares come from REML variance components of crossed items and
raters instead (:func:`icc_mixed`, as R's ``psych::ICC`` does with lme4), so every rating counts.

References
----------
Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
reliability. Psychological Bulletin, 86(2), 420-428.
McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation
coefficients. Psychological Methods, 1(1), 30-46.
Revelle, W. psych: Procedures for Psychological, Psychometric, and Personality Research,
function ICC (version 2.2.9).
Koo, T. K., & Li, M. Y. (2016). A guideline of selecting and reporting intraclass correlation
coefficients for reliability research. Journal of Chiropractic Medicine, 15(2), 155-163.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from messages import Msg

from .layout import Ratings
from .reml import VarianceComponents, crossed_components

__all__ = ["ICCValue", "ICCResult", "ICCMethod", "icc", "icc_from_matrix", "icc_mixed",
           "forms_from_mean_squares", "ICC_FORMS"]

ICC_FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")


@dataclass(frozen=True)
class ICCValue:
    """A form's value and F-based bounds; ``why_no_ci`` says why a value has no interval."""

    value: float
    low: float
    high: float
    why_no_ci: str = ""


# Why a form with a value has no F-based interval. With no error variance the F ratio is
# infinite: R psych::ICC and pingouin then print NaN for most forms and [1, 1] for ICC(1,k)
# and ICC(3,k) (1 - 1/inf), an artefact of the arithmetic; here no form gets an interval
# from it.
NO_CI_SAME_SCORES = Msg("every rater gave each item the same score (no variance within "
                        "items), so the F ratio is infinite and the F-based CI is undefined")
NO_CI_NO_RESIDUAL = Msg("the raters' scores differ only by a constant per rater (no residual "
                        "variance), so the F ratio is infinite and the F-based CI is undefined")
NO_CI_POLE = Msg("the single-rater interval reaches −1/(k − 1) or below, where the mean of k "
                 "raters has no ICC, so ICC(2,k) has no interval")
NO_CI_OTHER = Msg("the F-based CI is undefined on these ratings")


ICCMethod = Literal["anova", "reml"]


@dataclass(frozen=True)
class ICCResult:
    """The six forms, the estimator used and the table it was computed on."""

    forms: dict[str, ICCValue]
    method: ICCMethod
    n_items: int
    n_raters: int
    n_ratings: int
    components: VarianceComponents | None = None


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
    return forms_from_mean_squares(bms, wms, jms, ems, n, k, ci)


def icc_mixed(x: np.ndarray, ci: float = 0.95) -> tuple[dict[str, ICCValue],
                                                          VarianceComponents]:
    """The six forms for an **incomplete** targets × raters matrix (``nan`` = not rated), from
    REML variance components of crossed targets and raters, as R's ``psych::ICC`` computes
    them through lme4 (psych 2.2.9, ``lmer = TRUE``).

    With components ``s_t^2`` (targets), ``s_r^2`` (raters) and ``s_e^2`` (residual) of an
    n × k matrix, the mean squares are ``BMS = k s_t^2 + s_e^2``, ``JMS = n s_r^2 + s_e^2``,
    ``WMS = s_r^2 + s_e^2`` and ``EMS = s_e^2`` (their expectations in a complete two-way
    design), and the formulas and F-based bounds of the complete case follow with n and k.
    The bounds are therefore psych's approximations: they treat the table as complete.
    """
    rows, cols = np.nonzero(~np.isnan(x))
    vc = crossed_components(rows, cols, x[rows, cols])
    n, k = x.shape
    e = vc.residual
    out = forms_from_mean_squares(k * vc.item + e, vc.rater + e, n * vc.rater + e, e, n, k, ci)
    return out, vc


def forms_from_mean_squares(bms: float, wms: float, jms: float, ems: float, n: int, k: int,
                            ci: float = 0.95) -> dict[str, ICCValue]:
    """Shrout & Fleiss (1979) forms and McGraw & Wong (1996) F-based bounds from mean squares
    of an n targets × k raters design."""
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
    # a negative denominator is a negative variance of the k raters' mean: no ICC(2,k) (R psych
    # and pingouin print values above 1 or below the floor there)
    den2k = bms + (jms - ems) / n
    icc2k = nan if den2k < 0 else div(bms - ems, den2k)
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

    pole = -1 / (k - 1)
    past_pole: list[float] = []

    def mean_of_k(r: float) -> float:
        # Spearman-Brown, increasing only above its pole at -1/(k-1): a bound at or below it
        # has no image (psych and pingouin print a lower bound above the upper one there)
        if r <= pole:
            past_pole.append(r)
            return nan
        return safe(lambda: r * k / (1 + r * (k - 1)))

    out["ICC2k"] = ICCValue(icc2k, mean_of_k(lb2), mean_of_k(ub2))

    # a form without a value has no interval either (its F bounds would be numbers about
    # nothing, e.g. 1 - 1/F for an F of ~0); a value with one bound or none has no interval,
    # and says why
    why = NO_CI_SAME_SCORES if wms == 0 else NO_CI_NO_RESIDUAL if ems == 0 else NO_CI_OTHER
    whys = {"ICC2k": NO_CI_POLE} if past_pole else {}
    return {f: ICCValue(nan, nan, nan) if not np.isfinite(out[f].value) else
            out[f] if np.isfinite(out[f].low) and np.isfinite(out[f].high) else
            ICCValue(out[f].value, nan, nan, whys.get(f, why))
            for f in ICC_FORMS}


def icc(r: Ratings, ci: float = 0.95) -> ICCResult | None:
    """ICCs of one dimension's ratings; None when fewer than 2 items × 2 raters are rated.

    A complete items × raters table gets the two-way ANOVA forms (``method = "anova"``). With
    missing ratings, every rating is used: the variance components of crossed items and raters
    are fitted by REML (``method = "reml"``, see :func:`icc_mixed`), which is what R's
    ``psych::ICC`` does; no item or rater is dropped.
    """
    m = r.matrix
    present = ~np.isnan(m)
    m = m[present.any(axis=1)][:, present.any(axis=0)]
    if m.shape[0] < 2 or m.shape[1] < 2:
        return None
    n_ratings = int(np.count_nonzero(~np.isnan(m)))
    if not np.isnan(m).any():
        return ICCResult(icc_from_matrix(m, ci), "anova", m.shape[0], m.shape[1], n_ratings)
    if np.sum(np.sum(~np.isnan(m), axis=1) >= 2) < 2:
        return None
    forms, vc = icc_mixed(m, ci)
    return ICCResult(forms, "reml", m.shape[0], m.shape[1], n_ratings, vc)
