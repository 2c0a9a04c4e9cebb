"""Rubric files: parse and validate a TOML rubric into an immutable :class:`Rubric`.

The very same parsed rubric is shown to raters and rendered into judge prompts, so it carries
an anchor text for every scale level. Its ``version`` is a hash of the parsed content, so a
whitespace-only edit of the file keeps the version and any change of wording makes a new one.

Example
-------
>>> from data.rubric import load_default_rubric
>>> r = load_default_rubric()
>>> [d.key for d in r.dimensions][:3]
['empathy', 'safety', 'fluency']
>>> r.dimension("empathy").values
(1, 2, 3, 4, 5)
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tomllib
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from ._files import short, value_problem
from .errors import FormatError, Problem
from .messages import Msg

__all__ = [
    "BUILTIN_TASKS",
    "CANNOT_RATE",
    "Level",
    "Dimension",
    "Rubric",
    "MeasurementLevel",
    "ScaleKind",
    "parse_rubric",
    "load_rubric",
    "load_default_rubric",
    "rubric_from_definition",
]

BUILTIN_TASKS: tuple[str, ...] = ("dialogue", "recollection", "itinerary")
MeasurementLevel = Literal["nominal", "ordinal", "interval", "ratio"]
ScaleKind = Literal["ordinal", "binary", "categorical"]

_KEY_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_RANGE_RE = re.compile(r"^\s*(-?\d{1,9})\s*\.\.\s*(-?\d{1,9})\s*$")
# A Markdown image, inline ![alt](url) or by reference ![alt][ref]: rubric text is shown as
# Markdown (guidelines, anchors), and an image there would make every rater's browser fetch it.
_MD_IMAGE_RE = re.compile(r"!\[[^\]]*\]\s*[\[(]")
_TOP_FIELDS = {"name", "description", "guidelines", "tasks", "dimensions"}
_DIM_FIELDS = {"key", "label", "description", "scale", "anchors", "labels", "tasks", "level",
               "ordered"}
_MAX_LEVELS = 101
_NUMBER_RE = re.compile(r"[+-]?\d{1,20}(\.\d{0,20})?")
CANNOT_RATE = "NA"
"""The keyword for "cannot rate" in a ratings file (an empty score means the same)."""


@dataclass(frozen=True)
class Level:
    """One point of a scale: the stored numeric ``value``, a short ``label`` and its anchor."""

    value: int
    label: str
    anchor: str


@dataclass(frozen=True)
class Dimension:
    """A rated dimension: its scale, the anchor for every level, and the tasks it applies to."""

    key: str
    label: str
    description: str
    kind: ScaleKind
    level: MeasurementLevel
    levels: tuple[Level, ...]
    tasks: tuple[str, ...] | None = None

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(lv.value for lv in self.levels)

    @property
    def min(self) -> int:
        return self.levels[0].value

    @property
    def max(self) -> int:
        return self.levels[-1].value

    def applies_to(self, task: str) -> bool:
        return self.tasks is None or task in self.tasks

    def parse_score(self, raw: str | float | int | None) -> int | None:
        """Turn a written score into the stored value; ``None`` means "cannot rate".

        Accepts the numeric value or, for named categories, the category name.
        Raises ``ValueError`` with the allowed values when the score is off the scale.
        """
        if raw is None:
            return None
        shown = str(raw) if len(str(raw)) <= 40 else str(raw)[:37] + "…"
        if isinstance(raw, str):
            text = raw.strip()
            if text == "" or text.upper() == CANNOT_RATE:
                return None
            for lv in self.levels:
                if self.kind == "categorical" and text.casefold() == lv.label.casefold():
                    return lv.value
            # Only plain decimal numbers: float() would also take "nan", "inf" and "1e0",
            # and a "nan" must not pass for "cannot rate" (that is an empty score or NA).
            if not _NUMBER_RE.fullmatch(text):
                raise ValueError(Msg("score '{shown}' is not {scale} (leave it empty or write "
                                     '{cannot} for "cannot rate")', shown=shown,
                                     scale=self.describe_scale(), cannot=CANNOT_RATE))
            number = float(text)
        else:
            number = float(raw)
        if not math.isfinite(number) or not number.is_integer() \
                or int(number) not in self.values:
            raise ValueError(Msg("score '{shown}' is off the scale; allowed: {scale}",
                                 shown=shown, scale=self.describe_scale()))
        return int(number)

    def describe_scale(self) -> str:
        if self.kind == "ordinal":
            return Msg("an integer from {min} to {max}", min=self.min, max=self.max)
        if self.kind == "binary":
            return Msg("0 or 1")
        names = ", ".join(f"{lv.value}={lv.label}" for lv in self.levels)
        return Msg("one of {names}", names=names)


@dataclass(frozen=True)
class Rubric:
    """A parsed, validated rubric. ``version`` hashes its content (not the file's layout)."""

    name: str
    description: str
    guidelines: str
    tasks: tuple[str, ...]
    dimensions: tuple[Dimension, ...]
    version: str = field(default="", compare=False)

    def dimension(self, key: str) -> Dimension:
        for d in self.dimensions:
            if d.key == key:
                return d
        keys = ", ".join(d.key for d in self.dimensions)
        raise KeyError(Msg("unknown dimension '{key}' (this rubric has: {keys})", key=key,
                           keys=keys))

    def dimensions_for(self, task: str) -> tuple[Dimension, ...]:
        return tuple(d for d in self.dimensions if d.applies_to(task))

    def definition(self) -> dict[str, Any]:
        """The canonical JSON-able content that is stored and hashed."""
        out = asdict(self)
        out.pop("version")
        return out


def _hash_definition(defn: dict[str, Any]) -> str:
    canonical = json.dumps(defn, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def rubric_from_definition(defn: dict[str, Any]) -> Rubric:
    """Rebuild a :class:`Rubric` from :meth:`Rubric.definition` output (as stored)."""
    dims = tuple(
        Dimension(
            key=d["key"], label=d["label"], description=d["description"], kind=d["kind"],
            level=d["level"], levels=tuple(Level(**lv) for lv in d["levels"]),
            tasks=tuple(d["tasks"]) if d.get("tasks") is not None else None,
        )
        for d in defn["dimensions"]
    )
    r = Rubric(name=defn["name"], description=defn["description"],
               guidelines=defn["guidelines"], tasks=tuple(defn["tasks"]), dimensions=dims)
    return _with_version(r)


def _with_version(r: Rubric) -> Rubric:
    object.__setattr__(r, "version", _hash_definition(r.definition()))
    return r


class _Locator:
    """Finds the line of a dimension's table header so errors can point into the file."""

    def __init__(self, text: str):
        self.lines = text.split("\n")  # TOML breaks lines on \n only, never on U+2028 …
        self.headers = [i + 1 for i, ln in enumerate(self.lines)
                        if ln.strip().startswith("[[dimensions]]")]

    def dim_line(self, index: int, key: str | None = None) -> int | None:
        if index >= len(self.headers):
            return None
        start = self.headers[index]
        end = self.headers[index + 1] if index + 1 < len(self.headers) else len(self.lines) + 1
        if key is not None:
            pat = re.compile(rf"^\s*(\[dimensions\.)?{re.escape(key)}\b")
            for n in range(start, end):
                if pat.match(self.lines[n - 1]):
                    return n
        return start

    def top_line(self, key: str) -> int | None:
        pat = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for i, ln in enumerate(self.lines):
            if pat.match(ln):
                return i + 1
        return None


def parse_rubric(text: str, file: str = "<rubric>") -> Rubric:
    """Parse rubric TOML text. Raises :class:`FormatError` naming file, line and field."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        line = int(m.group(1)) if m else None
        raise FormatError([Problem(file, line, None, Msg("not valid TOML: {reason}",
                                                         reason=exc))]) from None
    except RecursionError:
        raise FormatError([Problem(file, None, None,
                                   Msg("not valid TOML: nested too deeply"))]) from None
    except ValueError as exc:  # tomllib's int(): more than 4,300 digits
        why = Msg("a number with more than 4,300 digits") if "digits" in str(exc) else str(exc)
        raise FormatError([Problem(file, None, None, Msg("not valid TOML: {reason}",
                                                         reason=why))]) from None
    loc = _Locator(text)
    problems: list[Problem] = []

    def bad(line: int | None, fld: str | None, msg: str) -> None:
        problems.append(Problem(file, line, fld, msg))

    found = value_problem(raw)
    if found is not None:
        bad(None, found[0] or None, found[1])
    for fld, val in _texts(raw) if found is None else ():
        if _MD_IMAGE_RE.search(val):
            top = fld.split(".")[0].split("[")[0]
            bad(loc.top_line(top) if top in _TOP_FIELDS else None, fld,
                Msg("images are not allowed in rubric text (the browser would fetch them from "
                    "elsewhere); describe the example in words"))
    if problems:
        raise FormatError(problems)

    for k in sorted(set(raw) - _TOP_FIELDS):
        bad(loc.top_line(k), k, Msg("unknown field (allowed: {fields})",
                                    fields=", ".join(sorted(_TOP_FIELDS))))
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        bad(loc.top_line("name"), "name", Msg("required: a non-empty string naming the rubric"))
    description = raw.get("description", "")
    guidelines = raw.get("guidelines", "")
    for fld, val in (("description", description), ("guidelines", guidelines)):
        if not isinstance(val, str):
            bad(loc.top_line(fld), fld, Msg("must be a string (markdown allowed)"))
    tasks_raw = raw.get("tasks", list(BUILTIN_TASKS))
    tasks: list[str] = []
    if not isinstance(tasks_raw, list) or not all(isinstance(t, str) for t in tasks_raw):
        bad(loc.top_line("tasks"), "tasks", Msg("must be a list of task family names"))
    else:
        for t in tasks_raw:
            if not _KEY_RE.match(t):
                bad(loc.top_line("tasks"), "tasks", Msg(
                    "'{task}' is not a valid task name (lower-case letters, digits, underscore)",
                    task=t))
        tasks = list(dict.fromkeys(list(BUILTIN_TASKS) + list(tasks_raw)))
    dims_raw = raw.get("dimensions")
    dims: list[Dimension] = []
    if not isinstance(dims_raw, list) or not dims_raw:
        bad(None, "dimensions", Msg("at least one [[dimensions]] table is required"))
        dims_raw = []
    seen: dict[str, int] = {}
    for i, d in enumerate(dims_raw):
        prefix = f"dimensions[{i + 1}]"
        line = loc.dim_line(i)
        if not isinstance(d, dict):
            bad(line, prefix, Msg("must be a table"))
            continue
        dim = _parse_dimension(d, i, prefix, loc, tasks, bad)
        if dim is None:
            continue
        if dim.key in seen:
            bad(loc.dim_line(i, "key"), f"{prefix}.key",
                Msg("duplicate dimension key '{key}' (first in dimensions[{first}])",
                    key=dim.key, first=seen[dim.key]))
            continue
        seen[dim.key] = i + 1
        dims.append(dim)
    if problems:
        raise FormatError(problems)
    rub = Rubric(name=name.strip(), description=description.strip(),
                 guidelines=guidelines.strip(), tasks=tuple(tasks), dimensions=tuple(dims))
    return _with_version(rub)


def _parse_dimension(d, i, prefix, loc: _Locator, tasks, bad) -> Dimension | None:
    for k in sorted(set(d) - _DIM_FIELDS):
        bad(loc.dim_line(i, k), f"{prefix}.{k}",
            Msg("unknown field (allowed: {fields})", fields=", ".join(sorted(_DIM_FIELDS))))
    key = d.get("key")
    if not isinstance(key, str) or not _KEY_RE.match(key):
        bad(loc.dim_line(i, "key"), f"{prefix}.key",
            Msg("required: lower-case letters, digits and underscores, starting with a letter"))
        return None
    prefix = f"dimensions.{key}"
    label = d.get("label", key.replace("_", " ").capitalize())
    description = d.get("description", "")
    if not isinstance(label, str) or not isinstance(description, str):
        bad(loc.dim_line(i, "label"), f"{prefix}.label", Msg("label and description must be "
                                                             "strings"))
        return None
    scale = d.get("scale")
    values: list[int]
    names: list[str] | None = None
    kind: ScaleKind
    if isinstance(scale, str) and scale.strip().lower() == "binary":
        kind, values = "binary", [0, 1]
    elif isinstance(scale, str) and (m := _RANGE_RE.match(scale)):
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi <= lo or hi - lo + 1 > _MAX_LEVELS:
            bad(loc.dim_line(i, "scale"), f"{prefix}.scale",
                Msg("range '{scale}' must go from a smaller to a larger integer, at most "
                    "{most} levels", scale=scale, most=_MAX_LEVELS))
            return None
        kind, values = "ordinal", list(range(lo, hi + 1))
    elif isinstance(scale, list) and len(scale) >= 2 and all(isinstance(s, str) for s in scale):
        if len(set(s.casefold() for s in scale)) != len(scale):
            bad(loc.dim_line(i, "scale"), f"{prefix}.scale",
                Msg("category names must be unique"))
            return None
        kind, names, values = "categorical", list(scale), list(range(len(scale)))
    else:
        bad(loc.dim_line(i, "scale"), f"{prefix}.scale",
            Msg('required: an integer range like "1..5", "binary", or a list of at least two '
                "category names; got {got}", got=short(scale)))
        return None
    anchors = d.get("anchors")
    labels = d.get("labels", {})
    if not isinstance(anchors, dict):
        bad(loc.dim_line(i, "anchors"), f"{prefix}.anchors",
            Msg("required: a table with an anchor text for every scale level"))
        return None
    if not isinstance(labels, dict):
        bad(loc.dim_line(i, "labels"), f"{prefix}.labels",
            Msg('must be a table level = "label"'))
        return None
    level_keys = [names[v] if names else str(v) for v in values]
    ok = True
    for extra in sorted(set(map(str, anchors)) - set(level_keys)):
        bad(loc.dim_line(i, "anchors"), f"{prefix}.anchors.{extra}",
            Msg("not a level of this scale (levels: {levels})", levels=", ".join(level_keys)))
        ok = False
    levels: list[Level] = []
    for v, lk in zip(values, level_keys, strict=True):
        text = anchors.get(lk)
        if not isinstance(text, str) or not text.strip():
            bad(loc.dim_line(i, "anchors"), f"{prefix}.anchors.{lk}",
                Msg("missing anchor text for level {level}; every level needs one", level=lk))
            ok = False
            continue
        default_label = names[v] if names else ("Yes" if kind == "binary" and v == 1 else
                                                "No" if kind == "binary" else str(v))
        lab = labels.get(lk, default_label)
        levels.append(Level(value=v, label=str(lab), anchor=text.strip()))
    dim_tasks = d.get("tasks")
    if dim_tasks is not None:
        if not isinstance(dim_tasks, list) or not dim_tasks:
            bad(loc.dim_line(i, "tasks"), f"{prefix}.tasks", Msg("must be a non-empty list of "
                                                                 "tasks"))
            ok = False
        else:
            for t in dim_tasks:
                if t not in tasks:
                    bad(loc.dim_line(i, "tasks"), f"{prefix}.tasks",
                        Msg("unknown task '{task}' (declared tasks: {tasks}; declare extra "
                            "families in the top-level tasks list)", task=t,
                            tasks=", ".join(tasks)))
                    ok = False
    default_level: MeasurementLevel = (
        "ordinal" if kind == "ordinal" or (kind == "categorical" and d.get("ordered")) else
        "nominal")
    lvl = d.get("level", default_level)
    if lvl not in ("nominal", "ordinal", "interval", "ratio"):
        bad(loc.dim_line(i, "level"), f"{prefix}.level",
            Msg("'{level}' is not one of nominal, ordinal, interval, ratio", level=lvl))
        ok = False
    if not ok:
        return None
    return Dimension(key=key, label=label.strip(), description=description.strip(), kind=kind,
                     level=lvl, levels=tuple(levels),
                     tasks=tuple(dim_tasks) if dim_tasks is not None else None)


def _texts(raw: Any, path: str = "") -> list[tuple[str, str]]:
    """Every string in the parsed TOML with its dotted path (depth is bounded already)."""
    if isinstance(raw, str):
        return [(path, raw)]
    if isinstance(raw, dict):
        return [t for k, v in raw.items() for t in _texts(v, f"{path}.{k}" if path else k)]
    if isinstance(raw, list):
        return [t for i, v in enumerate(raw) for t in _texts(v, f"{path}[{i + 1}]")]
    return []


def load_rubric(path: str | Path) -> Rubric:
    """Read and parse a rubric file; a wrong encoding or missing file is a FormatError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise FormatError([Problem(str(p), None, None, Msg("cannot read file: {reason}",
                                                           reason=exc.strerror))]) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError([Problem(str(p), line, None,
                                   Msg("not valid UTF-8; save the file as UTF-8"))]) from None
    return parse_rubric(text, file=p.name)


def load_default_rubric() -> Rubric:
    """The bundled companion rubric (empathy, safety, fluency, memory fidelity, plan quality)."""
    text = resources.files("data").joinpath("rubrics/companion.toml").read_text("utf-8")
    return parse_rubric(text, file="companion.toml")
