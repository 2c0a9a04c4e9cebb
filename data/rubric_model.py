"""The rubric as the program holds it: immutable dimensions, levels and anchors, the version
that hashes them, and the rubric shown in one language (:meth:`Rubric.in_language`).

Reading a rubric file is :mod:`data.rubric` (which also exports every name here); a rubric's
texts per language, :mod:`data.rubric_languages`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from messages import Msg

__all__ = ["BUILTIN_TASKS", "CANNOT_RATE", "DEFAULT_LANGUAGE", "RUBRIC_LANGUAGES",
           "PAIRWISE_SCALES",
           "MeasurementLevel", "ScaleKind", "Level", "Dimension", "Rubric", "ShownLevel",
           "ShownDimension", "ShownRubric", "rubric_from_definition", "versioned", "shown_in"]

BUILTIN_TASKS: tuple[str, ...] = ("dialogue", "recollection", "itinerary")
MeasurementLevel = Literal["nominal", "ordinal", "interval", "ratio"]
ScaleKind = Literal["ordinal", "binary", "categorical"]
RUBRIC_LANGUAGES: tuple[str, ...] = ("en", "zh")
"""The languages a rubric's texts may be given in: the app's languages (English, Simplified
Chinese), which are also the languages a judge prompt can be rendered in."""
DEFAULT_LANGUAGE = "en"
PAIRWISE_SCALES = (5, 3)
"""The preference scale of side-by-side comparisons: 5 points (A much better, A better, about
the same, B better, B much better; the default) or 3 (A better, about the same, B better)."""
CANNOT_RATE = "NA"
"""The keyword for "cannot rate" in a ratings file (an empty score means the same)."""
_NUMBER_RE = re.compile(r"[+-]?\d{1,20}(\.\d{0,20})?")


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
    return versioned(r)


def versioned(r: Rubric) -> Rubric:
    """``r`` with its ``version``: the hash of its definition."""
    object.__setattr__(r, "version", _hash_definition(r.definition()))
    return r


def shown_in(rubric: Rubric, language: str) -> Rubric:
    """``rubric`` with every text in ``language`` (the base text where none is given, named in
    the ``fallback`` sets). The rubric itself when ``language`` is its own."""
    if language == rubric.language:
        return rubric
    if language not in RUBRIC_LANGUAGES:
        raise ValueError(f"unknown language '{language}' (one of "
                         f"{', '.join(RUBRIC_LANGUAGES)})")
    tr = rubric.translations.get(language) or {}

    def pick(path: str, base: str) -> tuple[str, bool]:
        if not base:  # nothing written: nothing to show in any language
            return base, False
        text = tr.get(path)
        return (base, True) if text is None else (text, False)

    dims = [_shown_dimension(d, pick, language, rubric.language) for d in rubric.dimensions]
    texts = {f: pick(f, getattr(rubric, f)) for f in ("name", "description", "guidelines")}
    return ShownRubric(name=texts["name"][0], description=texts["description"][0],
                       guidelines=texts["guidelines"][0], tasks=rubric.tasks,
                       dimensions=tuple(dims), version=rubric.version,
                       language=rubric.language, translations=rubric.translations,
                       pairwise_scale=rubric.pairwise_scale,
                       fallback=frozenset(f for f, (_, fb) in texts.items() if fb),
                       shown_language=language)


def _shown_dimension(d: Dimension, pick, language: str, base: str) -> Dimension:
    p = f"dimensions.{d.key}"
    levels = []
    for lv in d.levels:
        label, label_fb = pick(f"{p}.labels.{lv.value}", lv.label)
        if lv.label == str(lv.value):  # a bare number reads the same in every language
            label_fb = False
        anchor, anchor_fb = pick(f"{p}.anchors.{lv.value}", lv.anchor)
        levels.append(ShownLevel(value=lv.value, label=label, anchor=anchor,
                                 fallback=frozenset(n for n, fb in (("label", label_fb),
                                                                    ("anchor", anchor_fb))
                                                    if fb)))
    label, label_fb = pick(f"{p}.label", d.label)
    description, desc_fb = pick(f"{p}.description", d.description)
    return ShownDimension(key=d.key, label=label, description=description, kind=d.kind,
                          level=d.level, levels=tuple(levels), tasks=d.tasks,
                          fallback=frozenset(n for n, fb in (("label", label_fb),
                                                             ("description", desc_fb)) if fb),
                          shown_language=language, fallback_language=base)
