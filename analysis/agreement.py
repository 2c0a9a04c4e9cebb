"""Human–human agreement on one dimension: every coefficient, or why it is not estimable.

A coefficient is reported only when it means something:

* no ratings at all: the dimension says "no ratings";
* fewer than 2 raters, or fewer than ``min_units`` items rated by two or more raters (default
  5): alpha, kappa, Gwet's AC1/AC2, Brennan–Prediger and ICC are not estimable, with that
  reason, stated once;
* every rating the same value: percent agreement is 1, Gwet's AC1/AC2 and Brennan–Prediger
  are 1 (their chance agreement stays below 1), while alpha, kappa and ICC are undefined (no
  variance: observed and expected disagreement are both 0), stated once.

Weighted coefficients (Cohen's and Fleiss' kappa, AC2) weight by the distance between score
values, and "within one" means within one scale unit, so uneven or non-integer scales are
measured in their own units.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from messages import Msg, join_msgs, nMsg

from .alpha import alpha, alpha_bootstrap
from .chance import multi_rater, pairwise_cohen, percent_agreement
from .icc import ICC_FORMS, icc
from .layout import as_ratings, counts_matrix
from .options import AnalysisOptions
from .raters import binary_checks, rater_diagnostics
from .results import (
    AlphaInterval,
    CohenKappa,
    CohenPairs,
    Gwet,
    HumanAgreement,
    IccForm,
    IccTable,
)
from .serialize import finite, settle

if TYPE_CHECKING:
    from .scales import Scale

__all__ = ["human_block", "LEVELS"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _not_estimated(sc: Scale, opt: AnalysisOptions) -> dict[str, Any]:
    """The coefficients of a block that has none: every key there, each None (so that
    readers of the JSON need no special case)."""
    return {"alpha": {lv: None for lv in LEVELS},
            "alpha_ci": AlphaInterval(opt.ci_method, opt.ci, None, None, opt.B, opt.seed, None,
                                      opt.alpha_min, sc.level),
            "fleiss_kappa": None, "cohen_kappa": CohenKappa(), "cohen_pairs": None,
            "icc_table": None, "icc": {f: None for f in ICC_FORMS}, "gwet": Gwet(),
            "brennan_prediger": None}


def human_block(sub: pd.DataFrame, sc: Scale, opt: AnalysisOptions) -> HumanAgreement:
    """The agreement block of one dimension from its long ratings (item, rater, score)."""
    notes: list[str] = []
    vals = sc.values
    scored = sub.dropna(subset=["score"])
    head: dict[str, Any] = {
        "level": sc.level, "scale": tuple(vals), "labels": tuple(sc.labels) if sc.labels
        else None, "n_items": int(scored["item"].nunique()),
        "n_raters": int(scored["rater"].nunique()), "n_ratings": int(len(scored)),
        "n_cannot_rate": int(sub["score"].isna().sum()), "n_items_pairable": 0}
    if head["n_cannot_rate"]:
        notes.append(Msg("{n} 'cannot rate' entries are left out", n=head["n_cannot_rate"]))
    if head["n_ratings"] == 0:
        notes.append(Msg("no ratings"))
        return HumanAgreement(**head, status=Msg("no ratings"), not_estimable=Msg("no ratings"),
                              **_not_estimated(sc, opt), notes=tuple(notes))
    r = as_ratings(scored)
    per_item = np.sum(~np.isnan(r.matrix), axis=1)
    head["n_items_pairable"] = pairable = int(np.sum(per_item >= 2))
    observed = np.unique(r.matrix[~np.isnan(r.matrix)])
    if pairable:
        exact, within = percent_agreement(r, vals)
        head["percent_exact"], head["percent_within1"] = finite(exact), finite(within)
    diag = rater_diagnostics(r, sc.level, vals)
    head["raters"] = diag
    reason = _too_few(r.n_raters, pairable, opt)
    if reason:
        notes.append(reason)
        block = HumanAgreement(**head, status=Msg("not estimable"), not_estimable=reason,
                               **_not_estimated(sc, opt), notes=())
        return _settled(block, notes)
    one_value_scale = len(vals) < 2
    if observed.size == 1:
        why = Msg("every rating is {value:g}: alpha, kappa and ICC are undefined (no variance); "
                  "{rest}", value=observed[0],
                  rest=Msg("percent agreement is 1 (AC1 and Brennan–Prediger need a scale of "
                           "two or more values: declare it)") if one_value_scale else
                  Msg("percent agreement, AC1 and Brennan–Prediger are 1"))
        notes.append(why)
        head.update(status=Msg("no variance"), not_estimable=why, **_not_estimated(sc, opt))
    else:
        head.update(status="ok", not_estimable=None, **_coefficients(r, sc, opt, notes))
    if not one_value_scale:
        counts = counts_matrix(r.matrix, vals)
        un, lin, quad = (multi_rater(counts, kind, vals) for kind in ("unweighted", "linear",
                                                                      "quadratic"))
        head["gwet"] = Gwet(un.gwet, lin.gwet, quad.gwet)
        head["brennan_prediger"] = un.brennan_prediger
    if sc.binary:
        head["binary"] = binary_checks(r)
    return _settled(HumanAgreement(**head, notes=()), notes)


def _settled(block: HumanAgreement, notes: list[str]) -> HumanAgreement:
    """The block without NaN (a note names what turned out undefined) and with its notes."""
    block = settle(block, notes)
    return replace(block, notes=tuple(notes))


def _too_few(n_raters: int, pairable: int, opt: AnalysisOptions) -> str | None:
    if n_raters < 2:
        return Msg("fewer than 2 raters: agreement cannot be computed")
    if pairable < opt.min_units:
        return nMsg("only {n} item rated by two or more raters (minimum {minimum}): alpha, "
                    "kappa, AC1/AC2 and ICC are not estimable",
                    "only {n} items rated by two or more raters (minimum {minimum}): alpha, "
                    "kappa, AC1/AC2 and ICC are not estimable", pairable, minimum=opt.min_units)
    return None


def _coefficients(r, sc: Scale, opt: AnalysisOptions, notes: list[str]) -> dict[str, Any]:
    vals = sc.values
    out: dict[str, Any] = {"alpha": _alphas(r, sc, notes)}
    if opt.B > 0:
        ci = alpha_bootstrap(r, sc.level, B=opt.B, seed=opt.seed, ci=opt.ci,
                             alpha_min=opt.alpha_min, method=opt.ci_method, values=vals)
        out["alpha_ci"] = AlphaInterval(ci.method, ci.level, ci.low, ci.high, ci.B, ci.seed,
                                        ci.q_below_min, opt.alpha_min, sc.level)
    else:
        out["alpha_ci"] = AlphaInterval(opt.ci_method, opt.ci, None, None, opt.B, opt.seed,
                                        None, opt.alpha_min, sc.level)
    counts = counts_matrix(r.matrix, vals)
    out["fleiss_kappa"] = multi_rater(counts, "unweighted").fleiss_kappa
    ck = {kind: pairwise_cohen(r, vals, kind, opt.min_shared_items, on="value")
          for kind in ("unweighted", "linear", "quadratic")}
    q = ck["quadratic"]
    # no pair counted (the same pairs for every weighting): the note below says why, once
    out["cohen_kappa"] = CohenKappa(**{k: v.value if q.pairs_used else None
                                       for k, v in ck.items()})
    out["cohen_pairs"] = CohenPairs("mean over rater pairs weighted by their shared items",
                                    q.pairs_used, q.pairs_too_few,
                                    {k: v.pairs_undefined for k, v in ck.items()},
                                    q.min_items, q.items)
    notes.append(_cohen_note(ck, r.n_raters))
    out["icc_table"] = None  # the key of an estimated ICC, present (empty) when there is none
    out["icc"] = _icc(r, sc, opt, out, notes)
    return out


def _alphas(r, sc: Scale, notes: list[str]) -> dict[str, float | None]:
    vals = sc.values
    levels_ok = LEVELS if sc.level != "nominal" else ("nominal",)
    out: dict[str, float | None] = {}
    for lv in LEVELS:
        if lv not in levels_ok:
            out[lv] = None
        elif lv == "ratio" and min(vals) < 0:
            out[lv] = None
            notes.append(Msg("alpha.ratio: needs a scale without negative values"))
        else:
            out[lv] = alpha(r, lv, vals)
    if sc.level == "nominal":
        notes.append(Msg("alpha: only the nominal level is meaningful for a nominal scale"))
    return out


def _icc(r, sc: Scale, opt: AnalysisOptions, out: dict[str, Any], notes: list[str]
         ) -> dict[str, IccForm | None]:
    """The six ICC forms (``out["icc_table"]`` gets the estimator's table), or why not."""
    if sc.level == "nominal":
        notes.append(Msg("icc: not meaningful for a nominal scale"))
        return {f: None for f in ICC_FORMS}
    ir = icc(r, opt.ci)
    if ir is None:
        notes.append(Msg("icc: needs at least 2 items rated by 2 or more raters"))
        return {f: None for f in ICC_FORMS}
    out["icc_table"] = IccTable(ir.method, ir.n_items, ir.n_raters, ir.n_ratings)
    how = (Msg("two-way ANOVA on the complete table") if ir.method == "anova" else
           Msg("linear mixed model (crossed random items and raters, REML, as R psych::ICC with "
               "lme4) because ratings are missing"))
    notes.append(Msg("icc: {how}; {n_items} items × {n_raters} raters, {n_ratings} ratings",
                     how=how, n_items=ir.n_items, n_raters=ir.n_raters,
                     n_ratings=ir.n_ratings))
    no_ci: dict[str, list[str]] = {}
    for f, v in ir.forms.items():
        if v.why_no_ci:
            no_ci.setdefault(v.why_no_ci, []).append(f)
    for why, forms in no_ci.items():
        notes.append(Msg("icc: no CI for {forms}: {why}", forms=", ".join(forms), why=why))
    return {k: IccForm(v.value, v.low, v.high, v.why_no_ci or None)
            for k, v in ir.forms.items()}


_WEIGHTS = {"unweighted": Msg("unweighted"), "linear": Msg("linear"),
            "quadratic": Msg("quadratic")}


def _cohen_note(ck: dict, n_raters: int) -> str:
    q = ck["quadratic"]
    if q.pairs_used == 0:
        parts = [Msg("cohen_kappa: not estimable, no rater pair has a defined kappa on at "
                     "least {n} shared items", n=q.min_items)]
    elif n_raters == 2:
        parts = [Msg("cohen_kappa: the two raters' kappa on their {n} shared items", n=q.items)]
    else:
        parts = [Msg("cohen_kappa: mean over {pairs} rater pairs weighted by their shared items "
                     "({n} in all)", pairs=q.pairs_used, n=q.items)]
    if q.pairs_too_few:
        parts.append(Msg("{pairs} pairs sharing fewer than {n} items left out",
                         pairs=q.pairs_too_few, n=q.min_items))
    undefined = {k: v.pairs_undefined for k, v in ck.items() if v.pairs_undefined}
    if undefined:
        pairs = [Msg("{n} pairs ({weights})", n=n, weights=_WEIGHTS.get(k, k))
                 for k, n in undefined.items()]
        parts.append(Msg("kappa undefined (no variance on the shared items) for {pairs}",
                         pairs=join_msgs(", ", pairs)))
    return join_msgs("; ", parts)
