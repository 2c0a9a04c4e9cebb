"""The records of the metrics comparison (:mod:`.compare`, :mod:`.system`): the ``metrics``
block of ``h2h analyze --json`` and of ``h2h calibrate --json``, field order = key order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..serialize import Interval, Record, settle

__all__ = ["SystemRow", "SystemAgreement", "MetricRow", "MetricDimension", "MetricComparison"]


@dataclass(frozen=True)
class SystemRow(Record):
    """One judge's or metric's ranking of the companion models against the humans'."""

    model_means: Mapping[str, float]
    pairs_ordered_by_humans: int
    kendall_tau_b: Interval
    pairwise_accuracy: Interval


@dataclass(frozen=True)
class SystemAgreement(Record):
    """Model rankings of every row against the humans' (:func:`.system.system_agreement`)."""

    n_models: int
    n_scenarios: int
    n_items: int
    unit: str
    resampled: str
    B: int
    seed: int
    min_models: int
    notes: tuple[str, ...]
    rows: Mapping[str, SystemRow]
    human_means: Mapping[str, float]
    kinds: Mapping[str, str] | None = None

    _omit_none = frozenset({"kinds"})


_STATS = ("pearson", "spearman", "kendall_tau_b")


@dataclass(frozen=True)
class MetricRow(Record):
    """The human ceiling, a judge or a metric against the leave-one-out consensus: Pearson,
    Spearman and Kendall's τ-b with CIs; for judges and metrics also minus the ceiling's.
    ``qwk`` is None for a metric, always (its scores are not on the rubric's scale)."""

    name: str
    kind: str
    status: str
    pearson: Interval
    spearman: Interval
    kendall_tau_b: Interval
    minus_ceiling: Mapping[str, Interval] | None = None

    _omit_none = frozenset({"minus_ceiling"})

    @property
    def qwk(self) -> None:
        return None

    def json_keys(self) -> list[str]:
        return ["name", "kind", "status", *_STATS,
                *(("qwk",) if self.kind == "metric" else ()), "minus_ceiling"]


@dataclass(frozen=True)
class MetricDimension(Record):
    """Every judge and metric against the humans on one dimension, on the items all of them
    scored (``n_items``, ``n_pairs`` (human, item) pairs, ``n_humans``)."""

    status: str
    n_items: int
    n_pairs: int
    B: int
    seed: int
    level: float
    rows: tuple[MetricRow, ...]
    notes: tuple[str, ...]
    system: SystemAgreement | None = None
    n_humans: int | None = None

    _omit_none = frozenset({"n_humans"})

    def row(self, name: str, kind: str) -> MetricRow | None:
        return next((r for r in self.rows if (r.name, r.kind) == (name, kind)), None)

    @property
    def ceiling(self) -> MetricRow | None:
        return next((r for r in self.rows if r.kind == "ceiling"), None)


@dataclass(frozen=True)
class MetricComparison(Record):
    """The metrics comparison of every dimension, with the metric configurations compared
    (their stored settings: library, version, tokenizer, hash, languages scored)."""

    design: str
    kappa: str
    dimensions: Mapping[str, MetricDimension]
    notes: tuple[str, ...]
    configurations: tuple[Mapping[str, Any], ...] = ()

    def settled(self) -> MetricComparison:
        """Without NaN anywhere; a note says which parts turned out undefined."""
        notes = list(self.notes)
        res = settle(self, notes)
        return replace(res, notes=tuple(notes))
