"""Which judge configuration can stand in for the human raters, dimension by dimension?

For each dimension, every configuration is scored on the same items with one set of item
bootstrap resamples (B, seed recorded): QWK and MAE against the leave-one-out consensus of the
humans, pooled over (human, item) pairs exactly as the human ceiling is (see
:mod:`analysis.ceiling`), and alpha with the judge added as one more rater, each with a
percentile CI. Because the resamples are shared, the difference between two configurations —
and between a configuration and the ceiling — is a **paired** bootstrap; the p-values between
configurations (twice the smaller tail) are Holm-corrected across dimensions for each pair and
metric. The alternative annotator test, leniency (mean bias), verbosity (Spearman correlation of
score with reply length, beside the humans' own), self-consistency across samples and the
unscored rate complete the picture. Each configuration's verdict comes from
:func:`analysis.verdict.replacement_verdict`, the one rule used everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from itertools import combinations

import numpy as np
from scipy import stats

from messages import Msg

from .alpha import Level, alpha_from_matrix
from .alttest import AltTestResult
from .ceiling import (
    CeilingComparison,
    ComparisonSet,
    common_items,
    mae_from_sums,
    pair_sums,
    pooled_metrics,
    qwk_from_sums,
)
from .judge_agreement import judge_metrics, lower_medians
from .layout import Ratings
from .options import AnalysisOptions
from .resample import item_weights, percentile_ci, two_sided_p, weighted_alpha
from .results import JudgeAgreement
from .serialize import Interval, Record
from .verdict import Verdict, replacement_verdict

__all__ = ["JudgeRun", "compare_dimension", "holm", "calibrate", "METRICS",
           "DimensionCalibration", "ConfigComparison", "CalibrationCeiling", "PairDifference",
           "BestConfiguration", "Verbosity", "Misses"]

METRICS = ("qwk", "alpha_with_judge", "mae")


@dataclass(frozen=True)
class JudgeRun:
    """One configuration's per-item scores on a dimension (aligned to the humans' items)."""

    scores: np.ndarray
    samples: np.ndarray | None = None
    n_unscored: int = 0
    n_judgments: int = 0


def holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm (1979) step-down adjusted p-values. Written here because scipy has no Holm
    adjustment (only FDR methods); ``None`` entries are passed through."""
    idx = [i for i, v in enumerate(p) if v is not None]
    out: list[float | None] = [None] * len(p)
    m = len(idx)
    running = 0.0
    for rank, i in enumerate(sorted(idx, key=lambda i: p[i])):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


@dataclass(frozen=True)
class Verbosity(Record):
    """Spearman's ρ of the score with the reply's length: the judge's, the humans' own."""

    judge: float | None
    humans: float | None


@dataclass(frozen=True)
class Misses(Record):
    """Items the humans put at the bottom of the scale (``of``) that the judge did not."""

    missed: int
    of: int
    what: str


_NO_SCORES_KEYS = ("status", "n_items", "qwk", "alpha_with_judge", "mae", "bias", "alt_test",
                   "vs_ceiling", "verdict", "self_consistency_alpha", "n_unscored",
                   "n_judgments", "unscored_rate")
_OK_KEYS = ("status", "n_items", "qwk", "alpha_with_judge", "mae", "bias", "alt_test",
            "vs_ceiling", "verdict", "verdict_n_items", "self_consistency_alpha",
            "unscored_rate", "n_unscored", "n_judgments", "verbosity", "misses")


@dataclass(frozen=True)
class ConfigComparison(Record):
    """One configuration on one dimension. QWK, α with the judge and MAE (with paired
    bootstrap CIs), bias, verbosity and misses are on the comparison's items (``n_items``,
    the items every configuration scored); the alternative annotator test, the comparison
    with the ceiling and the verdict on all the items the configuration scored
    (``verdict_n_items``), as in ``h2h analyze``."""

    status: str
    n_items: int
    qwk: Interval
    alpha_with_judge: Interval
    mae: Interval
    bias: float | None
    alt_test: AltTestResult | None
    vs_ceiling: CeilingComparison | None
    verdict: Verdict
    n_unscored: int
    n_judgments: int
    unscored_rate: float | None
    self_consistency_alpha: float | None = None
    verdict_n_items: int | None = None
    verbosity: Verbosity | None = None
    misses: Misses | None = None

    _omit_none = frozenset({"verbosity"})

    def json_keys(self) -> list[str]:
        return list(_OK_KEYS if self.status == "ok" else _NO_SCORES_KEYS)


@dataclass(frozen=True)
class CalibrationCeiling(Record):
    """The humans against the same consensus on the comparison's items: QWK with the CI of
    the same resamples, MAE, Spearman, exact agreement and α of the humans alone."""

    qwk: Interval
    mae: float | None = None
    spearman: float | None = None
    exact: float | None = None
    n_items: int | None = None
    n_pairs: int | None = None
    alpha_humans: float | None = None

    def json_keys(self) -> list[str]:
        if self.n_items is None:  # no item scored by every configuration
            return ["qwk"]
        return [f.name for f in fields(self)]


@dataclass(frozen=True)
class PairDifference(Record):
    """``a`` minus ``b`` on one metric, with its paired CI and bootstrap p-value; ``p_holm``
    once :func:`calibrate` has corrected it across dimensions."""

    a: str
    b: str
    metric: str
    diff: float | None
    low: float | None
    high: float | None
    p: float | None
    p_holm: float | None = None
    corrected: bool = False

    def json_keys(self) -> list[str]:
        return ["a", "b", "metric", "diff", "low", "high", "p",
                *(("p_holm",) if self.corrected else ())]


@dataclass(frozen=True)
class BestConfiguration(Record):
    """The dimension's summary: the best configuration (highest QWK, then α with the judge)
    and its verdict, in a sentence, with the caveats under it."""

    best: str | None
    outcome: str
    can_replace: bool | None
    text: str
    items_needed: int | None = None
    caveats: tuple[str, ...] = ()

    def json_keys(self) -> list[str]:
        keys = ["best", "outcome", "can_replace", "text", "items_needed", "caveats"]
        return keys if self.best is not None else [k for k in keys if k != "items_needed"]


@dataclass(frozen=True)
class DimensionCalibration(Record):
    """Every configuration on one dimension, on the ``n_items`` items all of them scored."""

    n_items: int
    B: int
    seed: int
    margin: float
    configs: Mapping[str, ConfigComparison]
    pairs: tuple[PairDifference, ...]
    notes: tuple[str, ...]
    human_ceiling: CalibrationCeiling
    verdict: BestConfiguration
    #: which items the comparison is on (not in the JSON); each configuration's verdict,
    #: alternative annotator test and comparison with the ceiling are on its own items
    items: str = ""

    def json_keys(self) -> list[str]:
        return [k for k in super().json_keys() if k != "items"]

    def pair(self, a: str, b: str, metric: str) -> PairDifference | None:
        return next((p for p in self.pairs if (p.a, p.b, p.metric) == (a, b, metric)), None)


def _misses(humans: Ratings, judge: np.ndarray, values: Sequence[float], binary: bool
            ) -> Misses:
    """Items the humans put at the bottom of the scale that the judge did not."""
    m = humans.matrix
    rated = np.sum(~np.isnan(m), axis=1) > 0
    med = np.full(m.shape[0], np.nan)
    med[rated] = lower_medians(m[rated])
    ok = rated & ~np.isnan(judge)
    if binary:
        flagged = ok & (med == max(values))
        missed = flagged & (judge != max(values))
        what = Msg("items the humans flagged")
    else:
        low = sorted(values)[1]
        flagged = ok & (med <= low)
        missed = flagged & (judge > low)
        what = Msg("items the humans scored {low:g} or lower", low=low)
    return Misses(int(missed.sum()), int(flagged.sum()), what)


def _no_scores(run: JudgeRun, margin: float, why: str = Msg("no scored judgments")
               ) -> ConfigComparison:
    v = replacement_verdict(None, None, margin=margin,
                            not_estimable=Msg("{why} on this dimension", why=why))
    none = Interval(None)
    return ConfigComparison(why, 0, none, none, none, None, None, None, v, run.n_unscored,
                            run.n_judgments, _rate(run))


def _rate(run: JudgeRun) -> float | None:
    return (run.n_unscored / run.n_judgments) if run.n_judgments else None


@dataclass(frozen=True)
class _Own:
    """What the comparison takes from a configuration's judge–human statistics (computed
    here, or ``h2h analyze``'s block on the same items)."""

    qwk: float | None
    mae: float | None
    bias: float | None
    self_consistency_alpha: float | None
    n_items: int
    n_scored_items: int
    alt_test: AltTestResult | None
    vs_ceiling: CeilingComparison | None
    verdict: Verdict

    @classmethod
    def of(cls, jm) -> _Own:
        m = jm.metrics
        return cls(m["qwk"], m["mae"], m["bias"], m["self_consistency_alpha"], m["n_items"],
                   m["n_scored_items"], jm.alt, jm.comparison, jm.verdict)


def compare_dimension(dim: str, humans: Ratings, runs: Mapping[str, JudgeRun], level: Level,
                      values: Sequence[float], *, lengths: np.ndarray | None = None,
                      binary: bool = False, options: AnalysisOptions = AnalysisOptions(),
                      known: Mapping[str, JudgeAgreement | None] | None = None
                      ) -> DimensionCalibration:
    """Every configuration on one dimension, on the items all of them scored.

    A configuration without any scored judgment on the dimension is listed as such (with its
    verdict "no verdict") and does not shrink the others' common items. ``known`` holds
    ``analyze``'s judge blocks for this dimension (``analysis.judge(name, dim)``, computed
    with the same options); a configuration whose scored items are exactly the common items
    takes its metrics, CIs, test and verdict from there instead of computing them again.
    """
    n_h = np.sum(~np.isnan(humans.matrix), axis=1)
    scored = {n: r for n, r in runs.items() if np.any(~np.isnan(r.scores) & (n_h > 0))}
    names = sorted(scored)
    items = common_items(humans.matrix, [r.scores for r in scored.values()],
                         min_shared_items=options.min_shared_items, basis="scored_by_all")
    common = items.rows
    notes: list[str] = []
    dropped = int(np.sum(n_h > 0) - common.sum())
    if dropped and names:
        notes.append(Msg("{n} human-rated items lack a score from some configuration and are "
                         "left out of the comparison", n=dropped))
    for n in sorted(set(runs) - set(scored)):
        notes.append(Msg("{name}: no scored judgments on {dim}", name=n, dim=dim))
    unscored = {n: _no_scores(runs[n], options.margin) for n in set(runs) - set(scored)}
    if names and not common.any():
        notes.append(Msg("the configurations share no scored item on this dimension; compare "
                         "them one at a time"))
        cfgs = {n: _no_scores(runs[n], options.margin,
                              Msg("no item scored by every configuration")) for n in names}
        configs = dict(sorted({**cfgs, **unscored}.items()))
        return DimensionCalibration(0, options.B, options.seed, options.margin, configs, (),
                                    tuple(notes), CalibrationCeiling(Interval(None)),
                                    _best_configuration(dim, configs), items.label)
    cmp = _Comparison(humans, items, level, values, options, bool(names))
    configs = dict(unscored)
    for name in names:
        configs[name] = cmp.config(name, runs[name], lengths, binary,
                                   (known or {}).get(name))
    configs = dict(sorted(configs.items()))
    pairs = cmp.pairs(names, configs)
    return DimensionCalibration(int(common.sum()), options.B, options.seed, options.margin,
                                configs, pairs, tuple(notes), cmp.ceiling(bool(names)),
                                _best_configuration(dim, configs), items.label)


class _Comparison:
    """The configurations of one dimension on their common items: one set of item
    resamples for all of them (paired), and the humans' own numbers on the same items."""

    def __init__(self, humans: Ratings, items: ComparisonSet, level: Level,
                 values: Sequence[float], options: AnalysisOptions, resample: bool):
        common = items.rows
        self.humans, self.common, self.level, self.values = humans, common, level, values
        self.options = options
        n = int(common.sum())
        self.sub = Ratings(humans.matrix[common],
                           tuple(np.array(humans.items, dtype=object)[common]), humans.raters)
        self.w = item_weights(n, options.B, options.seed) \
            if options.B > 0 and n >= 2 and resample else None
        # The same leave-one-out pairs as `h2h analyze` forms for one judge on these items
        # (the humans left out for too few items are chosen on all items), so with one
        # configuration the numbers and the verdict are those of `h2h analyze`.
        self.loo = items.pairs
        self.boots: dict[str, dict[str, np.ndarray]] = {}
        self.ceiling_ci: tuple[float | None, float | None] = (None, None)

    def _metrics(self, scores: np.ndarray, samples: np.ndarray | None) -> _Own:
        return _Own.of(judge_metrics(self.humans, scores, self.level, self.values,
                                     samples=samples, options=self.options))

    def config(self, name: str, run: JudgeRun, lengths: np.ndarray | None, binary: bool,
               known: JudgeAgreement | None) -> ConfigComparison:
        """The verdict is the configuration's own, on every human-rated item it scored (the
        same as `h2h analyze` gives it); the comparison with the other configurations is on
        the items all of them scored. One judge, one verdict, wherever it is shown."""
        common, n_h = self.common, np.sum(~np.isnan(self.humans.matrix), axis=1)
        js_full = np.where(common, run.scores, np.nan)
        js = run.scores[common]
        own_rows = ~np.isnan(run.scores) & (n_h > 0)
        own = _Own(known.qwk, known.mae, known.bias, known.self_consistency_alpha,
                   known.n_items, known.n_scored_items, known.alt_test, known.vs_ceiling,
                   known.verdict) \
            if known is not None and known.n_scored_items == int(own_rows.sum()) else \
            self._metrics(run.scores, run.samples)
        block = own if np.array_equal(own_rows, common) else self._metrics(
            js_full, None if run.samples is None else
            np.where(common[:, None], run.samples, np.nan))
        stats_ = self._boot(name, js_full, js)
        comparison = block.vs_ceiling
        qwk = Interval(block.qwk, *stats_["qwk"])
        if comparison is not None:  # the QWK CI is the one of the comparison with the ceiling
            qwk = Interval(block.qwk, comparison.judge.low, comparison.judge.high)
            self.ceiling_ci = (comparison.ceiling.low, comparison.ceiling.high)
        verbosity = None
        if lengths is not None and common.sum() >= 3:
            ln = lengths[common]
            verbosity = Verbosity(_spearman(js, ln), _spearman(self._human_means(), ln))
        return ConfigComparison(
            "ok", block.n_items, qwk,
            Interval(_alpha(np.column_stack([self.sub.matrix, js]), self.level, self.values),
                     *stats_["alpha_with_judge"]),
            Interval(block.mae, *stats_["mae"]), block.bias, own.alt_test, own.vs_ceiling,
            own.verdict, run.n_unscored, run.n_judgments, _rate(run),
            block.self_consistency_alpha, own.verdict.n_items or own.n_items, verbosity,
            _misses(self.sub, js, self.values, binary))

    def _human_means(self) -> np.ndarray:
        return np.nanmean(self.sub.matrix, axis=1) if self.sub.n_items else np.array([])

    def _boot(self, name: str, js_full: np.ndarray, js: np.ndarray
              ) -> dict[str, tuple[float | None, float | None]]:
        """Each metric's percentile CI from the shared resamples (none without them)."""
        if self.w is None:
            return dict.fromkeys(METRICS, (None, None))
        w, pairs = self.w, self.loo
        s_j = pair_sums(pairs, js_full[pairs.item], self.humans.n_items)[self.common]
        self.boots[name] = {"qwk": qwk_from_sums(w @ s_j), "mae": mae_from_sums(w @ s_j),
                            "alpha_with_judge": weighted_alpha(w, np.column_stack(
                                [self.sub.matrix, js]), self.level, self.values)}
        return {m: percentile_ci(self.boots[name][m], self.options.ci) for m in METRICS}

    def pairs(self, names: list[str], configs: Mapping[str, ConfigComparison]
              ) -> tuple[PairDifference, ...]:
        out = []
        for a, b in combinations(names, 2):
            if a not in self.boots or b not in self.boots:
                continue
            for metric in METRICS:
                diff = self.boots[a][metric] - self.boots[b][metric]
                va = getattr(configs[a], metric).value
                vb = getattr(configs[b], metric).value
                lo, hi = percentile_ci(diff, self.options.ci)
                out.append(PairDifference(a, b, metric,
                                          None if va is None or vb is None else va - vb,
                                          lo, hi, two_sided_p(diff)))
        return tuple(out)

    def ceiling(self, any_config: bool) -> CalibrationCeiling:
        c = pooled_metrics(self.loo)
        return CalibrationCeiling(Interval(c["qwk"], *self.ceiling_ci), c["mae"],
                                  c["spearman"], c["exact"], c["n_items"], c["n_pairs"],
                                  _alpha(self.sub.matrix, self.level, self.values)
                                  if any_config else None)


def _alpha(m: np.ndarray, level: Level, values: Sequence[float]) -> float | None:
    a = alpha_from_matrix(m, level, values)
    return float(a) if np.isfinite(a) else None


def _spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return None
    return float(stats.spearmanr(x[ok], y[ok]).statistic)


def _best_configuration(dim: str, configs: Mapping[str, ConfigComparison]
                        ) -> BestConfiguration:
    """The dimension's summary: the best configuration (highest QWK) and its verdict, which
    comes from :func:`analysis.verdict.replacement_verdict` like every other verdict."""
    cfgs = {n: c for n, c in configs.items() if c.status == "ok"}
    if not cfgs:
        return BestConfiguration(None, "not_estimable", None, Msg(
            "{dim}: no verdict — no configuration has scored judgments here.", dim=dim))

    def rank(n: str) -> tuple[float, float]:
        # highest QWK, ties broken by alpha with the judge; an undefined value ranks last (a
        # QWK of exactly 0 is a value, above any negative one)
        q, a = cfgs[n].qwk.value, cfgs[n].alpha_with_judge.value
        return (-math.inf if q is None else q, -math.inf if a is None else a)

    best = max(cfgs, key=rank)
    c = cfgs[best]
    v = c.verdict
    if len(cfgs) > 1 and c.verdict_n_items != c.n_items:
        # the comparison and the verdict rest on different items: say which is which
        text = Msg("{dim}: best configuration {best}, compared on the {n} items every "
                   "configuration scored; on all the items it scored, {verdict}", dim=dim,
                   best=best, n=c.n_items, verdict=v.text)
    else:
        text = Msg("{dim}: best configuration {best}; {verdict}", dim=dim, best=best,
                   verdict=v.text)
    can = {"can_replace": True, "cannot_replace": False}.get(v.outcome)
    return BestConfiguration(best, v.outcome, can, text, v.items_needed,
                             tuple(_caveats(dim, best, c)))


def _caveats(dim: str, best: str, c: ConfigComparison) -> list[str]:
    caveats = []
    mi = c.misses
    if mi is not None and mi.missed:  # "misses 0 of 18" is no caveat
        caveats.append(Msg("{dim}: {best} misses {missed} of {of} {what}", dim=dim, best=best,
                           missed=mi.missed, of=mi.of, what=mi.what))
    if c.bias is not None and abs(c.bias) >= 0.5:
        p = {"dim": dim, "best": best, "points": abs(c.bias)}
        caveats.append(Msg("{dim}: {best} is lenient by {points:.2f} points on average", **p)
                       if c.bias > 0 else
                       Msg("{dim}: {best} is harsh by {points:.2f} points on average", **p))
    vb = c.verbosity
    if vb is not None and vb.judge is not None and vb.humans is not None and \
            vb.judge - vb.humans > 0.2:
        caveats.append(Msg("{dim}: {best} rewards longer replies more than the humans do (ρ "
                           "with length {judge:.2f} vs {humans:.2f})", dim=dim, best=best,
                           judge=vb.judge, humans=vb.humans))
    return caveats


def calibrate(per_dim: Mapping[str, DimensionCalibration]) -> dict[str, DimensionCalibration]:
    """Each dimension's comparison with every (pair, metric) p-value Holm-corrected across
    dimensions (``p_holm``)."""
    families: dict[tuple, list[tuple[str, int]]] = {}
    for dim, res in per_dim.items():
        for i, pr in enumerate(res.pairs):
            families.setdefault((pr.a, pr.b, pr.metric), []).append((dim, i))
    adjusted: dict[tuple[str, int], float | None] = {}
    for members in families.values():
        adj = holm([per_dim[d].pairs[i].p for d, i in members])
        adjusted.update(zip(members, adj, strict=True))
    return {d: replace(res, pairs=tuple(replace(p, p_holm=adjusted[(d, i)], corrected=True)
                                        for i, p in enumerate(res.pairs)))
            for d, res in per_dim.items()}
