"""The whole agreement analysis as one JSON-able dict, from long-format frames.

This is the black-box interface that ``h2h analyze``, scripts and the report use. Input frames:
``ratings`` with columns ``item_id, rater, dimension, score`` (score NaN = cannot rate),
optionally ``judges`` with ``item_id, judge, dimension, score[, sample]``, and optionally
``metrics`` with ``item_id, metric, score`` (reference-based metrics, continuous) and ``items``
with ``item_id, model, scenario`` for their system-level comparison. Scores may be numbers or,
on a scale of labels, the labels. ``scales`` gives each dimension's measurement level and
full scale. Every value that cannot be computed is ``None`` with a note saying why, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pandas as pd

from .agreement import human_block
from .ceiling import human_ceiling
from .judge import aggregate_samples, judge_metrics
from .layout import as_ratings
from .options import AnalysisOptions
from .raters import retest_agreement
from .scales import Scale, encode_scores, infer_scales, label_of
from .serialize import clean

__all__ = ["Scale", "AnalysisOptions", "analyze", "infer_scales", "scales_from_rubric"]

CEILING_DESIGN = ("pooled leave-one-out: each human's rating against the mean of the other "
                  "humans' ratings of the same item, over all (human, item) pairs")


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


def _meta(options: AnalysisOptions, context: Mapping[str, Any] | None) -> dict:
    boot = {"method": options.ci_method, "B": options.B, "seed": options.seed,
            "level": options.ci, "alpha_min": options.alpha_min}
    if options.B == 0:
        boot["note"] = "bootstrap skipped (B = 0): point estimates only, no CIs and no verdicts"
    return {"bootstrap": boot,
            "alt_test": {"epsilon": options.alt_epsilon,
                         "scoring": options.alt_scoring or "by level"},
            "verdict": {"margin": options.margin, "metric": "qwk",
                        "rule": "can replace: alternative annotator test passed and the "
                                "paired CI of QWK(judge) - QWK(ceiling) above -margin; cannot "
                                "replace: CI below -margin; otherwise not enough evidence"},
            "minimums": {"items_rated_by_2_plus": options.min_units,
                         "shared_items": options.min_shared_items},
            "human_ceiling": CEILING_DESIGN,
            "packages": _pkg_versions(), **(dict(context) if context else {})}


def analyze(ratings: pd.DataFrame, scales: Mapping[str, Scale], *,
            judges: pd.DataFrame | None = None, options: AnalysisOptions = AnalysisOptions(),
            context: Mapping[str, Any] | None = None,
            repeats: tuple[pd.DataFrame, pd.DataFrame] | None = None,
            metrics: pd.DataFrame | None = None, items: pd.DataFrame | None = None,
            metric_configs: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Human–human agreement per dimension, judge–human agreement per judge and dimension,
    the human ceiling and the verdicts, in the layout documented in ``docs/analysis.md``;
    with ``metrics``, each metric beside the judges and the human ceiling (``metrics`` key,
    :func:`analysis.refmetrics.compare.metric_comparison`).

    Raises ``ValueError`` when a human rating is not on its dimension's scale; a judge score
    that is not on the scale is left out as unscored and named in that judge's notes.
    """
    ratings, off = encode_scores(ratings, scales)
    if off:
        o = off[0]
        row = ratings.loc[o.index]
        raise ValueError(f"rating of item {row['item_id']!r} by {row['rater']!r} on "
                         f"{o.dimension}: {o.problem} ({len(off)} such ratings)")
    out: dict[str, Any] = {"meta": _meta(options, context), "dimensions": {}, "judges": {},
                           "human_ceiling": {}}
    dims = list(scales) + sorted(set(ratings["dimension"].astype(str)) - set(scales))
    human_mats = {}
    for dim in dims:
        if dim not in scales:
            out["dimensions"][dim] = {"notes": [f"{dim}: no scale known; skipped"]}
            continue
        sub = _long(ratings[ratings["dimension"].astype(str) == dim], "rater")
        sc = scales[dim]
        block = human_block(sub, sc, options)
        out["dimensions"][dim] = block
        if block["n_ratings"] == 0:
            out["human_ceiling"][dim] = {"status": "no ratings", "notes": ["no ratings"]}
            continue
        r = as_ratings(sub.dropna(subset=["score"]))
        human_mats[dim] = r
        if repeats is not None and not repeats[1].empty:
            block["retest"] = _retest_block(repeats, dim, sc)
        out["human_ceiling"][dim] = _ceiling_block(r, options)
    if judges is not None and not judges.empty:
        for jname, jg in judges.groupby(judges["judge"].astype(str)):
            out["judges"][jname] = _judge_blocks(jname, jg, scales, human_mats, options)
    if metrics is not None and not metrics.empty:
        out["metrics"] = _metrics_block(ratings, scales, metrics, judges, items,
                                        metric_configs, options)
    return out


def _metrics_block(ratings, scales, metrics, judges, items, configs, opt: AnalysisOptions
                   ) -> dict:
    """Reference-based metrics against the humans, beside the judges and the ceiling."""
    from .refmetrics.compare import metric_comparison

    enc = None
    if judges is not None and not judges.empty:
        enc, _ = encode_scores(judges, scales)  # off-scale scores are unscored, as above
    res = metric_comparison(ratings, scales, metrics, judges=enc, items=items, options=opt)
    res["configurations"] = [dict(c) for c in configs] if configs else [
        {"name": n} for n in sorted(metrics["metric"].astype(str).unique())]
    notes = res["notes"]
    block = clean(res, notes, "metrics")
    block["notes"] = notes
    return block


def _ceiling_block(r, opt: AnalysisOptions) -> dict:
    notes: list[str] = []
    c = human_ceiling(r.matrix, B=opt.B, seed=opt.seed, ci=opt.ci,
                      min_shared_items=opt.min_shared_items)
    c["design"] = CEILING_DESIGN
    c["left_out"] = [str(r.raters[j]) for j in c["left_out"]]
    if c["left_out"]:
        notes.append(f"human ceiling: {', '.join(c['left_out'])} left out (fewer than "
                     f"{opt.min_shared_items} items rated together with another human)")
    if c["n_items"] < opt.min_units:
        notes.append(f"human ceiling: not estimable, only {c['n_items']} items rated by two or "
                     f"more humans (minimum {opt.min_units})")
        c = {k: (None if k not in ("n_items", "n_pairs", "n_humans", "design", "left_out")
                 else v) for k, v in c.items()}
        c["qwk_ci"] = {"low": None, "high": None}
        c["mae_ci"] = {"low": None, "high": None}
    block = clean(c, notes, "human_ceiling")
    block["notes"] = notes
    return block


def _judge_blocks(jname: str, jg: pd.DataFrame, scales: Mapping[str, Scale], human_mats,
                  opt: AnalysisOptions) -> dict:
    block: dict[str, Any] = {}
    enc, off = encode_scores(jg, scales)
    for dim, dg in enc.groupby(enc["dimension"].astype(str)):
        if dim not in human_mats:
            block[dim] = {"status": "no human ratings",
                          "notes": [f"{dim}: no human ratings to compare with"]}
            continue
        r = human_mats[dim]
        sc = scales[dim]
        js = dg.rename(columns={"item_id": "item"})
        per_item, samples = aggregate_samples(js, sc.level, r.items)
        jm = judge_metrics(r, per_item, sc.level, sc.values, samples=samples, options=opt)
        res = dict(jm.metrics)
        res["alt_test"] = jm.alt.as_dict() if jm.alt else None
        res["confusion"] = _labelled(jm.confusion, sc)
        res["vs_ceiling"] = jm.comparison.as_dict() if jm.comparison else None
        res["verdict"] = jm.verdict.as_dict() if jm.verdict else None
        res["n_judgments"] = int(len(js))
        res["n_unscored"] = int(js["score"].isna().sum())
        if res["n_items"] == 0 and not jm.metrics.get("n_scored_items"):
            res["status"] = "no scored judgments"
        dim_off = [o for o in off if o.dimension == dim]
        notes = [_off_note(jname, jg, o) for o in dim_off[:10]]
        if len(dim_off) > 10:
            notes.append(f"… and {len(dim_off) - 10} more scores not on the scale")
        if res["n_unscored"]:
            notes.append(f"{res['n_unscored']} of {res['n_judgments']} judgments are unscored "
                         + ("(including the scores not on the scale) " if dim_off else "")
                         + "and left out")
        notes += jm.notes
        block[dim] = clean(res, notes, f"judges.{jname}.{dim}")
        block[dim]["notes"] = notes
    return block


def _off_note(jname: str, jg: pd.DataFrame, o) -> str:
    return (f"judge {jname}, item {jg.loc[o.index, 'item_id']}: score {o.problem}; left out "
            "as unscored")


def _labelled(conf: dict | None, sc: Scale) -> dict | None:
    if conf is not None and sc.labels:
        conf = {**conf, "labels": [label_of(sc, v) for v in conf["values"]]}
    return conf


def _retest_block(repeats: tuple[pd.DataFrame, pd.DataFrame], dim: str, sc: Scale) -> dict:
    """Raters against themselves on hidden repeats of the same item."""
    first, second = (_long(f[f["dimension"].astype(str) == dim], "rater") for f in repeats)
    res = retest_agreement(first, second, sc.level, sc.values)
    notes: list[str] = []
    block = clean({"n_pairs": res.n_pairs, "exact": res.exact, "within1": res.within1,
                   "alpha": res.alpha, "qwk": res.qwk, "raters": res.per_rater}, notes,
                  "retest")
    if res.n_pairs == 0:
        notes.append("retest: no repeated item was rated twice on this dimension")
    block["notes"] = notes
    return block


def scales_from_rubric(dimensions: Sequence) -> dict[str, Scale]:
    """Scales from rubric dimensions (objects with key, level, values, kind)."""
    return {d.key: Scale(d.level, tuple(float(v) for v in d.values), binary=d.kind == "binary")
            for d in dimensions}
