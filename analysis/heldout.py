"""Held-out calibration of a judge: the scenario split, choosing among judge configurations on
the dev part, and the one look at the test part (`h2h calibrate auto`).

**Split by scenario.** The replies to one scenario share its conversation, so an item-level
split would show the judge, as an exemplar, the very context it is then tested on. The
scenarios are split into train, dev and test (half, a quarter and a quarter of each task
family's scenarios, seeded), and every item follows its scenario.

**The metric** is the verdict's: QWK of the judge against the leave-one-out consensus of the
humans, pooled over (human, item) pairs exactly as the human ceiling is
(:mod:`analysis.ceiling`), per dimension; a configuration's summary is the mean of its
dimensions' QWKs. Every configuration compared is scored on the same items (those all of them
scored, per dimension) and with one set of item resamples - an item is drawn with all its
dimensions - so every difference is a **paired** bootstrap (percentile CIs; B and the seed
are recorded).

**Selection** on dev: the configuration with the highest mean QWK (ties: the cheaper one);
each candidate's paired difference from the base and from the selected one on dev comes with
its CI, so a reader sees whether dev could tell them apart. Dev numbers are in-sample for the
selection (the winner of many is flattered): the result is the **test** comparison, made once,
of the selected configuration against the base on items neither the exemplars nor the
selection saw - per dimension with Holm-adjusted p-values (Holm 1979) and on the mean.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .calibration import holm
from .ceiling import common_items, pair_sums, qwk_from_sums
from .layout import Ratings
from .options import AnalysisOptions
from .resample import item_weights, percentile_ci, two_sided_p
from .serialize import Record, finite

__all__ = ["FRACTIONS", "MIN_SCENARIOS", "split_scenarios", "QwkCI", "Difference",
           "DimensionQwk", "PartScores", "PartComparison", "compare_on_part", "select",
           "HeldOutDimension", "HeldOut", "held_out", "aligned"]

FRACTIONS = (0.5, 0.25, 0.25)
"""Shares of each task family's scenarios in train, dev and test."""
MIN_SCENARIOS = 30
"""The fewest scenarios with items rated by two or more humans that a split needs: fewer
leave a test part of a handful of scenarios, whose CI says nothing."""


def split_scenarios(tasks: Mapping[str, str], seed: int,
                    fractions: tuple[float, float, float] = FRACTIONS) -> dict[str, str]:
    """Each scenario's part (``train``, ``dev`` or ``test``), by task family: a family's
    scenarios (``tasks``: scenario -> family) in a seeded random order, the first quarter to
    test, the next quarter to dev, the rest to train (rounded; with three or more scenarios in
    a family, each part gets at least one).

    >>> parts = split_scenarios({f"s{i}": "dialogue" for i in range(8)}, seed=1)
    >>> sorted(parts.values()).count("train"), sorted(parts.values()).count("test")
    (4, 2)
    """
    rng = random.Random(seed)
    by_task: dict[str, list[str]] = {}
    for scenario, task in sorted(tasks.items()):
        by_task.setdefault(task, []).append(scenario)
    out: dict[str, str] = {}
    for task in sorted(by_task):
        group = by_task[task]
        rng.shuffle(group)
        n = len(group)
        n_test = round(n * fractions[2])
        n_dev = round(n * fractions[1])
        if n >= 3:
            n_test, n_dev = max(1, n_test), max(1, n_dev)
        for i, scenario in enumerate(group):
            out[scenario] = "test" if i < n_test else "dev" if i < n_test + n_dev else "train"
    return out


@dataclass(frozen=True)
class QwkCI(Record):
    """A QWK and its percentile CI."""

    qwk: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Difference(Record):
    """A paired difference (a − b) with its percentile CI and bootstrap p-value; ``p_holm``
    once adjusted across dimensions."""

    diff: float | None
    low: float | None = None
    high: float | None = None
    p: float | None = None
    p_holm: float | None = None

    _omit_none = frozenset({"p_holm"})


@dataclass(frozen=True)
class DimensionQwk(Record):
    """One configuration on one dimension of a part: QWK, the human ceiling on the same items,
    and their paired difference."""

    n_items: int
    qwk: QwkCI
    ceiling: float | None
    vs_ceiling: Difference


@dataclass(frozen=True)
class PartScores(Record):
    """One configuration on a part: the mean QWK over the dimensions with its CI, and each
    dimension's."""

    n_items: int
    mean_qwk: QwkCI
    dimensions: Mapping[str, DimensionQwk]


def _ci(boot: np.ndarray, ci: float) -> tuple[float | None, float | None]:
    return percentile_ci(boot, ci) if boot.size else (None, None)


class PartComparison:
    """Several configurations on one part (its items: the scores given are NaN elsewhere),
    with one set of item resamples shared by all of them and by every dimension.

    ``humans`` holds each dimension's items × humans matrix (all the study's human-rated
    items: the humans left out of the ceiling for too few shared items are chosen on all of
    them, as everywhere); ``runs`` each configuration's per-item scores per dimension, aligned
    to that matrix's items. A dimension is compared on the items every run scored."""

    def __init__(self, humans: Mapping[str, Ratings], runs: Mapping[str, Mapping[str,
                                                                              np.ndarray]],
                 options: AnalysisOptions = AnalysisOptions()):
        self.options = options
        self.names = list(runs)
        index: dict[object, int] = {}
        self._sums: dict[str, dict[str, np.ndarray]] = {n: {} for n in runs}
        self._ceiling: dict[str, np.ndarray] = {}
        self._items: dict[str, int] = {}
        rows_of: dict[str, np.ndarray] = {}
        for dim, h in humans.items():
            got = [np.asarray(runs[n].get(dim, np.full(h.n_items, np.nan)), float)
                   for n in runs]
            if not got:
                continue
            items = common_items(h.matrix, got, min_shared_items=options.min_shared_items)
            pairs = items.pairs
            if pairs.n_items < 2:
                continue
            used = np.unique(pairs.item)
            for i in used:
                index.setdefault(h.items[i], len(index))
            rows_of[dim] = np.array([index[h.items[i]] for i in used])
            self._items[dim] = int(used.size)
            self._ceiling[dim] = pair_sums(pairs, pairs.x, h.n_items)[used]
            for n, scores in zip(runs, got, strict=True):
                self._sums[n][dim] = pair_sums(pairs, scores[pairs.item], h.n_items)[used]
        self.dims = [d for d in humans if d in self._items]
        self.item_ids = list(index)
        n = len(index)
        self._w = item_weights(n, options.B, options.seed) if options.B > 0 and n >= 2 \
            else np.zeros((0, n))
        self._rows = rows_of
        self._memo: dict[str, dict[str, np.ndarray]] = {}

    def _spread(self, dim: str, sums: np.ndarray) -> np.ndarray:
        """Per-item sums of ``dim`` placed on the part's item index (zeros elsewhere)."""
        out = np.zeros((len(self.item_ids), sums.shape[1]))
        out[self._rows[dim]] = sums
        return out

    def _boot(self, sums: np.ndarray, dim: str) -> np.ndarray:
        return qwk_from_sums(self._w @ self._spread(dim, sums)) if self._w.size else \
            np.zeros(0)

    def _point(self, sums: np.ndarray) -> float | None:
        return finite(qwk_from_sums(sums.sum(axis=0)))

    def boots(self, name: str) -> dict[str, np.ndarray]:
        """Per dimension the run's QWK in every resample; ``"mean"`` their mean."""
        if name not in self._memo:
            out = {d: self._boot(self._sums[name][d], d) for d in self.dims}
            out["mean"] = np.mean([out[d] for d in self.dims], axis=0) if self.dims else \
                np.zeros(0)
            self._memo[name] = out
        return self._memo[name]

    def scores(self, name: str) -> PartScores:
        ci = self.options.ci
        b = self.boots(name)
        dims: dict[str, DimensionQwk] = {}
        points = []
        for d in self.dims:
            q = self._point(self._sums[name][d])
            c = self._point(self._ceiling[d])
            points.append(q)
            diff = b[d] - self._boot(self._ceiling[d], d) if self._w.size else np.zeros(0)
            dims[d] = DimensionQwk(self._items[d], QwkCI(q, *_ci(b[d], ci)), c, Difference(
                None if q is None or c is None else q - c, *_ci(diff, ci),
                two_sided_p(diff) if diff.size else None))
        mean = None if not points or any(p is None for p in points) else \
            float(np.mean(points))
        return PartScores(len(self.item_ids), QwkCI(mean, *_ci(b["mean"], ci)), dims)

    def difference(self, a: str, b: str, dim: str = "mean") -> Difference:
        """``a`` − ``b`` on the mean QWK (or one dimension), paired."""
        sa, sb = self.scores(a), self.scores(b)
        if dim == "mean":
            va, vb = sa.mean_qwk.qwk, sb.mean_qwk.qwk
        else:
            va, vb = sa.dimensions[dim].qwk.qwk, sb.dimensions[dim].qwk.qwk
        diff = self.boots(a)[dim] - self.boots(b)[dim]
        return Difference(None if va is None or vb is None else va - vb,
                          *_ci(diff, self.options.ci), two_sided_p(diff) if diff.size else None)


def compare_on_part(humans: Mapping[str, Ratings], runs: Mapping[str, Mapping[str, np.ndarray]],
                    options: AnalysisOptions = AnalysisOptions()) -> PartComparison:
    """Every configuration of ``runs`` on one part, paired (:class:`PartComparison`)."""
    return PartComparison(humans, runs, options)


def select(comparison: PartComparison, cost: Mapping[str, float]) -> str | None:
    """The configuration with the highest mean QWK on the part; on a tie the one that costs
    least (``cost``: e.g. calls per item), then the first. None when no mean is estimable."""
    means = {n: comparison.scores(n).mean_qwk.qwk for n in comparison.names}
    ok = [n for n in comparison.names if means[n] is not None]
    if not ok:
        return None
    return min(ok, key=lambda n: (-round(means[n], 12), cost.get(n, 0.0),
                                  comparison.names.index(n)))


@dataclass(frozen=True)
class HeldOutDimension(Record):
    """Base and selected on one dimension of the test part."""

    n_items: int
    base: QwkCI
    selected: QwkCI
    delta: Difference


@dataclass(frozen=True)
class HeldOut(Record):
    """The selected configuration against the base on the test part, once: the mean QWK over
    the dimensions (``base``, ``selected``, their paired difference ``delta``) on
    ``n_items`` items, each dimension's with Holm-adjusted p-values, B and the seed."""

    n_items: int
    base: QwkCI
    selected: QwkCI
    delta: Difference
    dimensions: Mapping[str, HeldOutDimension]
    B: int
    seed: int


def held_out(humans: Mapping[str, Ratings], base: Mapping[str, np.ndarray],
             selected: Mapping[str, np.ndarray],
             options: AnalysisOptions = AnalysisOptions()) -> HeldOut:
    """The test comparison (:class:`HeldOut`) of two configurations' scores on the test part
    (NaN elsewhere), paired, Holm across dimensions.

    The selected configuration may be the base itself (no candidate beat it on dev): the
    difference is then exactly 0."""
    cmp = PartComparison(humans, {"base": base, "selected": selected}, options)
    sb, ss = cmp.scores("base"), cmp.scores("selected")
    raw = {d: cmp.difference("selected", "base", d) for d in cmp.dims}
    adjusted = holm([raw[d].p for d in cmp.dims])
    dims = {d: HeldOutDimension(sb.dimensions[d].n_items, sb.dimensions[d].qwk,
                             ss.dimensions[d].qwk, Difference(
                                 raw[d].diff, raw[d].low, raw[d].high, raw[d].p, p_holm))
            for d, p_holm in zip(cmp.dims, adjusted, strict=True)}
    return HeldOut(len(cmp.item_ids), sb.mean_qwk, ss.mean_qwk,
                   cmp.difference("selected", "base"), dims, options.B, options.seed)


def aligned(values: Mapping[object, float], items: Sequence[object]) -> np.ndarray:
    """Per-item values aligned to ``items`` (NaN where none)."""
    return np.array([values.get(i, np.nan) for i in items], float)
