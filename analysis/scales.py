"""Scales as users have them: numbers, category labels, or values seen in a file.

A :class:`Scale` is a dimension's measurement level and its full set of values. A scale of
category labels (``unsafe, borderline, safe``) is coded 1..k in the order given, which is the
order an ordinal level uses; the labels travel with the scale so outputs can name them.
:func:`encode_scores` turns scores as read (numbers or labels, as text or numbers) into the
scale's numeric codes and lists every score that is not on the scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from .alpha import Level

__all__ = ["Scale", "infer_scales", "encode_scores", "OffScale", "label_of"]


@dataclass(frozen=True)
class Scale:
    """A dimension's measurement level and its full declared scale (every possible value);
    ``labels`` names the values of a scale of categories (same order as ``values``)."""

    level: Level
    values: tuple[float, ...]
    binary: bool = False
    labels: tuple[str, ...] = ()

    @classmethod
    def of_labels(cls, level: Level, labels: tuple[str, ...]) -> Scale:
        """Categories coded 1..k in the order given."""
        return cls(level, tuple(float(i + 1) for i in range(len(labels))), False, labels)


def label_of(scale: Scale, value: float) -> str:
    """How a value is shown: its label on a scale of categories, else the number."""
    if scale.labels:
        for v, lab in zip(scale.values, scale.labels, strict=True):
            if v == value:
                return lab
    return f"{value:g}"


def _number(raw) -> float | None:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return float(raw)
    try:
        return float(str(raw).strip())
    except ValueError:
        return None


def _missing(raw) -> bool:
    return raw is None or (isinstance(raw, float) and math.isnan(raw))


def infer_scales(ratings: pd.DataFrame, level: Level = "ordinal"
                 ) -> tuple[dict[str, Scale], list[str]]:
    """Scales for a plain CSV without a rubric.

    Integer scores: the integers from the observed min to max. Other numbers: the observed
    values (and a note that within-one and weighted kappa then use value distances). Text
    labels only: a nominal scale of the labels in alphabetical order, since their order is
    unknown (a note says to declare it with ``--scale``). A dimension mixing numbers and text
    gets the numeric scale, and :func:`encode_scores` then reports the text.
    """
    scales: dict[str, Scale] = {}
    notes: list[str] = []
    for dim, g in ratings.groupby("dimension"):
        raw = [v for v in g["score"].tolist() if not _missing(v)]
        if not raw:
            continue
        nums = [_number(v) for v in raw]
        if all(n is None for n in nums):
            labels = tuple(sorted({str(v).strip() for v in raw}))
            scales[str(dim)] = Scale.of_labels("nominal", labels)
            notes.append(f"{dim}: text labels without a declared order, treated as nominal "
                         f"categories ({', '.join(labels)}); pass --scale "
                         f"{dim}={','.join(labels)} in the right order for an ordinal scale")
            continue
        s = pd.Series([n for n in nums if n is not None and math.isfinite(n)], dtype=float)
        if s.empty:
            continue
        lo, hi = float(s.min()), float(s.max())
        if (s == s.round()).all():
            vals = tuple(float(v) for v in range(int(lo), int(hi) + 1))
            notes.append(f"{dim}: no rubric given; scale taken as {int(lo)}..{int(hi)} "
                         "(observed range); pass --scale to declare the full scale")
        else:
            vals = tuple(sorted(float(v) for v in s.unique()))
            notes.append(f"{dim}: non-integer scores; scale taken from the observed values "
                         f"({', '.join(f'{v:g}' for v in vals)}); within-one and weighted kappa "
                         "use distances between values, not positions; pass --scale to "
                         "declare the full scale")
        scales[str(dim)] = Scale(level, vals, binary=vals == (0.0, 1.0))
    return scales, notes


@dataclass(frozen=True)
class OffScale:
    """A score that is not on its dimension's scale."""

    index: object
    dimension: str
    raw: str
    problem: str


def encode_scores(df: pd.DataFrame, scales: Mapping[str, Scale]
                  ) -> tuple[pd.DataFrame, list[OffScale]]:
    """``df`` with ``score`` as the scale's numeric codes; scores not on the scale become NaN
    and are listed. Missing scores ("cannot rate", unscored) stay NaN and are not listed."""
    out = df.copy()
    codes: list[float] = []
    off: list[OffScale] = []
    for idx, dim, raw in zip(df.index, df["dimension"].astype(str), df["score"], strict=True):
        if _missing(raw):
            codes.append(float("nan"))
            continue
        sc = scales.get(dim)
        if sc is None:
            codes.append(float("nan"))
            continue
        text = f"{raw:g}" if isinstance(raw, float) else str(raw).strip()
        if sc.labels:
            if text in sc.labels:
                codes.append(sc.values[sc.labels.index(text)])
                continue
            problem = f"'{text}' is not one of {', '.join(sc.labels)}"
        else:
            num = _number(raw)
            if num is None:
                problem = f"'{text}' is not a number"
            elif any(abs(num - v) < 1e-9 for v in sc.values):
                codes.append(next(v for v in sc.values if abs(num - v) < 1e-9))
                continue
            else:
                problem = f"{num:g} is not on the scale {_scale_text(sc)}"
        codes.append(float("nan"))
        off.append(OffScale(idx, dim, text, problem))
    out["score"] = pd.Series(codes, index=df.index, dtype=float)
    return out, off


def _scale_text(sc: Scale) -> str:
    v = sc.values
    if len(v) > 2 and all(b - a == 1 for a, b in zip(v, v[1:], strict=False)) and \
            float(v[0]).is_integer():
        return f"{v[0]:g}..{v[-1]:g}"
    return ", ".join(f"{x:g}" for x in v)
