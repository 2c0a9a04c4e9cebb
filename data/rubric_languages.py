"""A rubric's texts in several languages: reading them from the file, and showing the rubric in
one language with the base text where a translation is missing.

Every text of a rubric (its name, description and guidelines; each dimension's label and
description; each level's label and anchor) is written either as a plain string, in the
rubric's own language (``language = "en"`` at the top, the default), or once per language with
TOML dotted keys::

    label.en = "Empathy"
    label.zh = "共情"
    [dimensions.anchors]
    1.en = "Ignores or dismisses the user's feelings."
    1.zh = "忽视或否定用户的感受。"

The parsed :class:`~data.rubric.Rubric` keeps the base texts where they always were and the
translations beside them (``translations[lang][path]``, e.g. ``"dimensions.empathy.anchors.1"``;
levels by their stored value). :meth:`~data.rubric.Rubric.in_language` gives the rubric in one
language (:func:`data.rubric_model.shown_in`): the same rubric (same version, same values),
every text in that language where it has one and in the base language where it has not, each
such text listed in ``fallback`` so a page can mark it.

Example
-------
>>> from data.rubric import parse_rubric
>>> r = parse_rubric('''
... name = "Demo"
... [[dimensions]]
... key = "empathy"
... label.en = "Empathy"
... label.zh = "共情"
... scale = "1..2"
... [dimensions.anchors]
... 1.en = "Dismissive."
... 1.zh = "否定感受。"
... 2 = "Warm and specific."
... ''')
>>> zh = r.in_language("zh").dimension("empathy")
>>> zh.label, zh.levels[0].anchor, zh.levels[1].anchor, sorted(zh.levels[1].fallback)
('共情', '否定感受。', 'Warm and specific.', ['anchor'])
>>> r.dimension("empathy").label  # the base text stays where it was
'Empathy'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from messages import Msg

from .rubric_model import DEFAULT_LANGUAGE, RUBRIC_LANGUAGES, Rubric

__all__ = ["RUBRIC_LANGUAGES", "DEFAULT_LANGUAGE", "translation_gaps", "text_paths",
           "read_text", "language_summary"]


def read_text(value: Any, fld: str, base: str, bad: Callable[[str, str], None]
              ) -> tuple[str | None, dict[str, str]]:
    """One text field of the file: a plain string (in the base language) or a table of one
    string per language, which must hold the base language. Returns (base text, {other
    language: text}); (None, {}) after reporting a problem with ``bad(field, message)``."""
    if isinstance(value, str):
        return value, {}
    if not isinstance(value, dict):
        bad(fld, Msg("must be a string, or one string per language ({field}.en = \"…\", "
                     "{field}.zh = \"…\")", field=fld))
        return None, {}
    texts: dict[str, str] = {}
    ok = True
    for lang, text in value.items():
        where = f"{fld}.{lang}"
        if lang not in RUBRIC_LANGUAGES:
            bad(where, Msg("unknown language '{language}' (rubric texts may be given in: "
                           "{languages})", language=lang, languages=", ".join(RUBRIC_LANGUAGES)))
            ok = False
        elif not isinstance(text, str):
            bad(where, Msg("must be a string"))
            ok = False
        elif not text.strip():
            bad(where, Msg("is empty: the text in the rubric's own language is required")
                if lang == base else
                Msg("is empty; leave the translation out and the {base} text is shown",
                    base=base))
            ok = False
        else:
            texts[lang] = text.strip()
    if ok and base not in texts:
        bad(f"{fld}.{base}", Msg("missing: with texts per language, the text in the rubric's "
                                 "own language is required too ({field} = \"…\"; the rubric's "
                                 "language is set by language = \"…\" at the top, default en)",
                                 field=f"{fld}.{base}"))
        ok = False
    if not ok:
        return None, {}
    return texts.pop(base), texts


def text_paths(rubric: Rubric) -> list[tuple[str, str]]:
    """Every text of the rubric that a reader sees, as (path, base text): the texts a
    translation can cover. Empty descriptions and level labels that are just the number are
    left out (there is nothing to translate)."""
    out = [("name", rubric.name)]
    out += [(f, getattr(rubric, f)) for f in ("description", "guidelines") if getattr(rubric, f)]
    for d in rubric.dimensions:
        p = f"dimensions.{d.key}"
        out.append((f"{p}.label", d.label))
        if d.description:
            out.append((f"{p}.description", d.description))
        for lv in d.levels:
            if lv.label != str(lv.value):
                out.append((f"{p}.labels.{lv.value}", lv.label))
            out.append((f"{p}.anchors.{lv.value}", lv.anchor))
    return out


def translation_gaps(rubric: Rubric) -> dict[str, tuple[int, list[str]]]:
    """For each language the rubric is translated into (at least one text): the number of
    texts and the paths of those without a translation (shown in the base language)."""
    paths = text_paths(rubric)
    out = {}
    for lang in RUBRIC_LANGUAGES:
        have = rubric.translations.get(lang) or {}
        if lang == rubric.language or not have:
            continue
        out[lang] = (len(paths), [p for p, _ in paths if p not in have])
    return out


def language_summary(rubric: Rubric, show: int = 6) -> str:
    """One line for the terminal: the rubric's languages and, for a partial translation, what
    is shown in the base language instead (a translation may leave texts out; they are
    marked where shown)."""
    parts = [f"{rubric.language} (the rubric's own)"]
    for lang, (total, missing) in translation_gaps(rubric).items():
        if not missing:
            parts.append(f"{lang} (every text)")
            continue
        listed = ", ".join(missing[:show]) + (f" and {len(missing) - show} more"
                                              if len(missing) > show else "")
        parts.append(f"{lang} ({total - len(missing)} of {total} texts; shown in "
                     f"{rubric.language} instead: {listed})")
    return "Languages: " + "; ".join(parts)
