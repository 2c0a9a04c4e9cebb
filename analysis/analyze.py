"""The whole agreement analysis as one typed result, from long-format frames.

This is the black-box interface that ``h2h analyze``, scripts and the report use. Input frames:
``ratings`` with columns ``item_id, rater, dimension, score`` (score NaN = cannot rate),
optionally ``judges`` with ``item_id, judge, dimension, score[, sample]``, and optionally
``metrics`` with ``item_id, metric, score`` (reference-based metrics, continuous) and ``items``
with ``item_id, model, scenario`` for their system-level comparison. Scores may be numbers or,
on a scale of labels, the labels. ``scales`` gives each dimension's measurement level and
full scale. Every value that cannot be computed is ``None`` with a note saying why, once.
The result is a :class:`~analysis.results.StudyAnalysis`; ``to_json()`` gives the JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import pandas as pd

from messages import Msg

from .agreement import human_block
from .ceiling import human_ceiling
from .contamination import exemplar_note, held_against
from .judge_agreement import aggregate_samples, agreement_block, judge_metrics
from .layout import as_ratings
from .options import AnalysisOptions
from .raters import retest_agreement
from .refmetrics.results import MetricComparison
from .results import (
    POOLED,
    AltTestMeta,
    AnalysisMeta,
    BootstrapMeta,
    HumanAgreement,
    HumanCeiling,
    JudgeAgreement,
    Minimums,
    Retest,
    Skipped,
    StudyAnalysis,
    VerdictRule,
)
from .scales import Scale, encode_scores, infer_scales, label_of
from .serialize import Bounds, settle

__all__ = ["Scale", "AnalysisOptions", "StudyAnalysis", "analyze", "infer_scales",
           "scales_from_rubric"]

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


def _meta(options: AnalysisOptions, context: Mapping[str, Any] | None) -> AnalysisMeta:
    note = ("bootstrap skipped (B = 0): point estimates only, no CIs and no verdicts"
            if options.B == 0 else None)
    return AnalysisMeta(
        BootstrapMeta(options.ci_method, options.B, options.seed, options.ci, options.alpha_min,
                      note),
        AltTestMeta(options.alt_epsilon, options.alt_scoring or "by level"),
        VerdictRule(options.margin, "qwk",
                    "can replace: alternative annotator test passed and the paired CI of "
                    "QWK(judge) - QWK(ceiling) above -margin; cannot replace: CI below "
                    "-margin; otherwise not enough evidence"),
        Minimums(options.min_units, options.min_shared_items), CEILING_DESIGN,
        _pkg_versions(), dict(context) if context else {})


def analyze(ratings: pd.DataFrame, scales: Mapping[str, Scale], *,
            judges: pd.DataFrame | None = None, options: AnalysisOptions = AnalysisOptions(),
            context: Mapping[str, Any] | None = None,
            repeats: tuple[pd.DataFrame, pd.DataFrame] | None = None,
            metrics: pd.DataFrame | None = None, items: pd.DataFrame | None = None,
            metric_configs: Sequence[Mapping[str, Any]] | None = None) -> StudyAnalysis:
    """Human–human agreement per dimension, judge–human agreement per judge and dimension,
    the human ceiling and the verdicts (:class:`analysis.results.StudyAnalysis`; its
    ``to_json()`` is the layout documented in ``docs/analysis.md``); with ``metrics``, each
    metric beside the judges and the human ceiling (``metrics``,
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
    dimensions: dict[str, HumanAgreement | Skipped] = {}
    ceilings: dict[str, HumanCeiling | Skipped] = {}
    dims = list(scales) + sorted(set(ratings["dimension"].astype(str)) - set(scales))
    human_mats = {}
    for dim in dims:
        if dim not in scales:
            dimensions[dim] = Skipped(notes=(f"{dim}: no scale known; skipped",))
            continue
        sub = _long(ratings[ratings["dimension"].astype(str) == dim], "rater")
        sc = scales[dim]
        block = human_block(sub, sc, options)
        if block.n_ratings == 0:
            dimensions[dim] = block
            ceilings[dim] = Skipped("no ratings", ("no ratings",))
            continue
        r = as_ratings(sub.dropna(subset=["score"]))
        human_mats[dim] = r
        if repeats is not None and not repeats[1].empty:
            block = replace(block, retest=_retest_block(repeats, dim, sc))
        dimensions[dim] = block
        ceilings[dim] = _ceiling_block(r, options)
    judge_blocks: dict[str, dict[str, JudgeAgreement | Skipped]] = {}
    judges, exemplars = held_against(judges)
    if judges is not None and not judges.empty:
        for jname, jg in judges.groupby(judges["judge"].astype(str)):
            judge_blocks[jname] = _judge_blocks(jname, jg, scales, human_mats, options,
                                                exemplars)
    metric_block = None
    if metrics is not None and not metrics.empty:
        metric_block = _metrics_block(ratings, scales, metrics, judges, items, metric_configs,
                                      options)
    return StudyAnalysis(_meta(options, context), dimensions, judge_blocks, ceilings,
                         metric_block)


def _metrics_block(ratings, scales, metrics, judges, items, configs, opt: AnalysisOptions
                   ) -> MetricComparison:
    """Reference-based metrics against the humans, beside the judges and the ceiling."""
    from .refmetrics.compare import metric_comparison

    enc = None
    if judges is not None and not judges.empty:
        enc, _ = encode_scores(judges, scales)  # off-scale scores are unscored, as above
    res = metric_comparison(ratings, scales, metrics, judges=enc, items=items, options=opt)
    configurations = tuple(dict(c) for c in configs) if configs else tuple(
        {"name": n} for n in sorted(metrics["metric"].astype(str).unique()))
    return replace(res, configurations=configurations).settled()


def _ceiling_block(r, opt: AnalysisOptions) -> HumanCeiling:
    notes: list[str] = []
    c = human_ceiling(r.matrix, B=opt.B, seed=opt.seed, ci=opt.ci,
                      min_shared_items=opt.min_shared_items)
    left_out = tuple(str(r.raters[j]) for j in c["left_out"])
    if left_out:
        notes.append(f"human ceiling: {', '.join(left_out)} left out (fewer than "
                     f"{opt.min_shared_items} items rated together with another human)")
    keep = ("n_items", "n_pairs", "n_humans")
    by_two = int(np.sum(np.sum(~np.isnan(r.matrix), axis=1) >= 2))
    if c["n_items"] < opt.min_units:
        if by_two > c["n_items"]:  # the humans left out took the items away
            notes.append(f"human ceiling: not estimable, of the {by_two} items rated by two or "
                         f"more humans {c['n_items']} remain once the humans left out are "
                         f"(minimum {opt.min_units})")
        else:
            notes.append(f"human ceiling: not estimable, only {c['n_items']} items rated by two "
                         f"or more humans (minimum {opt.min_units})")
        c = {k: (v if k in keep else None) for k, v in c.items()}
        c["qwk_ci"] = c["mae_ci"] = {"low": None, "high": None}
    block = HumanCeiling(**{k: c[k] for k in (*POOLED, *keep)}, left_out=left_out,
                         qwk_ci=Bounds(**c["qwk_ci"]), mae_ci=Bounds(**c["mae_ci"]),
                         design=CEILING_DESIGN)
    block = settle(block, notes)
    return replace(block, notes=tuple(notes))


def _judge_blocks(jname: str, jg: pd.DataFrame, scales: Mapping[str, Scale], human_mats,
                  opt: AnalysisOptions, exemplars: Mapping[tuple[str, str], int]
                  ) -> dict[str, JudgeAgreement | Skipped]:
    block: dict[str, JudgeAgreement | Skipped] = {}
    enc, off = encode_scores(jg, scales)
    for dim, dg in enc.groupby(enc["dimension"].astype(str)):
        if dim not in human_mats:
            block[dim] = Skipped("no human ratings",
                                 (f"{dim}: no human ratings to compare with",))
            continue
        block[dim] = _judge_block(jname, jg, dg, scales[dim], human_mats[dim],
                                  [o for o in off if o.dimension == dim], opt,
                                  exemplars.get((jname, dim), 0))
    return block


def _judge_block(jname: str, jg: pd.DataFrame, dg: pd.DataFrame, sc: Scale, r, dim_off,
                 opt: AnalysisOptions, n_exemplars: int = 0) -> JudgeAgreement:
    js = dg.rename(columns={"item_id": "item"})
    per_item, samples = aggregate_samples(js, sc.level, r.items)
    jm = judge_metrics(r, per_item, sc.level, sc.values, samples=samples, options=opt)
    n_judgments, n_unscored = int(len(js)), int(js["score"].isna().sum())
    notes = [exemplar_note(n_exemplars)] if n_exemplars else []
    notes += [_off_note(jname, jg, o) for o in dim_off[:10]]
    if len(dim_off) > 10:
        notes.append(f"… and {len(dim_off) - 10} more scores not on the scale")
    if n_unscored:
        notes.append(Msg("{n} of {total} judgments are unscored (including the scores not "
                         "on the scale) and left out", n=n_unscored, total=n_judgments)
                     if dim_off else
                     Msg("{n} of {total} judgments are unscored and left out", n=n_unscored,
                         total=n_judgments))
    return agreement_block(jm, n_judgments=n_judgments, n_unscored=n_unscored, notes=notes,
                           label=(lambda v: label_of(sc, v)) if sc.labels else None)


def _off_note(jname: str, jg: pd.DataFrame, o) -> str:
    return (f"judge {jname}, item {jg.loc[o.index, 'item_id']}: score {o.problem}; left out "
            "as unscored")


def _retest_block(repeats: tuple[pd.DataFrame, pd.DataFrame], dim: str, sc: Scale) -> Retest:
    """Raters against themselves on hidden repeats of the same item."""
    first, second = (_long(f[f["dimension"].astype(str) == dim], "rater") for f in repeats)
    res = retest_agreement(first, second, sc.level, sc.values)
    notes: list[str] = []
    block = settle(Retest(res.n_pairs, res.exact, res.within1, res.alpha, res.qwk,
                          res.per_rater), notes)
    if res.n_pairs == 0:
        notes.append("retest: no repeated item was rated twice on this dimension")
    return replace(block, notes=tuple(notes))


def scales_from_rubric(dimensions: Sequence) -> dict[str, Scale]:
    """Scales from rubric dimensions (objects with key, level, values, kind)."""
    return {d.key: Scale(d.level, tuple(float(v) for v in d.values), binary=d.kind == "binary")
            for d in dimensions}
