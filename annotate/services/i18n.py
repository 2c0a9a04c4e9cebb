"""The app's languages: message catalogs in gettext's PO format, read with Babel.

Every string the app shows is written in English in the code and wrapped in ``_()``;
``annotate/locale/<lang>.po`` holds its translation. ``h2h`` reads a catalog once per process
(no compiled ``.mo`` files to keep in step). A string with no translation shows in English —
and ``tests/annotate/test_i18n.py`` fails for it, so none ships untranslated.

Messages made elsewhere — the data layer's errors, the analysis package's verdicts, readings
and reasons, the judge package's messages — are :class:`messages.Msg`: English text that
keeps its template and parameters.
:func:`translate` shows one in a catalog's language.

Pure: no Streamlit here; :mod:`annotate.i18n` picks the signed-in rater's language.
"""

from __future__ import annotations

import gettext
import io
from functools import cache
from pathlib import Path
from typing import Any

from data.errors import SHOWN_PROBLEMS, FormatError
from messages import message_of, nMsg

__all__ = ["LANGUAGES", "DEFAULT", "CATALOGS", "translations", "language_or_default", "N_",
           "translate", "translate_error", "problem_lines", "message_frame", "LABELLED"]

LANGUAGES = {"en": "English", "zh": "中文"}
DEFAULT = "en"
CATALOGS = Path(__file__).resolve().parents[1] / "locale"


def N_(message: str) -> str:  # noqa: N802 (gettext's name for "translate later")
    """Mark a string for the catalog where it is defined; ``_()`` translates it where shown."""
    return message


LABELLED = N_("{label}: {text}")
"""A text after what it is about ("Empathy: no ratings"): Chinese writes a full-width colon
("共情：暂无评分")."""


def language_or_default(language: str | None) -> str:
    return language if language in LANGUAGES else DEFAULT


@cache
def translations(language: str) -> gettext.NullTranslations:
    """The catalog of ``language`` (English: the strings as written)."""
    po = CATALOGS / f"{language}.po"
    if language == DEFAULT or not po.exists():
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as fh:
        catalog = read_po(fh, locale=language)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return gettext.GNUTranslations(buf)


def translate(text: Any, catalog: gettext.NullTranslations) -> Any:
    """``text`` in the catalog's language when it is a message (a ``str`` with a ``template``
    and ``params``: data's, analysis's or judge's ``Msg``), its message parameters
    translated too; anything else (numbers, ids, names, text from files) as it is."""
    template = getattr(text, "template", None)
    if not isinstance(text, str) or template is None:
        return text
    if not template:  # gettext("") is the catalog's header, never a translation
        return str(text)
    if text.plural is None:
        form = catalog.gettext(template)
    else:
        form = catalog.ngettext(template, text.plural, text.n)
    params = {k: translate(v, catalog) for k, v in text.params.items()}
    try:
        return form.format(**params)
    except (KeyError, IndexError, ValueError):  # a damaged translation: the English text
        return str(text)


def message_frame(rows: list[dict], columns: list[str] | None = None):
    """A DataFrame of ``rows`` whose message cells stay messages: pandas 3 stores a column of
    text as its own string type, which would keep the English text and drop the template,
    so a column holding a message is kept as Python objects."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=columns)
    for c in df.columns:
        values = [r.get(c) for r in rows]
        if any(getattr(v, "template", None) is not None for v in values):
            df[c] = pd.Series(values, index=df.index, dtype=object)
    return df


def problem_lines(exc: FormatError, catalog: gettext.NullTranslations,
                  limit: int = 50) -> list[str]:
    """A rejected file's ``file:line: field: problem`` lines in the catalog's language."""
    lines = [translate(p.text, catalog) for p in exc.problems[:limit]]
    if len(exc.problems) > limit:
        lines.append(translate(nMsg("… and {n} more problem", "… and {n} more problems",
                                    len(exc.problems) - limit), catalog))
    return lines


def translate_error(exc: BaseException, catalog: gettext.NullTranslations) -> str:
    """An error's message in the catalog's language (a rejected file: its head line, then
    each problem on a line of its own)."""
    if isinstance(exc, FormatError):
        return "\n".join([translate(exc.head, catalog)]
                         + [f"  {line}" for line in problem_lines(exc, catalog,
                                                                  SHOWN_PROBLEMS)])
    return translate(message_of(exc), catalog)
