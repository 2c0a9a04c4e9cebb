"""Rubric files: parse and validate a TOML rubric into an immutable :class:`Rubric`.

The very same parsed rubric is shown to raters and rendered into judge prompts, so it carries
an anchor text for every scale level. Its ``version`` is a hash of the parsed content, so a
whitespace-only edit of the file keeps the version and any change of wording makes a new one.
The rubric itself (dimensions, levels, the version, a rubric in one language) is
:mod:`data.rubric_model`; every name of it is exported here too.

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

import re
import tomllib
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from messages import Msg

from ._files import short, value_problem
from .errors import FormatError, Problem
from .rubric_languages import read_text
from .rubric_model import (
    BUILTIN_TASKS,
    CANNOT_RATE,
    DEFAULT_LANGUAGE,
    PAIRWISE_SCALES,
    RUBRIC_LANGUAGES,
    Dimension,
    Level,
    MeasurementLevel,
    Rubric,
    ScaleKind,
    ShownDimension,
    ShownLevel,
    ShownRubric,
    rubric_from_definition,
    versioned,
)

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

_KEY_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_RANGE_RE = re.compile(r"^\s*(-?\d{1,9})\s*\.\.\s*(-?\d{1,9})\s*$")
_TOP_FIELDS = {"name", "description", "guidelines", "tasks", "dimensions", "language",
               "pairwise_scale"}
_DIM_FIELDS = {"key", "label", "description", "scale", "anchors", "labels", "tasks", "level",
               "ordered"}
_MAX_LEVELS = 101
_LEVELS = ("nominal", "ordinal", "interval", "ratio")

Where = Callable[[str], "int | None"]


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
    return _RubricParser(text, file).parse()


def _toml(text: str, file: str) -> dict[str, Any]:
    """The parsed TOML, or a FormatError that says what is wrong with it."""
    try:
        return tomllib.loads(text)
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


class _RubricParser:
    """One rubric file being read: every problem is collected (with its line) and reported
    together, so that one round of fixes makes the file load."""

    def __init__(self, text: str, file: str):
        self.text, self.file = text, file
        self.loc = _Locator(text)
        self.problems: list[Problem] = []
        self.base = DEFAULT_LANGUAGE
        self.translations: dict[str, dict[str, str]] = {}

    def bad(self, line: int | None, fld: str | None, msg: str) -> None:
        self.problems.append(Problem(self.file, line, fld, msg))

    def raise_problems(self) -> None:
        if self.problems:
            raise FormatError(self.problems)

    def text_of(self, value: Any, fld: str, path: str, where: Where) -> str | None:
        """A text field's base text (None after a problem); its translations are kept."""
        got, others = read_text(value, fld, self.base, lambda f, m: self.bad(where(f), f, m))
        for lang, t in others.items():
            self.translations.setdefault(lang, {})[path] = t
        return got

    def parse(self) -> Rubric:
        raw = _toml(self.text, self.file)
        self._check_values(raw)
        self.raise_problems()
        for k in sorted(set(raw) - _TOP_FIELDS):
            self.bad(self.loc.top_line(k), k, Msg("unknown field (allowed: {fields})",
                                                  fields=", ".join(sorted(_TOP_FIELDS))))
        self.base = self._language(raw)
        name = self._name(raw)
        top = self.loc.top_line
        description = self.text_of(raw.get("description", ""), "description", "description",
                                   top)
        guidelines = self.text_of(raw.get("guidelines", ""), "guidelines", "guidelines", top)
        tasks = self._tasks(raw)
        dims = self._dimensions(raw, tasks)
        pairwise = self._pairwise_scale(raw)
        self.raise_problems()
        return versioned(Rubric(
            name=name.strip(), description=description.strip(), guidelines=guidelines.strip(),
            tasks=tuple(tasks), dimensions=tuple(dims), language=self.base,
            translations={lang: dict(sorted(t.items()))
                          for lang, t in sorted(self.translations.items())},
            pairwise_scale=pairwise))

    def _pairwise_scale(self, raw: dict[str, Any]) -> int:
        pairwise = raw.get("pairwise_scale", 5)
        if isinstance(pairwise, bool) or pairwise not in PAIRWISE_SCALES:
            self.bad(self.loc.top_line("pairwise_scale"), "pairwise_scale",
                     Msg("{value} is not a preference scale: 5 (A much better … B much better, "
                         "the default) or 3 (A better, about the same, B better)",
                         value=short(pairwise)))
            return 5
        return int(pairwise)

    def _check_values(self, raw: dict[str, Any]) -> None:
        """Values TOML allows that a rubric does not (see :func:`data._files.value_problem`),
        and Markdown images in any text of any language."""
        found = value_problem(raw)
        if found is not None:
            self.bad(None, found[0] or None, found[1])
            return
        from .rubric_markdown import images_in  # the Markdown parser, only when a file is read
        for fld, val in _texts(raw):
            # rubric text is shown as Markdown (guidelines, anchors): an image there, in any of
            # Markdown's forms (found by the parser the pages use), would make every rater's
            # browser fetch it
            if images_in(val):  # in every language
                self.bad(self.loc.line_of(fld), fld,
                         Msg("images are not allowed in rubric text (the browser would fetch "
                             "them from elsewhere); describe the example in words"))

    def _language(self, raw: dict[str, Any]) -> str:
        base = raw.get("language", DEFAULT_LANGUAGE)
        if base in RUBRIC_LANGUAGES:
            return base
        self.bad(self.loc.top_line("language"), "language",
                 Msg("{language} is not a language rubric texts can be written in (one of: "
                     "{languages}); it names the language of the plain texts",
                     language=short(base), languages=", ".join(RUBRIC_LANGUAGES)))
        return DEFAULT_LANGUAGE

    def _name(self, raw: dict[str, Any]) -> str | None:
        name = self.text_of(raw.get("name"), "name", "name", self.loc.top_line) \
            if "name" in raw else None
        if name is not None and not name.strip() or "name" not in raw:
            self.bad(self.loc.top_line("name"), "name",
                     Msg("required: a non-empty string naming the rubric"))
        return name

    def _tasks(self, raw: dict[str, Any]) -> list[str]:
        """The built-in task families, then the file's own (in its order)."""
        tasks_raw = raw.get("tasks", list(BUILTIN_TASKS))
        if not isinstance(tasks_raw, list) or not all(isinstance(t, str) for t in tasks_raw):
            self.bad(self.loc.top_line("tasks"), "tasks",
                     Msg("must be a list of task family names"))
            return []
        for t in tasks_raw:
            if not _KEY_RE.match(t):
                self.bad(self.loc.top_line("tasks"), "tasks", Msg(
                    "'{task}' is not a valid task name (lower-case letters, digits, underscore)",
                    task=t))
        return list(dict.fromkeys(list(BUILTIN_TASKS) + list(tasks_raw)))

    def _dimensions(self, raw: dict[str, Any], tasks: list[str]) -> list[Dimension]:
        dims_raw = raw.get("dimensions")
        if not isinstance(dims_raw, list) or not dims_raw:
            self.bad(None, "dimensions", Msg("at least one [[dimensions]] table is required"))
            return []
        dims: list[Dimension] = []
        seen: dict[str, int] = {}
        for i, d in enumerate(dims_raw):
            prefix = f"dimensions[{i + 1}]"
            if not isinstance(d, dict):
                self.bad(self.loc.dim_line(i), prefix, Msg("must be a table"))
                continue
            dim = _DimensionParser(self, d, i, tasks).parse()
            if dim is None:
                continue
            if dim.key in seen:
                self.bad(self.loc.dim_line(i, "key"), f"{prefix}.key",
                         Msg("duplicate dimension key '{key}' (first in dimensions[{first}])",
                             key=dim.key, first=seen[dim.key]))
                continue
            seen[dim.key] = i + 1
            dims.append(dim)
        return dims


class _DimensionParser:
    """One ``[[dimensions]]`` table: its key, texts, scale, anchors and labels per level,
    task families and level of measurement. ``ok`` turns false at the first problem that
    still lets the rest of the table be checked; :meth:`parse` gives None then."""

    def __init__(self, rubric: _RubricParser, d: dict[str, Any], index: int,
                 tasks: list[str]):
        self.r, self.d, self.i, self.tasks = rubric, d, index, tasks
        self.ok = True
        self.prefix = f"dimensions[{index + 1}]"
        self.n_parts = 0

    def bad_at(self, field_key: str, fld: str, msg: str) -> None:
        """A problem on the line of this dimension's field ``field_key``."""
        self.r.bad(self.r.loc.dim_line(self.i, field_key), fld, msg)

    def where(self, fld: str) -> int | None:
        """"dimensions.empathy.anchors.3.zh" -> its line."""
        return self.r.loc.field_line(self.i, fld.split(".")[self.n_parts:])

    def text(self, value: Any, fld: str, path: str | None = None) -> str | None:
        got = self.r.text_of(value, fld, path or fld, self.where)
        if got is None:
            self.ok = False
        return got

    def parse(self) -> Dimension | None:
        for k in sorted(set(self.d) - _DIM_FIELDS):
            self.bad_at(k, f"{self.prefix}.{k}", Msg("unknown field (allowed: {fields})",
                                                     fields=", ".join(sorted(_DIM_FIELDS))))
        key = self.d.get("key")
        if not isinstance(key, str) or not _KEY_RE.match(key):
            self.bad_at("key", f"{self.prefix}.key", Msg(
                "required: lower-case letters, digits and underscores, starting with a letter"))
            return None
        self.prefix = f"dimensions.{key}"
        self.n_parts = len(self.prefix.split("."))
        label = self.text(self.d.get("label", key.replace("_", " ").capitalize()),
                          f"{self.prefix}.label")
        description = self.text(self.d.get("description", ""), f"{self.prefix}.description")
        scale = self._scale()
        if scale is None:
            return None
        kind, values, names = scale
        tables = self._tables()
        if tables is None:
            return None
        level_keys = [names[v] if names else str(v) for v in values]
        self._extra_levels(tables, level_keys)
        levels = self._levels(kind, values, names, level_keys, *tables)
        dim_tasks = self._dimension_tasks()
        level = self._measurement_level(kind)
        if not self.ok:
            return None
        return Dimension(key=key, label=label.strip(), description=description.strip(),
                         kind=kind, level=level, levels=tuple(levels),
                         tasks=tuple(dim_tasks) if dim_tasks is not None else None)

    def _scale(self) -> tuple[ScaleKind, list[int], list[str] | None] | None:
        """(kind, stored values, category names) from ``scale``: "binary", "1..5" or a list of
        category names; None after a problem."""
        scale = self.d.get("scale")
        fld = f"{self.prefix}.scale"
        if isinstance(scale, str) and scale.strip().lower() == "binary":
            return "binary", [0, 1], None
        if isinstance(scale, str) and (m := _RANGE_RE.match(scale)):
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi <= lo or hi - lo + 1 > _MAX_LEVELS:
                self.bad_at("scale", fld, Msg("range '{scale}' must go from a smaller to a "
                                              "larger integer, at most {most} levels",
                                              scale=scale, most=_MAX_LEVELS))
                return None
            return "ordinal", list(range(lo, hi + 1)), None
        if isinstance(scale, list) and len(scale) >= 2 and all(isinstance(s, str)
                                                               for s in scale):
            if len(set(s.casefold() for s in scale)) != len(scale):
                self.bad_at("scale", fld, Msg("category names must be unique"))
                return None
            return "categorical", list(range(len(scale))), list(scale)
        self.bad_at("scale", fld, Msg('required: an integer range like "1..5", "binary", or a '
                                      "list of at least two category names; got {got}",
                                      got=short(scale)))
        return None

    def _tables(self) -> tuple[dict, dict] | None:
        """The ``anchors`` and ``labels`` tables; None after a problem."""
        anchors = self.d.get("anchors")
        labels = self.d.get("labels", {})
        if not isinstance(anchors, dict):
            self.bad_at("anchors", f"{self.prefix}.anchors",
                        Msg("required: a table with an anchor text for every scale level"))
            return None
        if not isinstance(labels, dict):
            self.bad_at("labels", f"{self.prefix}.labels", Msg('must be a table level = "label"'))
            return None
        return anchors, labels

    def _extra_levels(self, tables: tuple[dict, dict], level_keys: list[str]) -> None:
        """Keys of ``anchors`` or ``labels`` that are not a level (a language code there is a
        translation written in the wrong place: the message says where it goes)."""
        for table_name, table in zip(("anchors", "labels"), tables, strict=True):
            for extra in sorted(set(map(str, table)) - set(level_keys)):
                levels_ = ", ".join(level_keys)
                msg = (Msg("not a level of this scale (levels: {levels}); to translate, give "
                           "each level's text per language: {example} = \"…\"",
                           levels=levels_, example=f"{level_keys[0]}.{extra}")
                       if extra in RUBRIC_LANGUAGES else
                       Msg("not a level of this scale (levels: {levels})", levels=levels_))
                fld = f"{self.prefix}.{table_name}.{extra}"
                self.r.bad(self.where(fld), fld, msg)
                self.ok = False

    def _levels(self, kind: ScaleKind, values: list[int], names: list[str] | None,
                level_keys: list[str], anchors: dict, labels: dict) -> list[Level]:
        """A level per value, each with its anchor (required) and label (defaults: the
        category name, Yes/No on a binary scale, else the number)."""
        levels: list[Level] = []
        for v, lk in zip(values, level_keys, strict=True):
            raw_anchor = anchors.get(lk)
            fld = f"{self.prefix}.anchors.{lk}"
            if raw_anchor is None or isinstance(raw_anchor, str) and not raw_anchor.strip():
                self.r.bad(self.where(fld) or self.r.loc.dim_line(self.i, "anchors"), fld,
                           Msg("missing anchor text for level {level}; every level needs one",
                               level=lk))
                self.ok = False
                continue
            anchor = self.text(raw_anchor, fld, f"{self.prefix}.anchors.{v}")
            default_label = names[v] if names else ("Yes" if kind == "binary" and v == 1 else
                                                    "No" if kind == "binary" else str(v))
            raw_label = labels.get(lk, default_label)
            if not isinstance(raw_label, str | dict):
                raw_label = str(raw_label)
            label = self.text(raw_label, f"{self.prefix}.labels.{lk}",
                              f"{self.prefix}.labels.{v}")
            if anchor is not None and label is not None:
                levels.append(Level(value=v, label=label, anchor=anchor.strip()))
        return levels

    def _dimension_tasks(self) -> list[str] | None:
        """The task families the dimension applies to (None: every one)."""
        dim_tasks = self.d.get("tasks")
        if dim_tasks is None:
            return None
        fld = f"{self.prefix}.tasks"
        if not isinstance(dim_tasks, list) or not dim_tasks:
            self.bad_at("tasks", fld, Msg("must be a non-empty list of tasks"))
            self.ok = False
            return dim_tasks
        for t in dim_tasks:
            if t not in self.tasks:
                self.bad_at("tasks", fld, Msg(
                    "unknown task '{task}' (declared tasks: {tasks}; declare extra families "
                    "in the top-level tasks list)", task=t, tasks=", ".join(self.tasks)))
                self.ok = False
        return dim_tasks

    def _measurement_level(self, kind: ScaleKind) -> MeasurementLevel:
        ordered = kind == "ordinal" or (kind == "categorical" and self.d.get("ordered"))
        level = self.d.get("level", "ordinal" if ordered else "nominal")
        if level not in _LEVELS:
            self.bad_at("level", f"{self.prefix}.level",
                        Msg("'{level}' is not one of nominal, ordinal, interval, ratio",
                            level=level))
            self.ok = False
        return level


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
