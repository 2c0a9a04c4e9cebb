"""What a report section produces (:class:`SectionOutput`): plain-language findings, cells
of the summary table, focused paper tables, figures and full-precision tables, and the small
helpers every section phrases its numbers with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from messages import Msg

from ..serialize import Interval
from .figures import Figure
from .paper import PaperTable
from .tables import Table

if TYPE_CHECKING:
    from .model import ReportBundle

__all__ = ["FindingKind", "Finding", "Glance", "SectionOutput", "Section", "ordered",
           "boot_words", "sim", "ci3"]

FindingKind = Literal["finding", "can_replace", "cannot_replace", "not_enough_evidence",
                      "not_estimable", "caveat", "note"]


@dataclass(frozen=True)
class Finding:
    """One sentence of the summary. ``dimension`` None = study-wide; the kind sets its style
    (a verdict's outcome, a caveat, a note) so that verdicts and caveats never look alike."""

    text: str
    kind: FindingKind = "finding"
    dimension: str | None = None


@dataclass(frozen=True)
class Glance:
    """One cell of the summary table at the top of the report: ``column`` (e.g. a judge's
    name), ``dimension``, a few words and the kind that styles them."""

    column: str
    dimension: str
    text: str
    kind: FindingKind = "finding"


@dataclass
class SectionOutput:
    findings: list[Finding] = field(default_factory=list)
    glance: list[Glance] = field(default_factory=list)
    tables: list[PaperTable] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    details: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Section:
    """``needs``: "analysis" when ``build`` reads only what the first step of
    :func:`~.bundle.start_bundle` computes (the analysis, Bland–Altman points, the manifest
    without ``best_judge``), "all" when it also reads the calibration or the leaderboards."""

    key: str
    title: str
    intro: str
    build: Callable[[ReportBundle], SectionOutput | None]
    needs: Literal["analysis", "all"] = "all"


def ordered(bundle: ReportBundle, d: str) -> bool:
    """Whether a higher score is better on ``d`` (a Likert or ordered scale); on a binary or
    nominal dimension (a flag, categories) no mean is "best"."""
    return bundle.ordered(d)


def boot_words(bundle: ReportBundle) -> str:
    b = bundle.analysis.meta.bootstrap
    if not b.B:
        return "no CIs (bootstrap skipped, B = 0)"
    return (f"{b.level:.0%} percentile CIs, {b.method} bootstrap over items, "
            f"B = {b.B}, seed = {b.seed}")


def sim(name: str, bundle: ReportBundle) -> str:
    """A judge's name, marked "(simulated)" for the demo's simulated judges."""
    return Msg("{name} (simulated)", name=name) if name in \
        bundle.manifest.simulated_judges else name


def ci3(x: Interval | None) -> tuple:
    """(value, low, high) of an estimate, all None without one."""
    return (None, None, None) if x is None else (x.value, x.low, x.high)
