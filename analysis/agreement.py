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
from .serialize import clean, finite

if TYPE_CHECKING:
    from .scales import Scale

__all__ = ["human_block", "LEVELS"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _empty(res: dict, opt: AnalysisOptions) -> dict:
    res["alpha"] = {lv: None for lv in LEVELS}
    res["alpha_ci"] = {"method": opt.ci_method, "level": opt.ci, "low": None, "high": None,
                       "B": opt.B, "seed": opt.seed, "q_below_min": None,
                       "alpha_min": opt.alpha_min, "on": res["level"]}
    res["fleiss_kappa"] = None
    res["cohen_kappa"] = {k: None for k in ("unweighted", "linear", "quadratic")}
    res["icc"] = {f: None for f in ICC_FORMS}
    res["gwet"] = {"ac1": None, "ac2_linear": None, "ac2_quadratic": None}
    res["brennan_prediger"] = None
    # the same keys as an estimated block, so readers of the JSON need no special case
    res["cohen_pairs"] = None
    res["icc_table"] = None
    res.setdefault("percent_exact", None)
    res.setdefault("percent_within1", None)
    res.setdefault("raters", {})
    return res


def human_block(sub: pd.DataFrame, sc: Scale, opt: AnalysisOptions) -> dict[str, Any]:
    """The agreement block of one dimension from its long ratings (item, rater, score)."""
    notes: list[str] = []
    vals = sc.values
    scored = sub.dropna(subset=["score"])
    res: dict[str, Any] = {
        "level": sc.level, "scale": list(vals),
        "n_items": int(scored["item"].nunique()), "n_raters": int(scored["rater"].nunique()),
        "n_ratings": int(len(scored)), "n_cannot_rate": int(sub["score"].isna().sum()),
        "n_items_pairable": 0, "status": "ok", "not_estimable": None}
    if sc.labels:
        res["labels"] = list(sc.labels)
    if res["n_cannot_rate"]:
        notes.append(Msg("{n} 'cannot rate' entries are left out", n=res["n_cannot_rate"]))
    if res["n_ratings"] == 0:
        res["status"] = Msg("no ratings")
        res["not_estimable"] = Msg("no ratings")
        notes.append(Msg("no ratings"))
        return {**_empty(res, opt), "notes": notes}
    r = as_ratings(scored)
    per_item = np.sum(~np.isnan(r.matrix), axis=1)
    res["n_items_pairable"] = int(np.sum(per_item >= 2))
    observed = np.unique(r.matrix[~np.isnan(r.matrix)])
    if r.n_raters < 2:
        reason = Msg("fewer than 2 raters: agreement cannot be computed")
    elif res["n_items_pairable"] < opt.min_units:
        reason = nMsg("only {n} item rated by two or more raters (minimum {minimum}): alpha, "
                      "kappa, AC1/AC2 and ICC are not estimable",
                      "only {n} items rated by two or more raters (minimum {minimum}): alpha, "
                      "kappa, AC1/AC2 and ICC are not estimable", res["n_items_pairable"],
                      minimum=opt.min_units)
    else:
        reason = None
    counts = counts_matrix(r.matrix, vals)
    if res["n_items_pairable"]:
        exact, within = percent_agreement(r, vals)
        res["percent_exact"], res["percent_within1"] = finite(exact), finite(within)
    diag = rater_diagnostics(r, sc.level, vals)
    res["raters"] = {k: vars(v) for k, v in diag.items()}
    if reason:
        res["status"] = Msg("not estimable")
        res["not_estimable"] = reason
        notes.append(reason)
        out = _empty(res, opt)
        out = clean(out, notes)
        out["notes"] = notes
        return out
    constant = observed.size == 1
    one_value_scale = len(vals) < 2
    if constant:
        res["status"] = Msg("no variance")
        res["not_estimable"] = Msg(
            "every rating is {value:g}: alpha, kappa and ICC are undefined (no variance); "
            "{rest}", value=observed[0],
            rest=Msg("percent agreement is 1 (AC1 and Brennan–Prediger need a scale of two or "
                     "more values: declare it)") if one_value_scale else
            Msg("percent agreement, AC1 and Brennan–Prediger are 1"))
        notes.append(res["not_estimable"])
        _empty(res, opt)
    else:
        _coefficients(res, r, sc, opt, notes)
    if not one_value_scale:
        un, lin, quad = (multi_rater(counts, kind, vals) for kind in ("unweighted", "linear",
                                                                      "quadratic"))
        res["gwet"] = {"ac1": un.gwet, "ac2_linear": lin.gwet, "ac2_quadratic": quad.gwet}
        res["brennan_prediger"] = un.brennan_prediger
    if sc.binary:
        b = binary_checks(r)
        res["binary"] = {"prevalence": b.prevalence, "raters": b.raters}
    out = clean(res, notes)
    out["notes"] = notes
    return out


def _coefficients(res: dict, r, sc: Scale, opt: AnalysisOptions, notes: list[str]) -> None:
    vals = sc.values
    levels_ok = LEVELS if sc.level != "nominal" else ("nominal",)
    res["alpha"] = {}
    for lv in LEVELS:
        if lv not in levels_ok:
            res["alpha"][lv] = None
            continue
        if lv == "ratio" and min(vals) < 0:
            res["alpha"][lv] = None
            notes.append(Msg("alpha.ratio: needs a scale without negative values"))
            continue
        res["alpha"][lv] = alpha(r, lv, vals)
    if sc.level == "nominal":
        notes.append(Msg("alpha: only the nominal level is meaningful for a nominal scale"))
    res["alpha_ci"] = {"method": opt.ci_method, "level": opt.ci, "low": None, "high": None,
                       "B": opt.B, "seed": opt.seed, "q_below_min": None}
    if opt.B > 0:
        res["alpha_ci"] = alpha_bootstrap(r, sc.level, B=opt.B, seed=opt.seed, ci=opt.ci,
                                          alpha_min=opt.alpha_min, method=opt.ci_method,
                                          values=vals).as_dict()
    res["alpha_ci"]["alpha_min"] = opt.alpha_min
    res["alpha_ci"]["on"] = sc.level
    counts = counts_matrix(r.matrix, vals)
    res["fleiss_kappa"] = multi_rater(counts, "unweighted").fleiss_kappa
    ck = {kind: pairwise_cohen(r, vals, kind, opt.min_shared_items, on="value")
          for kind in ("unweighted", "linear", "quadratic")}
    q = ck["quadratic"]
    # no pair counted (the same pairs for every weighting): the note below says why, once
    res["cohen_kappa"] = {k: v.value if q.pairs_used else None for k, v in ck.items()}
    res["cohen_pairs"] = {"weighting": "mean over rater pairs weighted by their shared items",
                          "used": q.pairs_used, "too_few_items": q.pairs_too_few,
                          "undefined": {k: v.pairs_undefined for k, v in ck.items()},
                          "min_items": q.min_items, "shared_items": q.items}
    notes.append(_cohen_note(ck, r.n_raters))
    res["icc_table"] = None  # the key of an estimated ICC, present (empty) when there is none
    if sc.level == "nominal":
        res["icc"] = {f: None for f in ICC_FORMS}
        notes.append(Msg("icc: not meaningful for a nominal scale"))
        return
    ir = icc(r, opt.ci)
    if ir is None:
        res["icc"] = {f: None for f in ICC_FORMS}
        notes.append(Msg("icc: needs at least 2 items rated by 2 or more raters"))
        return
    res["icc"] = {k: {"value": v.value, "low": v.low, "high": v.high,
                      "why_no_ci": v.why_no_ci or None} for k, v in ir.forms.items()}
    res["icc_table"] = {"method": ir.method, "n_items": ir.n_items, "n_raters": ir.n_raters,
                        "n_ratings": ir.n_ratings}
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
