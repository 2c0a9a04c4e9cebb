"""Results as JSON: NaN and infinity become ``null``, numpy scalars plain numbers.

A value that cannot be computed is ``None`` in every result and ``null`` in the JSON (never
NaN); :func:`finite` is the one place a float is checked, and :func:`clean` turns a block of
numbers into that form, with one note naming the fields that turned out undefined.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from messages import Msg

__all__ = ["finite", "clean"]


def finite(x: Any) -> float | None:
    """``x`` as a float, or None when it is None, NaN or infinite.

    >>> finite(np.float64(0.5)), finite(float("nan")), finite(None), finite(np.inf)
    (0.5, None, None, None)
    """
    if x is None:
        return None
    f = float(x)
    return f if math.isfinite(f) else None


def clean(obj: Any, notes: list[str], what: str = "") -> Any:
    """Replace NaN/inf by None. The top-level fields that turned out undefined without a
    stated reason get **one** note listing them (``what`` is only for the reader's sake)."""
    missing: list[str] = []
    out = _clean(obj, missing, "")
    if missing:
        tops = list(dict.fromkeys(p.split(".")[0] for p in missing))
        notes.append(Msg("{fields}: not estimable on these data (no variance or too few "
                         "paired ratings)", fields=", ".join(tops)))
    return out


def _clean(obj: Any, missing: list[str], path: str) -> Any:
    if isinstance(obj, dict):
        # an interval whose absence is explained (``why_no_ci``) is not reported again
        stated = ("low", "high") if obj.get("why_no_ci") else ()
        return {k: _clean(v, [] if k in stated else missing, f"{path}.{k}" if path else str(k))
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v, missing, path) for v in obj]
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        if math.isfinite(f):
            return f
        missing.append(path)
        return None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj
