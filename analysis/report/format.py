"""How numbers and names read in every human-facing output (HTML, Markdown, LaTeX, the app).

One rule set, so a coefficient never reads ``0.7829`` in one place and ``.78`` in another:

* coefficients (alpha, kappa, ICC, QWK, AC1/AC2, correlations, omega, rho): 3 decimals;
* scores and differences in scale points (means, SD, MAE, bias): 2 decimals;
* shares: percentages with one decimal (``13.1%``);
* differences carry their sign (``+0.066``, ``−0.010``, with a true minus sign);
* a CI is ``[low, high]`` after its estimate;
* a value that is not estimable is never printed as a number: it reads "—" and the table's
  legend (or the notes) says why.

The CSVs keep full precision; only what people read is rounded.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .model import ReportBundle

__all__ = ["NumKind", "DIGITS", "MISSING", "is_missing", "fmt", "fmt_ci", "fmt_est",
           "dim_labels", "dim_order", "sentence",
           "natural_key"]

NumKind = Literal["coef", "points", "share", "count", "p"]
DIGITS: dict[str, int] = {"coef": 3, "points": 2, "share": 1, "count": 0, "p": 3}
MISSING = "—"
MINUS = "−"


def is_missing(v) -> bool:
    """None, NaN, ±inf, or pandas' missing value of a nullable column (``pd.NA``)."""
    if v is None or type(v).__name__ == "NAType":
        return True
    return isinstance(v, float) and not math.isfinite(v)


def fmt(v, kind: NumKind = "coef", *, signed: bool = False) -> str:
    """``v`` as people read it.

    >>> fmt(0.78285), fmt(-0.01, signed=True), fmt(0.1311, "share"), fmt(None)
    ('0.783', '−0.010', '13.1%', '—')
    >>> fmt(4.4833, "points"), fmt(147.0, "count"), fmt(0.0004, "p")
    ('4.48', '147', '< .001')
    """
    if is_missing(v):
        return MISSING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if kind == "count":
        return f"{int(round(float(v)))}"
    if kind == "p":
        return "< .001" if v < 0.001 else f"{v:.3f}"
    d = DIGITS[kind]
    x = float(v) * (100 if kind == "share" else 1)
    if round(x, d) == 0:
        x = 0.0  # never "−0.000"
    s = f"{x:+.{d}f}" if signed else f"{x:.{d}f}"
    s = s.replace("-", MINUS)
    return s + ("%" if kind == "share" else "")


def fmt_ci(low, high, kind: NumKind = "coef", *, signed: bool = False) -> str:
    """``[low, high]``; empty when neither end is known (no bootstrap).

    >>> fmt_ci(0.72846, 0.82517), fmt_ci(None, None)
    ('[0.728, 0.825]', '')
    """
    if is_missing(low) and is_missing(high):
        return ""
    return f"[{fmt(low, kind, signed=signed)}, {fmt(high, kind, signed=signed)}]"


def fmt_est(v, low=None, high=None, kind: NumKind = "coef", *, signed: bool = False) -> str:
    """Estimate with its CI: ``0.783 [0.728, 0.825]``; just "—" when not estimable.

    >>> fmt_est(0.066, 0.030, 0.103, signed=True)
    '+0.066 [+0.030, +0.103]'
    """
    if is_missing(v):
        return MISSING
    ci = fmt_ci(low, high, kind, signed=signed)
    return fmt(v, kind, signed=signed) + (f" {ci}" if ci else "")


def natural_key(s: str) -> list:
    """Sort key that puts m9 before m10.

    >>> sorted(["m10", "m9", "aster"], key=natural_key)
    ['aster', 'm9', 'm10']
    """
    import re

    return [int(p) if p.isdigit() else p.casefold() for p in re.split(r"(\d+)", str(s))]


def sentence(s: str) -> str:
    """``s`` ending as a sentence (a title that is a question keeps its question mark)."""
    return s if s.endswith((".", "?", "!")) else s + "."


def dim_labels(bundle: ReportBundle) -> dict[str, str]:
    """Dimension key -> the rubric's label (the key itself for a dimension not in it)."""
    labels = {d.key: d.label for d in bundle.dimensions}
    for key in bundle.analysis.dimensions:
        labels.setdefault(key, key)
    return labels


def dim_order(bundle: ReportBundle) -> list[str]:
    """The one dimension order of every table and figure: the rubric's."""
    keys = [d.key for d in bundle.dimensions]
    return keys + [k for k in bundle.analysis.dimensions if k not in keys]
