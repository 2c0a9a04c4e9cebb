"""Results as typed records, and as JSON: NaN and infinity become ``null``, numpy scalars plain
numbers, records their documented layout.

A value that cannot be computed is ``None`` in every result and ``null`` in the JSON (never
NaN). :func:`finite` is the one place a float is checked; :func:`settle` makes a whole record
finite and adds **one** note naming the fields that turned out undefined without a stated
reason; :meth:`Record.to_dict` is the one serializer.

A result is a frozen dataclass deriving from :class:`Record`: its fields, in order, are the
keys of its JSON object (a field in ``_omit_none`` is left out when it is None). Adding a
result to a layout is adding a field.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from messages import Msg

__all__ = ["finite", "clean", "plain", "settle", "Record", "Interval", "Bounds"]


def finite(x: Any) -> float | None:
    """``x`` as a float, or None when it is None, NaN or infinite.

    >>> finite(np.float64(0.5)), finite(float("nan")), finite(None), finite(np.inf)
    (0.5, None, None, None)
    """
    if x is None:
        return None
    f = float(x)
    return f if math.isfinite(f) else None


class Record:
    """A result whose JSON layout is its fields in order (see the module)."""

    #: fields left out of the JSON object when they are None
    _omit_none: ClassVar[frozenset[str]] = frozenset()

    def json_keys(self) -> list[str]:
        """The keys of the JSON object, in order (a record whose layout depends on how it was
        computed says so here)."""
        return [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]

    def to_dict(self, *, keep_nan: bool = False) -> dict[str, Any]:
        """The record as JSON-able plain data (NaN and infinity as None unless ``keep_nan``)."""
        out = {}
        for k in self.json_keys():
            v = getattr(self, k)
            if v is None and k in self._omit_none:
                continue
            out[k] = plain(v, keep_nan=keep_nan)
        return out


def plain(obj: Any, *, keep_nan: bool = False) -> Any:
    """``obj`` as JSON-able plain data: records by :meth:`Record.to_dict` (or their own
    ``as_dict``), other dataclasses field by field, containers element by element."""
    if isinstance(obj, Record):
        return obj.to_dict(keep_nan=keep_nan)
    if hasattr(obj, "as_dict") and dataclasses.is_dataclass(obj):
        return plain(obj.as_dict(), keep_nan=keep_nan)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name), keep_nan=keep_nan)
                for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: plain(v, keep_nan=keep_nan) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v, keep_nan=keep_nan) for v in obj]
    if isinstance(obj, (np.floating, float)) and not isinstance(obj, bool):
        return float(obj) if keep_nan else finite(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def settle(record: Any, notes: list[str]) -> Any:
    """``record`` with every NaN or infinity replaced by None; the top-level fields that
    held one without a stated reason (an interval with ``why_no_ci`` states its own) are
    named in one note appended to ``notes``."""
    clean(plain(record, keep_nan=True), notes)
    return _finite_everywhere(record)


def _finite_everywhere(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            nv = _finite_everywhere(v)
            if nv is not v:
                changes[f.name] = nv
        return dataclasses.replace(obj, **changes) if changes else obj
    if isinstance(obj, dict):
        new = {k: _finite_everywhere(v) for k, v in obj.items()}
        return obj if all(new[k] is obj[k] for k in obj) else new
    if isinstance(obj, (list, tuple)):
        new = [_finite_everywhere(v) for v in obj]
        if all(a is b for a, b in zip(new, obj, strict=True)):
            return obj
        return type(obj)(new) if isinstance(obj, tuple) else new
    if isinstance(obj, (np.floating, float)) and not isinstance(obj, bool):
        f = finite(obj)
        return obj if f is not None and type(obj) is float else f
    return obj


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


@dataclasses.dataclass(frozen=True)
class Interval(Record):
    """An estimate and its confidence interval (None: not estimable, or no interval)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict:
        return self.to_dict()


@dataclasses.dataclass(frozen=True)
class Bounds(Record):
    """A confidence interval alone (its estimate stands beside it)."""

    low: float | None = None
    high: float | None = None
