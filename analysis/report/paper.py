"""The focused tables a paper shows: one small model rendered three ways (LaTeX, HTML,
Markdown), so every output reads the same numbers in the same rounding.

A :class:`PaperTable` has columns (:class:`Col`) and rows of cells. A cell is text, a count,
or an :class:`Est` (an estimate with an optional CI and bold mark); a :class:`Group` row spans
the table (e.g. "Judge: sonnet-v1" above that judge's rows). The full-precision numbers stay in
the CSV named by ``csv``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from .format import MISSING, NumKind, fmt, fmt_est, is_missing

__all__ = ["Est", "Note", "Col", "Group", "PaperTable", "cell_text", "best", "MARKS"]

# the letters after a "—" that say which reason of the legend applies (superscript a, b, ...)
MARKS = "ᵃᵇᶜᵈᵉᶠᵍʰ"

ColKind = Literal["text", "wrap"] | NumKind


@dataclass(frozen=True)
class Est:
    """An estimate; ``low``/``high`` its CI (None without a bootstrap); ``bold`` marks the best
    value where a comparison is the point of the table; ``why``: why there is no value (the
    table's legend says it; without it, the table's ``missing``); ``why_no_ci``: why a value
    stands without its CI (without it, the table's ``bare_reason``)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    bold: bool = False
    why: str = ""
    why_no_ci: str = ""


@dataclass(frozen=True)
class Note:
    """Text with a second, smaller line (LaTeX) or a parenthesis (HTML, Markdown):
    "not enough evidence" / "≈ 52 items"."""

    text: str
    sub: str = ""


@dataclass(frozen=True)
class Col:
    """``kind``: "text" (one line), "wrap" (text that may wrap, the table's flexible column),
    or a number kind of :mod:`analysis.report.format`; ``signed`` prints + and −."""

    head: str
    kind: ColKind = "coef"
    signed: bool = False

    @property
    def numeric(self) -> bool:
        return self.kind not in ("text", "wrap")


@dataclass(frozen=True)
class Group:
    title: str


Cell = str | int | float | Est | Note | None
Row = tuple[Cell, ...]


@dataclass(frozen=True)
class PaperTable:
    key: str
    title: str
    caption: str
    cols: tuple[Col, ...]
    rows: tuple[Row | Group, ...]
    csv: str | None = None
    missing: str = "not estimable (see the report's notes)"  # what "—" means here
    # why an estimate can stand without its CI in this table
    bare_reason: str = "too few items to resample"

    @property
    def has_ci(self) -> bool:
        return any(isinstance(c, Est) and not (is_missing(c.low) and is_missing(c.high))
                   for r in self.rows if not isinstance(r, Group) for c in r)

    @cached_property  # read by the legend: computed once per table
    def bare_cells(self) -> list[Est]:
        """The estimates that stand without their CI, in reading order."""
        return [c for r in self.rows if not isinstance(r, Group) for c in r
                if isinstance(c, Est) and not is_missing(c.value)
                and (is_missing(c.low) or is_missing(c.high))]

    @cached_property  # asked for every cell by mark(): computed once per table
    def missing_reasons(self) -> tuple[str, ...]:
        """Why the table's "—" cells have no value, each reason once, in reading order."""
        out: list[str] = []
        for r in self.rows:
            if isinstance(r, Group):
                continue
            for c, col in zip(r, self.cols, strict=True):
                if col.numeric and cell_text(c, col) == MISSING:
                    why = (c.why if isinstance(c, Est) else "") or self.missing
                    if why not in out:
                        out.append(why)
        return tuple(out)

    def mark(self, c: Cell, col: Col) -> str:
        """The letter after a "—" that names its reason in the legend, when the table's
        "—" cells have more than one reason ("" otherwise)."""
        reasons = self.missing_reasons
        if len(reasons) < 2 or not col.numeric or cell_text(c, col) != MISSING:
            return ""
        why = (c.why if isinstance(c, Est) else "") or self.missing
        return MARKS[reasons.index(why) % len(MARKS)]

    def text(self, c: Cell, col: Col) -> str:
        """The cell as one line of plain text, with its reason's mark after a "—"."""
        return cell_text(c, col) + self.mark(c, col)


def cell_text(c: Cell, col: Col) -> str:
    """The cell as one line of plain text (HTML and Markdown): ``0.783 [0.728, 0.825]``."""
    if isinstance(c, Est):
        return fmt_est(c.value, c.low, c.high, col.kind, signed=col.signed)  # type: ignore
    if isinstance(c, Note):
        return c.text + (f" ({c.sub})" if c.sub else "")
    if not col.numeric or isinstance(c, str):  # a word in a number column stays a word
        return "" if c is None else str(c)
    return fmt(c, col.kind, signed=col.signed)  # type: ignore[arg-type]


def best(values: list[float | None], higher: bool = True) -> int | None:
    """Index of the best value (None when there are fewer than two to compare or a tie)."""
    ok = [(v, i) for i, v in enumerate(values) if not is_missing(v)]
    if len(ok) < 2:
        return None
    top = max(ok)[0] if higher else min(ok)[0]
    winners = [i for v, i in ok if v == top]
    return winners[0] if len(winners) == 1 else None
