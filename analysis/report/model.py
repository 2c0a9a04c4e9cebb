"""What the report shows, as typed records: the :class:`ReportBundle` every section, table and
figure reads (built from the study by :mod:`.bundle`, which is the only part of the report
that reads the database)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..calibration import DimensionCalibration
from ..leaderboard import Leaderboard
from ..results import AltTestMeta, Minimums, StudyAnalysis, VerdictRule
from ..serialize import Record

__all__ = ["Counts", "ReportBootstrap", "RubricRef", "Manifest", "RubricDimension",
           "BlandAltmanPoints", "HeldOutSearch", "ReportBundle"]


@dataclass(frozen=True)
class Counts(Record):
    items: int
    raters: int
    ratings: int
    cannot_rate: int
    ratings_without_flags: int
    simulated_raters: tuple[str, ...]
    judgments: int
    unscored_judgments: int


@dataclass(frozen=True)
class ReportBootstrap(Record):
    method: str
    B: int
    seed: int
    level: float
    alpha_min: float
    calibration: str
    leaderboard: str
    metrics: str


@dataclass(frozen=True)
class RubricRef(Record):
    """The rubric the ratings were made with: its name and version hash."""

    name: str
    version: str


@dataclass(frozen=True)
class Manifest(Record):
    """What was computed how (``manifest.json``): the study, its counts, every judge and
    metric configuration, the bootstrap, the verdict's rule, the package versions."""

    generated_at: str
    study: str | None
    rubric: RubricRef | None
    counts: Counts
    judge_configurations: tuple[Mapping[str, Any], ...]
    metric_configurations: tuple[Mapping[str, Any], ...]
    bootstrap: ReportBootstrap
    verdict: VerdictRule
    human_ceiling: str
    minimums: Minimums
    alt_test: AltTestMeta
    packages: Mapping[str, str]
    best_judge: str | None = None
    #: whether the judge configurations have been compared (then ``best_judge`` is known)
    compared: bool = False
    #: how the side-by-side rankings were computed (when the study has pairs)
    pairwise: Mapping[str, Any] | None = None
    #: how the model ranking (`h2h leaderboard`) was computed (when the study has a judge)
    ranking: Mapping[str, Any] | None = None

    _omit_none = frozenset({"pairwise", "ranking"})

    def json_keys(self) -> list[str]:
        keys = [k for k in super().json_keys()
                if k not in ("best_judge", "compared", "ranking")]
        if self.compared:  # best_judge (and the ranking) before packages, as always
            keys.insert(keys.index("packages"), "best_judge")
            keys.insert(keys.index("packages"), "ranking")
        return keys

    @property
    def simulated_judges(self) -> set[str]:
        """The demo's simulated judge configurations (no model was called)."""
        return {c["name"] for c in self.judge_configurations
                if c.get("provider") == "simulated"}


@dataclass(frozen=True)
class RubricDimension(Record):
    """A rubric dimension as the report names and orders it."""

    key: str
    label: str
    level: str
    kind: str
    min: float
    max: float
    tasks: tuple[str, ...] | None = None

    @property
    def ordered(self) -> bool:
        """Whether a higher score is better (a Likert or ordered scale); on a binary or
        nominal dimension (a flag, categories) no mean is "best"."""
        return self.kind != "binary" and self.level != "nominal"


@dataclass(frozen=True)
class BlandAltmanPoints(Record):
    """One judge on one dimension, item by item: the mean of judge and humans, and their
    difference (the points of a Bland–Altman plot)."""

    judge: str
    dimension: str
    mean: tuple[float, ...]
    diff: tuple[float, ...]


@dataclass(frozen=True)
class HeldOutSearch(Record):
    """A configuration made by `h2h calibrate auto`: its base, the exemplar items in its
    prompt, the split's seed, and the held-out (test) comparison with the base as stored
    (:class:`analysis.heldout.HeldOut`'s layout)."""

    config: str
    base: str
    selected: str
    search: int
    split_seed: int
    exemplar_items: tuple[str, ...]
    test: Mapping[str, Any]


@dataclass
class ReportBundle:
    """Everything the report shows, computed once. ``calibration``, ``leaderboards``,
    ``pairwise`` and ``ranking`` are None until the second step of
    :func:`~.bundle.start_bundle` has run."""

    analysis: StudyAnalysis
    bland_altman: list[BlandAltmanPoints]
    manifest: Manifest
    dimensions: list[RubricDimension] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    calibration: dict[str, DimensionCalibration] | None = None
    leaderboards: dict[str, Leaderboard] | None = None
    #: the side-by-side rankings (an :class:`analysis.arena_study.PairwiseStudy`), when the
    #: study has pairs with preferences or pairwise judgments
    pairwise: Any | None = None
    #: the prediction-powered model ranking (the JSON of `h2h leaderboard --json`), when the
    #: study has a judge
    ranking: dict | None = None
    #: the configurations made by `h2h calibrate auto`, with their held-out results
    held_out: tuple[HeldOutSearch, ...] = ()

    def dimension(self, key: str) -> RubricDimension | None:
        return next((d for d in self.dimensions if d.key == key), None)

    def ordered(self, key: str) -> bool:
        """Whether a higher score is better on ``key`` (true for a dimension not in the
        rubric)."""
        d = self.dimension(key)
        return d is None or d.ordered
