"""The app's languages: message catalogs in gettext's PO format, read with Babel.

Every string the app shows is written in English in the code and wrapped in ``_()``;
``annotate/locale/<lang>.po`` holds its translation. ``h2h`` reads a catalog once per process
(no compiled ``.mo`` files to keep in step). A string with no translation shows in English —
and ``tests/annotate/test_i18n.py`` fails for it, so none ships untranslated.

Pure: no Streamlit here; :mod:`annotate.i18n` picks the signed-in rater's language.
"""

from __future__ import annotations

import gettext
import io
from functools import cache
from pathlib import Path

__all__ = ["LANGUAGES", "DEFAULT", "CATALOGS", "translations", "language_or_default", "N_"]

LANGUAGES = {"en": "English", "zh": "中文"}
DEFAULT = "en"
CATALOGS = Path(__file__).resolve().parents[1] / "locale"


def N_(message: str) -> str:  # noqa: N802 (gettext's name for "translate later")
    """Mark a string for the catalog where it is defined; ``_()`` translates it where shown."""
    return message


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
