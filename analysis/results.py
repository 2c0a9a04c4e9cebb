"""What :func:`analysis.analyze.analyze` returns: a :class:`StudyAnalysis` of frozen records.

Every page, table, report section and the JSON read the same attributes; ``to_json()`` writes
the layout documented in ``docs/analysis.md`` (each record's fields in order are its keys:
see :mod:`analysis.serialize`). A new kind of result is a new record and a new field here.

A block that cannot be computed at all (a dimension without a scale, a judge on a dimension
no human rated, a ceiling without ratings) is a :class:`Skipped` with its reason in ``notes``;
``isinstance(block, HumanAgreement)`` (and so on) tells the two apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .alttest import AltTestResult
from .ceiling import CeilingComparison
from .raters import BinaryChecks, RaterDiagnostics
from .refmetrics.results import MetricComparison
from .serialize import Bounds, Interval, Record
from .verdict import Verdict

__all__ = ["StudyAnalysis", "AnalysisMeta", "BootstrapMeta", "AltTestMeta", "VerdictRule",
           "Minimums", "HumanAgreement", "AlphaInterval", "CohenKappa", "CohenPairs",
           "IccForm", "IccTable", "Gwet", "Retest", "HumanCeiling", "JudgeAgreement",
           "BlandAltman", "Confusion", "SingleHuman", "Skipped"]


@dataclass(frozen=True)
class Skipped(Record):
    """A block with nothing computed, and why (``notes``)."""

    status: str | None = None
    notes: tuple[str, ...] = ()

    _omit_none = frozenset({"status"})


# --- meta -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BootstrapMeta(Record):
    method: str
    B: int
    seed: int
    level: float
    alpha_min: float
    note: str | None = None

    _omit_none = frozenset({"note"})


@dataclass(frozen=True)
class AltTestMeta(Record):
    epsilon: float
    scoring: str


@dataclass(frozen=True)
class VerdictRule(Record):
    margin: float
    metric: str
    rule: str


@dataclass(frozen=True)
class Minimums(Record):
    items_rated_by_2_plus: int
    shared_items: int


@dataclass(frozen=True)
class AnalysisMeta(Record):
    """How the analysis was computed; ``context`` (the study, its rubric, the simulated raters,
    the source files, notes on inferred scales) follows the other keys in the JSON."""

    bootstrap: BootstrapMeta
    alt_test: AltTestMeta
    verdict: VerdictRule
    minimums: Minimums
    human_ceiling: str
    packages: Mapping[str, str]
    context: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self, *, keep_nan: bool = False) -> dict[str, Any]:
        out = super().to_dict(keep_nan=keep_nan)
        out.update(out.pop("context"))
        return out

    @property
    def simulated_raters(self) -> list[str]:
        return list(self.context.get("simulated_raters", []))

    @property
    def scale_notes(self) -> list[str]:
        return list(self.context.get("scale_notes", []))


# --- human agreement --------------------------------------------------------------------------

@dataclass(frozen=True)
class AlphaInterval(Record):
    """The bootstrap CI of Krippendorff's α at the dimension's level (``on``); ``q_below_min``
    the share of resamples below ``alpha_min``."""

    method: str
    level: float
    low: float | None
    high: float | None
    B: int
    seed: int
    q_below_min: float | None
    alpha_min: float
    on: str


@dataclass(frozen=True)
class CohenKappa(Record):
    unweighted: float | None = None
    linear: float | None = None
    quadratic: float | None = None


@dataclass(frozen=True)
class CohenPairs(Record):
    """Which rater pairs the weighted mean of Cohen's κ rests on."""

    weighting: str
    used: int
    too_few_items: int
    undefined: Mapping[str, int]
    min_items: int
    shared_items: int


@dataclass(frozen=True)
class IccForm(Record):
    value: float | None
    low: float | None
    high: float | None
    why_no_ci: str | None


@dataclass(frozen=True)
class IccTable(Record):
    method: str
    n_items: int
    n_raters: int
    n_ratings: int


@dataclass(frozen=True)
class Gwet(Record):
    ac1: float | None = None
    ac2_linear: float | None = None
    ac2_quadratic: float | None = None


@dataclass(frozen=True)
class Retest(Record):
    """Raters against themselves on hidden repeats of an item."""

    n_pairs: int
    exact: float | None
    within1: float | None
    alpha: float | None
    qwk: float | None
    raters: Mapping[str, Mapping[str, Any]]
    notes: tuple[str, ...] = ()


_HEAD = ("level", "scale", "n_items", "n_raters", "n_ratings", "n_cannot_rate",
         "n_items_pairable", "status", "not_estimable", "labels")
_NOT_ESTIMATED = ("alpha", "alpha_ci", "fleiss_kappa", "cohen_kappa", "icc", "gwet",
                  "brennan_prediger", "cohen_pairs", "icc_table")
_ESTIMATED = ("alpha", "alpha_ci", "fleiss_kappa", "cohen_kappa", "cohen_pairs", "icc_table",
              "icc", "gwet", "brennan_prediger")
_PERCENT = ("percent_exact", "percent_within1")


@dataclass(frozen=True)
class HumanAgreement(Record):
    """Human–human agreement on one dimension (:func:`analysis.agreement.human_block`):
    ``status`` "ok", "no ratings", "not estimable" or "no variance", with the reason in
    ``not_estimable``; a coefficient that is not estimable is None."""

    level: str
    scale: tuple[float, ...]
    n_items: int
    n_raters: int
    n_ratings: int
    n_cannot_rate: int
    n_items_pairable: int
    status: str
    not_estimable: str | None
    labels: tuple[str, ...] | None = None
    percent_exact: float | None = None
    percent_within1: float | None = None
    raters: Mapping[str, RaterDiagnostics] = field(default_factory=dict)
    alpha: Mapping[str, float | None] = field(default_factory=dict)
    alpha_ci: AlphaInterval | None = None
    fleiss_kappa: float | None = None
    cohen_kappa: CohenKappa = CohenKappa()
    cohen_pairs: CohenPairs | None = None
    icc_table: IccTable | None = None
    icc: Mapping[str, IccForm | None] = field(default_factory=dict)
    gwet: Gwet = Gwet()
    brennan_prediger: float | None = None
    binary: BinaryChecks | None = None
    notes: tuple[str, ...] = ()
    retest: Retest | None = None

    _omit_none = frozenset({"labels", "binary", "retest"})

    @property
    def alpha_at_level(self) -> float | None:
        """Krippendorff's α at the dimension's own level of measurement."""
        return self.alpha.get(self.level)

    def json_keys(self) -> list[str]:
        # the order each way of computing the block has always written its keys in
        if self.status == "no ratings":
            body = _NOT_ESTIMATED + _PERCENT + ("raters",)
        elif self.status == "not estimable":
            pct = _PERCENT if self.n_items_pairable else ()
            body = pct + ("raters",) + _NOT_ESTIMATED + (() if pct else _PERCENT)
        elif self.status == "no variance":
            body = _PERCENT + ("raters",) + _NOT_ESTIMATED + ("binary",)
        else:
            body = _PERCENT + ("raters",) + _ESTIMATED + ("binary",)
        return [*_HEAD, *body, "notes", "retest"]


# --- the human ceiling ------------------------------------------------------------------------

POOLED = ("qwk", "linear_kappa", "mae", "rmse", "bias", "exact", "within1", "pearson",
           "spearman", "kendall_tau_b")
POOLED_NONE = ("qwk", "linear_kappa", "pearson", "spearman", "kendall_tau_b", "mae", "rmse",
                "bias", "exact", "within1")


@dataclass(frozen=True)
class HumanCeiling(Record):
    """Each human against the mean of the other humans on the same item, pooled over every
    (human, item) pair (:mod:`analysis.ceiling`); ``left_out``: humans with too few items
    rated together with another human."""

    n_items: int
    n_pairs: int
    qwk: float | None
    linear_kappa: float | None
    mae: float | None
    rmse: float | None
    bias: float | None
    exact: float | None
    within1: float | None
    pearson: float | None
    spearman: float | None
    kendall_tau_b: float | None
    n_humans: int
    left_out: tuple[str, ...]
    qwk_ci: Bounds
    mae_ci: Bounds
    design: str
    notes: tuple[str, ...] = ()

    def json_keys(self) -> list[str]:
        head = ("n_items", "n_pairs", *POOLED) if self.n_pairs else \
            (*POOLED_NONE, "n_items", "n_pairs")
        return [*head, "n_humans", "left_out", "qwk_ci", "mae_ci", "design", "notes"]


# --- judges -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class BlandAltman(Record):
    """Bias of the judge against the per-item mean of all humans, ± 1.96 SD."""

    bias: float
    low: float
    high: float
    n_items: int
    against: str


@dataclass(frozen=True)
class Confusion(Record):
    """Items by the humans' lower median (rows) and the judge's score (columns)."""

    values: tuple[float, ...]
    rows: str
    columns: str
    matrix: tuple[tuple[int, ...], ...]
    labels: tuple[str, ...] | None = None

    _omit_none = frozenset({"labels"})


@dataclass(frozen=True)
class SingleHuman(Record):
    """A judge against the one human who rated each item, where no item has two
    (:func:`analysis.single_human.single_human_agreement`): each statistic with its item
    bootstrap CI, and no ceiling to set it beside (``against`` says so)."""

    against: str
    n_items: int
    B: int
    seed: int
    notes: tuple[str, ...]
    pearson: Interval
    spearman: Interval
    kendall_tau_b: Interval
    mae: Interval
    rmse: Interval
    qwk: Interval
    kappa: Interval

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SingleHuman:
        stats = ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "qwk", "kappa")
        return cls(d["against"], int(d["n_items"]), int(d["B"]), int(d["seed"]),
                   tuple(d["notes"]), *(Interval(**d[k]) for k in stats))


_JUDGE_REST = ("n_scored_items", "bland_altman", "alpha_humans", "alpha_with_judge",
               "self_consistency_alpha", "alt_test", "confusion", "vs_ceiling", "verdict",
               "n_judgments", "n_unscored", "status", "notes")
_UNSCORED = ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "bias", "qwk",
             "linear_kappa", "exact", "within1")


@dataclass(frozen=True)
class JudgeAgreement(Record):
    """One judge on one dimension against the humans
    (:func:`analysis.judge_agreement.judge_metrics`): the pooled statistics against the
    leave-one-out consensus, the comparison with the human ceiling on the same items, the
    alternative annotator test and the verdict."""

    qwk: float | None
    linear_kappa: float | None
    pearson: float | None
    spearman: float | None
    kendall_tau_b: float | None
    mae: float | None
    rmse: float | None
    bias: float | None
    exact: float | None
    within1: float | None
    n_items: int
    n_pairs: int
    n_scored_items: int
    bland_altman: BlandAltman | None
    alpha_humans: float | None
    alpha_with_judge: float | None
    self_consistency_alpha: float | None
    alt_test: AltTestResult | None
    confusion: Confusion | None
    vs_ceiling: CeilingComparison | None
    verdict: Verdict
    n_judgments: int
    n_unscored: int
    status: str | None = None
    notes: tuple[str, ...] = ()
    #: which items the pooled statistics, the comparison and the verdict are on (not in the
    #: JSON, whose layout is fixed); α with the judge is on every item a human rated
    items: str | None = None
    #: where no item has two humans: the judge against the one human of each item
    single_human: SingleHuman | None = None

    _omit_none = frozenset({"status", "single_human"})

    def json_keys(self) -> list[str]:
        if not self.n_scored_items:
            head: tuple[str, ...] = (*_UNSCORED, "n_items", "n_pairs")
        elif not self.n_pairs:
            head = (*POOLED_NONE, "n_items", "n_pairs")
        else:
            head = ("n_items", "n_pairs", *POOLED)
        return [*head, *_JUDGE_REST[:-2], "single_human", *_JUDGE_REST[-2:]]


# --- the whole analysis -----------------------------------------------------------------------

@dataclass(frozen=True)
class StudyAnalysis(Record):
    """Human–human agreement per dimension, each judge against the humans per dimension, the
    human ceiling per dimension and, with metric scores, the reference-based metrics."""

    meta: AnalysisMeta
    dimensions: Mapping[str, HumanAgreement | Skipped]
    judges: Mapping[str, Mapping[str, JudgeAgreement | Skipped]]
    human_ceiling: Mapping[str, HumanCeiling | Skipped]
    metrics: MetricComparison | None = None

    _omit_none = frozenset({"metrics"})

    def to_json(self) -> str:
        """The documented JSON layout (docs/analysis.md), as ``h2h analyze --json`` prints
        it (without the final newline)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)

    def agreement(self, dim: str) -> HumanAgreement | None:
        """The dimension's human agreement, or None when there is none to show."""
        d = self.dimensions.get(dim)
        return d if isinstance(d, HumanAgreement) else None

    def ceiling(self, dim: str) -> HumanCeiling | None:
        c = self.human_ceiling.get(dim)
        return c if isinstance(c, HumanCeiling) else None

    def judge(self, name: str, dim: str) -> JudgeAgreement | None:
        """One judge on one dimension, or None when it has no comparison there."""
        j = self.judges.get(name, {}).get(dim)
        return j if isinstance(j, JudgeAgreement) else None
