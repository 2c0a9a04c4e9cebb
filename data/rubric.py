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
>>> r.language, r.in_language("zh").dimension("empathy").label
('en', '共情')

Texts may be given per language (``label.zh = "…"``): see :mod:`data.rubric_languages`.
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

from messages import Msg

from ._files import short, value_problem
from .errors import FormatError, Problem
from .rubric_languages import DEFAULT_LANGUAGE, RUBRIC_LANGUAGES, read_text, shown_in

__all__ = [
    "BUILTIN_TASKS",
    "CANNOT_RATE",
    "Level",
    "Dimension",
    "Rubric",
    "ShownLevel",
    "ShownDimension",
    "ShownRubric",
    "RUBRIC_LANGUAGES",
    "PAIRWISE_SCALES",
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
_TOP_FIELDS = {"name", "description", "guidelines", "tasks", "dimensions", "language",
               "pairwise_scale"}
PAIRWISE_SCALES = (5, 3)
"""The preference scale of side-by-side comparisons: 5 points (A much better, A better, about
the same, B better, B much better; the default) or 3 (A better, about the same, B better)."""
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
    language: str = DEFAULT_LANGUAGE
    """The language the texts above are written in (the base language)."""
    translations: dict[str, dict[str, str]] = field(default_factory=dict, hash=False)
    """Per other language, its texts by path (``"dimensions.empathy.anchors.1"``; see
    :func:`data.rubric_languages.text_paths`)."""
    pairwise_scale: int = 5
    """Points of the preference scale when two replies are compared side by side (5 or 3)."""

    def in_language(self, language: str) -> Rubric:
        """This rubric with its texts in ``language``, the base text where a translation is
        missing (named in each object's ``fallback``). Made once per rubric and language."""
        cache = self.__dict__.setdefault("_shown", {})
        shown = cache.get(language)
        if shown is None:
            shown = cache[language] = shown_in(self, language)
        return shown

    @property
    def languages(self) -> tuple[str, ...]:
        """The base language, then every language with at least one translated text."""
        return (self.language,) + tuple(lang for lang in RUBRIC_LANGUAGES
                                        if lang != self.language and self.translations.get(lang))

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
        """The canonical JSON-able content that is stored and hashed. A rubric without
        translations in the default language has exactly the definition (and so the version)
        it had before rubrics could carry languages."""
        out = asdict(self)
        out.pop("version")
        if out["language"] == DEFAULT_LANGUAGE:
            out.pop("language")
        if not out["translations"]:
            out.pop("translations")
        if out["pairwise_scale"] == 5:  # the default: versions stay what they were
            out.pop("pairwise_scale")
        return out


@dataclass(frozen=True)
class ShownLevel(Level):
    """A level as shown in one language (:meth:`Rubric.in_language`); ``fallback`` names the
    texts (``label``, ``anchor``) shown in the rubric's base language for want of a
    translation."""

    fallback: frozenset[str] = field(default=frozenset(), compare=False)


@dataclass(frozen=True)
class ShownDimension(Dimension):
    """A dimension as shown in one language; ``fallback`` names its texts (``label``,
    ``description``) in ``fallback_language`` (the rubric's base language) instead."""

    fallback: frozenset[str] = field(default=frozenset(), compare=False)
    shown_language: str = DEFAULT_LANGUAGE
    fallback_language: str = DEFAULT_LANGUAGE


@dataclass(frozen=True)
class ShownRubric(Rubric):
    """A rubric as shown in one language: a view of the stored rubric (same version), never
    stored itself; ``fallback`` names the rubric's texts (``name``, ``description``,
    ``guidelines``) shown in the base language."""

    fallback: frozenset[str] = field(default=frozenset(), compare=False)
    shown_language: str = DEFAULT_LANGUAGE

    def definition(self) -> dict[str, Any]:
        raise ValueError("a rubric shown in one language is a view; store the rubric itself "
                         "(its definition holds every language)")

    def in_language(self, language: str) -> Rubric:
        if language == self.shown_language:
            return self
        raise ValueError("show the rubric itself in another language, not a view of it")


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
               guidelines=defn["guidelines"], tasks=tuple(defn["tasks"]), dimensions=dims,
               language=defn.get("language", DEFAULT_LANGUAGE),
               translations={lang: dict(texts)
                             for lang, texts in (defn.get("translations") or {}).items()},
               pairwise_scale=int(defn.get("pairwise_scale", 5)))
    return _with_version(r)


def _with_version(r: Rubric) -> Rubric:
    object.__setattr__(r, "version", _hash_definition(r.definition()))
    return r


class _Locator:
    """Finds the line of a field so errors can point into the file."""

    def __init__(self, text: str):
        self.lines = text.split("\n")  # TOML breaks lines on \n only, never on U+2028 …
        self.headers = [i + 1 for i, ln in enumerate(self.lines)
                        if ln.strip().startswith("[[dimensions]]")]

    def _block(self, index: int) -> tuple[int, int]:
        start = self.headers[index]
        end = self.headers[index + 1] if index + 1 < len(self.headers) else len(self.lines) + 1
        return start, end

    def _find(self, pattern: str, start: int, end: int) -> int | None:
        pat = re.compile(pattern)
        return next((n for n in range(start, end) if pat.match(self.lines[n - 1])), None)

    def dim_line(self, index: int, key: str | None = None) -> int | None:
        if index >= len(self.headers):
            return None
        start, end = self._block(index)
        if key is not None:
            found = self._find(rf"^\s*(\[dimensions\.)?{re.escape(key)}\b", start, end)
            if found is not None:
                return found
        return start

    def field_line(self, index: int, parts: list[str]) -> int | None:
        """The line of ``label.zh``, ``anchors.3`` or ``anchors.3.zh`` in the index-th
        dimension (in its ``[dimensions.anchors]`` table or written inline)."""
        if index >= len(self.headers) or not parts:
            return None
        start, end = self._block(index)
        keys = [rf'"?{re.escape(p)}"?' for p in parts]
        if parts[0] in ("anchors", "labels") and len(parts) > 1:
            sub = self._find(rf"^\s*\[dimensions\.{parts[0]}\.{keys[1]}\]", start, end)
            if sub is not None:  # [dimensions.anchors.zh]: a table where a level belongs
                return sub
            head = self._find(rf"^\s*\[dimensions\.{parts[0]}\]", start, end)
            if head is not None:
                stop = self._find(r"^\s*\[", head + 1, end) or end
                found = self._find(r"^\s*" + r"\s*\.\s*".join(keys[1:]) + r"\s*=", head + 1,
                                   stop) or self._find(rf"^\s*{keys[1]}\s*[.=]", head + 1, stop)
                return found or head
        found = self._find(r"^\s*" + r"\s*\.\s*".join(keys) + r"\s*=", start, end)
        return found or self.dim_line(index, parts[0])

    def top_line(self, key: str) -> int | None:
        """The line of a top-level field (``guidelines``, ``guidelines.zh``): before the
        first dimension, where TOML puts the top-level keys."""
        end = self.headers[0] if self.headers else len(self.lines) + 1
        keys = r"\s*\.\s*".join(rf'"?{re.escape(p)}"?' for p in key.split("."))
        found = self._find(rf"^\s*{keys}\s*=", 1, end)
        if found is None and "." in key:
            return self.top_line(key.split(".")[0])
        return found

    def line_of(self, fld: str) -> int | None:
        """The line of a field as :func:`_texts` names it (``dimensions[2].anchors.1.zh``)."""
        m = re.match(r"^dimensions\[(\d+)\]\.?(.*)$", fld)
        if m:
            rest = [p for p in m.group(2).split(".") if p]
            i = int(m.group(1)) - 1
            return self.field_line(i, rest) if rest else self.dim_line(i)
        top = fld.split(".")[0].split("[")[0]
        return self.top_line(fld) if top in _TOP_FIELDS else None


def parse_rubric(text: str, file: str = "<rubric>") -> Rubric:
    """Parse rubric TOML text. Raises :class:`FormatError` naming file, line and field.

    Every text may be a plain string (in the rubric's ``language``, default ``en``) or one
    string per language (``label.en = "…"``, ``label.zh = "…"``); see
    :mod:`data.rubric_languages`."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        line = int(m.group(1)) if m else None
        msg = (Msg("not valid TOML: {reason}; to give a text in several languages, write each "
                   "one with its language (1.en = \"…\" and 1.zh = \"…\", not 1 = \"…\" "
                   "beside 1.zh)", reason=exc)
               if "overwrite" in str(exc) else Msg("not valid TOML: {reason}", reason=exc))
        raise FormatError([Problem(file, line, None, msg)]) from None
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
        if _MD_IMAGE_RE.search(val):  # in every language
            bad(loc.line_of(fld), fld,
                Msg("images are not allowed in rubric text (the browser would fetch them from "
                    "elsewhere); describe the example in words"))
    if problems:
        raise FormatError(problems)

    for k in sorted(set(raw) - _TOP_FIELDS):
        bad(loc.top_line(k), k, Msg("unknown field (allowed: {fields})",
                                    fields=", ".join(sorted(_TOP_FIELDS))))
    base = raw.get("language", DEFAULT_LANGUAGE)
    if base not in RUBRIC_LANGUAGES:
        bad(loc.top_line("language"), "language",
            Msg("{language} is not a language rubric texts can be written in (one of: "
                "{languages}); it names the language of the plain texts", language=short(base),
                languages=", ".join(RUBRIC_LANGUAGES)))
        base = DEFAULT_LANGUAGE
    translations: dict[str, dict[str, str]] = {}

    def text_of(value: Any, fld: str, path: str, where) -> str | None:
        """A text field's base text (None after a problem); its translations are kept."""
        got, others = read_text(value, fld, base, lambda f, m: bad(where(f), f, m))
        for lang, t in others.items():
            translations.setdefault(lang, {})[path] = t
        return got

    def top_where(fld: str) -> int | None:
        return loc.top_line(fld)

    name = text_of(raw.get("name"), "name", "name", top_where) if "name" in raw else None
    if name is not None and not name.strip() or "name" not in raw:
        bad(loc.top_line("name"), "name", Msg("required: a non-empty string naming the rubric"))
    description = text_of(raw.get("description", ""), "description", "description", top_where)
    guidelines = text_of(raw.get("guidelines", ""), "guidelines", "guidelines", top_where)
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
        dim = _parse_dimension(d, i, prefix, loc, tasks, bad, text_of)
        if dim is None:
            continue
        if dim.key in seen:
            bad(loc.dim_line(i, "key"), f"{prefix}.key",
                Msg("duplicate dimension key '{key}' (first in dimensions[{first}])",
                    key=dim.key, first=seen[dim.key]))
            continue
        seen[dim.key] = i + 1
        dims.append(dim)
    pairwise = raw.get("pairwise_scale", 5)
    if isinstance(pairwise, bool) or pairwise not in PAIRWISE_SCALES:
        bad(loc.top_line("pairwise_scale"), "pairwise_scale",
            Msg("{value} is not a preference scale: 5 (A much better … B much better, the "
                "default) or 3 (A better, about the same, B better)", value=short(pairwise)))
    if problems:
        raise FormatError(problems)
    rub = Rubric(name=name.strip(), description=description.strip(),
                 guidelines=guidelines.strip(), tasks=tuple(tasks), dimensions=tuple(dims),
                 language=base,
                 translations={lang: dict(sorted(t.items()))
                               for lang, t in sorted(translations.items())},
                 pairwise_scale=int(pairwise))
    return _with_version(rub)


def _parse_dimension(d, i, prefix, loc: _Locator, tasks, bad, text_of) -> Dimension | None:
    for k in sorted(set(d) - _DIM_FIELDS):
        bad(loc.dim_line(i, k), f"{prefix}.{k}",
            Msg("unknown field (allowed: {fields})", fields=", ".join(sorted(_DIM_FIELDS))))
    key = d.get("key")
    if not isinstance(key, str) or not _KEY_RE.match(key):
        bad(loc.dim_line(i, "key"), f"{prefix}.key",
            Msg("required: lower-case letters, digits and underscores, starting with a letter"))
        return None
    prefix = f"dimensions.{key}"
    n_parts = len(prefix.split("."))

    def where(fld: str) -> int | None:  # "dimensions.empathy.anchors.3.zh" -> its line
        return loc.field_line(i, fld.split(".")[n_parts:])

    ok = True
    label = text_of(d.get("label", key.replace("_", " ").capitalize()), f"{prefix}.label",
                    f"{prefix}.label", where)
    description = text_of(d.get("description", ""), f"{prefix}.description",
                          f"{prefix}.description", where)
    if label is None or description is None:
        ok = False
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
    for table_name, table in (("anchors", anchors), ("labels", labels)):
        for extra in sorted(set(map(str, table)) - set(level_keys)):
            levels_ = ", ".join(level_keys)
            msg = (Msg("not a level of this scale (levels: {levels}); to translate, give each "
                       "level's text per language: {example} = \"…\"", levels=levels_,
                       example=f"{level_keys[0]}.{extra}")
                   if extra in RUBRIC_LANGUAGES else
                   Msg("not a level of this scale (levels: {levels})", levels=levels_))
            bad(where(f"{prefix}.{table_name}.{extra}"), f"{prefix}.{table_name}.{extra}", msg)
            ok = False
    levels: list[Level] = []
    for v, lk in zip(values, level_keys, strict=True):
        raw_anchor = anchors.get(lk)
        fld = f"{prefix}.anchors.{lk}"
        if raw_anchor is None or isinstance(raw_anchor, str) and not raw_anchor.strip():
            bad(where(fld) or loc.dim_line(i, "anchors"), fld,
                Msg("missing anchor text for level {level}; every level needs one", level=lk))
            ok = False
            continue
        anchor = text_of(raw_anchor, fld, f"{prefix}.anchors.{v}", where)
        default_label = names[v] if names else ("Yes" if kind == "binary" and v == 1 else
                                                "No" if kind == "binary" else str(v))
        raw_label = labels.get(lk, default_label)
        if not isinstance(raw_label, str | dict):
            raw_label = str(raw_label)
        label_text = text_of(raw_label, f"{prefix}.labels.{lk}", f"{prefix}.labels.{v}", where)
        if anchor is None or label_text is None:
            ok = False
            continue
        levels.append(Level(value=v, label=label_text, anchor=anchor.strip()))
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
