"""The whole agreement analysis as one JSON-able dict, from long-format frames.

This is the black-box interface that ``h2h analyze``, scripts and the report use. Input frames:
``ratings`` with columns ``item_id, rater, dimension, score`` (score NaN = cannot rate) and
optionally ``judges`` with ``item_id, judge, dimension, score[, sample]``. ``scales`` gives
each dimension's measurement level and full scale. Every value that cannot be computed is
``None`` with a note saying why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import pandas as pd

from .alpha import CIMethod, Level, alpha, alpha_bootstrap
from .alttest import Scoring
from .chance import multi_rater, pairwise_cohen, percent_agreement
from .icc import icc
from .judge import aggregate_samples, human_ceiling, judge_metrics
from .layout import as_ratings, counts_matrix
from .raters import binary_checks, rater_diagnostics, retest_agreement

__all__ = ["Scale", "AnalysisOptions", "analyze", "infer_scales"]

LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Scale:
    """A dimension's measurement level and its full declared scale (every possible value)."""

    level: Level
    values: tuple[float, ...]
    binary: bool = False


@dataclass(frozen=True)
class AnalysisOptions:
    B: int = 1000
    seed: int = 0
    alpha_min: float = 0.667
    ci: float = 0.95
    ci_method: CIMethod = "unit"
    alt_epsilon: float = 0.2
    alt_scoring: Scoring | None = None


def infer_scales(ratings: pd.DataFrame, level: Level = "ordinal") -> tuple[dict[str, Scale],
                                                                        list[str]]:
    """Scales for a plain CSV without a rubric: the integers from the observed min to max."""
    scales: dict[str, Scale] = {}
    notes: list[str] = []
    for dim, g in ratings.groupby("dimension"):
        s = pd.to_numeric(g["score"], errors="coerce").dropna()
        if s.empty:
            continue
        lo, hi = float(s.min()), float(s.max())
        if (s == s.round()).all():
            vals = tuple(float(v) for v in range(int(lo), int(hi) + 1))
            notes.append(f"{dim}: no rubric given; scale taken as {int(lo)}..{int(hi)} "
                         "(observed range); pass --scale to declare the full scale")
        else:
            vals = tuple(sorted(float(v) for v in s.unique()))
        scales[str(dim)] = Scale(level, vals, binary=vals == (0.0, 1.0))
    return scales, notes


def _pkg_versions() -> dict[str, str]:
    out = {}
    for p in ("h2htalk", "numpy", "scipy", "pandas", "krippendorff"):
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "unknown"
    return out


def _long(df: pd.DataFrame, who: str) -> pd.DataFrame:
    return df.rename(columns={"item_id": "item", who: "rater"})


def analyze(ratings: pd.DataFrame, scales: Mapping[str, Scale], *,
            judges: pd.DataFrame | None = None, options: AnalysisOptions = AnalysisOptions(),
            context: Mapping[str, Any] | None = None,
            repeats: tuple[pd.DataFrame, pd.DataFrame] | None = None) -> dict[str, Any]:
    """Human–human agreement per dimension, judge–human agreement per judge and dimension,
    and the human ceiling, in the layout documented in ``docs/analysis.md``."""
    ratings = ratings.copy()
    ratings["score"] = pd.to_numeric(ratings["score"], errors="coerce")
    out: dict[str, Any] = {
        "meta": {"bootstrap": {"method": options.ci_method, "B": options.B,
                               "seed": options.seed, "level": options.ci,
                               "alpha_min": options.alpha_min},
                 "alt_test": {"epsilon": options.alt_epsilon,
                              "scoring": options.alt_scoring or "by level"},
                 "packages": _pkg_versions(), **(dict(context) if context else {})},
        "dimensions": {}, "judges": {}, "human_ceiling": {}}
    human_mats = {}
    for dim in sorted(ratings["dimension"].astype(str).unique(), key=_dim_order(scales)):
        if dim not in scales:
            out["dimensions"][dim] = {"notes": [f"{dim}: no scale known; skipped"]}
            continue
        sub = _long(ratings[ratings["dimension"].astype(str) == dim], "rater")
        r = as_ratings(sub.dropna(subset=["score"]))
        human_mats[dim] = (r, sub)
        out["dimensions"][dim] = _human_block(r, sub, scales[dim], options)
        if repeats is not None and not repeats[1].empty:
            out["dimensions"][dim]["retest"] = _retest_block(repeats, dim, scales[dim])
        ceiling, notes = human_ceiling(r, scales[dim].values)
        out["human_ceiling"][dim] = _clean(ceiling, notes, "human_ceiling")
        out["human_ceiling"][dim]["notes"] = notes
    if judges is not None and not judges.empty:
        judges = judges.copy()
        judges["score"] = pd.to_numeric(judges["score"], errors="coerce")
        for jname, jg in judges.groupby(judges["judge"].astype(str)):
            block: dict[str, Any] = {}
            for dim, dg in jg.groupby(jg["dimension"].astype(str)):
                if dim not in human_mats:
                    block[dim] = {"notes": [f"{dim}: no human ratings to compare with"]}
                    continue
                r, _ = human_mats[dim]
                sc = scales[dim]
                js = dg.rename(columns={"item_id": "item"})
                per_item, samples = aggregate_samples(js, sc.level, r.items)
                jm = judge_metrics(r, per_item, sc.level, sc.values, samples=samples,
                                   alt_epsilon=options.alt_epsilon,
                                   alt_scoring=options.alt_scoring)
                res = dict(jm.metrics)
                res["alt_test"] = jm.alt.as_dict() if jm.alt else None
                res["confusion"] = jm.confusion
                n_unscored = int(js["score"].isna().sum())
                res["n_unscored"] = n_unscored
                if n_unscored:
                    jm.notes.append(f"{n_unscored} judgments are unscored and left out")
                block[dim] = _clean(res, jm.notes, f"judges.{jname}.{dim}")
                block[dim]["notes"] = jm.notes
            out["judges"][jname] = block
    return out


def _retest_block(repeats: tuple[pd.DataFrame, pd.DataFrame], dim: str, sc: Scale) -> dict:
    """Raters against themselves on hidden repeats of the same item."""
    first, second = (_long(f[f["dimension"].astype(str) == dim], "rater") for f in repeats)
    res = retest_agreement(first, second, sc.level, sc.values)
    notes: list[str] = []
    block = _clean({"n_pairs": res.n_pairs, "exact": res.exact, "within1": res.within1,
                    "alpha": res.alpha, "qwk": res.qwk, "raters": res.per_rater}, notes,
                   "retest")
    if res.n_pairs == 0:
        notes.append("retest: no repeated item was rated twice on this dimension")
    block["notes"] = notes
    return block


def _dim_order(scales: Mapping[str, Scale]):
    keys = list(scales)
    return lambda d: (keys.index(d) if d in keys else len(keys), d)


def _human_block(r, sub: pd.DataFrame, sc: Scale, opt: AnalysisOptions) -> dict[str, Any]:
    notes: list[str] = []
    vals = sc.values
    res: dict[str, Any] = {
        "level": sc.level, "scale": list(vals),
        "n_items": int(sub["item"].nunique()), "n_raters": int(sub["rater"].nunique()),
        "n_ratings": int(sub["score"].notna().sum()),
        "n_cannot_rate": int(sub["score"].isna().sum()),
    }
    if res["n_cannot_rate"]:
        notes.append(f"{res['n_cannot_rate']} 'cannot rate' entries are left out")
    if r.n_raters < 2:
        notes.append("fewer than 2 raters: agreement cannot be computed")
    levels_ok = LEVELS if sc.level != "nominal" else ("nominal",)
    res["alpha"] = {}
    for lv in LEVELS:
        if lv not in levels_ok:
            res["alpha"][lv] = None
            notes.append(f"alpha.{lv}: not meaningful for a nominal scale")
            continue
        if lv == "ratio" and min(vals) < 0:
            res["alpha"][lv] = None
            notes.append("alpha.ratio: needs a scale without negative values")
            continue
        res["alpha"][lv] = alpha(r, lv, vals) if r.n_raters >= 2 else None
    ci = alpha_bootstrap(r, sc.level, B=opt.B, seed=opt.seed, ci=opt.ci,
                         alpha_min=opt.alpha_min, method=opt.ci_method, values=vals) \
        if r.n_raters >= 2 else None
    res["alpha_ci"] = ci.as_dict() if ci else {
        "method": opt.ci_method, "level": opt.ci, "low": None, "high": None, "B": opt.B,
        "seed": opt.seed, "q_below_min": None}
    res["alpha_ci"]["alpha_min"] = opt.alpha_min
    res["alpha_ci"]["on"] = sc.level
    counts = counts_matrix(r.matrix, vals)
    un = multi_rater(counts, "unweighted")
    lin = multi_rater(counts, "linear")
    quad = multi_rater(counts, "quadratic")
    res["fleiss_kappa"] = un.fleiss_kappa
    ck = {}
    for kind in ("unweighted", "linear", "quadratic"):
        ck[kind], n_pairs = pairwise_cohen(r, vals, kind)
    res["cohen_kappa"] = ck
    if r.n_raters > 2:
        notes.append(f"cohen_kappa: mean over {n_pairs} rater pairs with ≥ 2 common items")
    if sc.level == "nominal":
        res["icc"] = {f: None for f in ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")}
        notes.append("icc: not meaningful for a nominal scale")
    else:
        ir = icc(r, opt.ci)
        if ir is None:
            res["icc"] = {f: None for f in ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")}
            notes.append("icc: needs at least 2 items rated by 2 or more raters")
        else:
            res["icc"] = {k: {"value": v.value, "low": v.low, "high": v.high}
                          for k, v in ir.forms.items()}
            res["icc_table"] = {"method": ir.method, "n_items": ir.n_items,
                                "n_raters": ir.n_raters, "n_ratings": ir.n_ratings}
            how = ("two-way ANOVA on the complete table" if ir.method == "anova" else
                   "linear mixed model (crossed random items and raters, REML, as R "
                   "psych::ICC with lme4) because ratings are missing")
            notes.append(f"icc: {how}; {ir.n_items} items × {ir.n_raters} raters, "
                         f"{ir.n_ratings} ratings")
    res["gwet"] = {"ac1": un.gwet, "ac2_linear": lin.gwet, "ac2_quadratic": quad.gwet}
    res["brennan_prediger"] = un.brennan_prediger
    exact, within = percent_agreement(r, vals)
    res["percent_exact"], res["percent_within1"] = exact, within
    diag = rater_diagnostics(r, sc.level, vals)
    res["raters"] = {k: vars(v) for k, v in diag.items()}
    if sc.binary:
        b = binary_checks(r)
        res["binary"] = {"prevalence": b.prevalence, "raters": b.raters}
    out = _clean(res, notes, "")
    out["notes"] = notes
    return out


def _clean(obj: Any, notes: list[str], path: str) -> Any:
    """Replace NaN/inf by None, adding a note for each value that could not be computed."""
    if isinstance(obj, dict):
        return {k: _clean(v, notes, f"{path}.{k}" if path else str(k)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v, notes, path) for v in obj]
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        if math.isfinite(f):
            return f
        notes.append(f"{path}: could not be computed (no variance or too few paired ratings)")
        return None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def scales_from_rubric(dimensions: Sequence) -> dict[str, Scale]:
    """Scales from rubric dimensions (objects with key, level, values, kind)."""
    return {d.key: Scale(d.level, tuple(float(v) for v in d.values), binary=d.kind == "binary")
            for d in dimensions}
