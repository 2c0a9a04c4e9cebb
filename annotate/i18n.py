"""The language of this browser tab: ``_("text")`` translates an app string into it.

The language is the one chosen on the sign-in page (or in the sidebar), else the signed-in
rater's stored choice (``rater.language``), else English. Catalogs: :mod:`annotate.services.i18n`.
``tr(x)`` shows a message made elsewhere (a data-layer error, an analysis verdict: a ``Msg``)
in that language; anything else (numbers, names, text from files) as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from annotate import state
from annotate.services.i18n import (
    DEFAULT,
    LABELLED,
    language_or_default,
    problem_lines,
    translate,
    translate_error,
    translations,
)
from data.errors import FormatError

__all__ = ["_", "ngettext", "language", "set_language", "tr", "problems_of", "option_labels",
           "labelled"]


def language() -> str:
    return language_or_default(st.session_state.get(state.LANGUAGE, DEFAULT))


def set_language(lang: str) -> None:
    st.session_state[state.LANGUAGE] = language_or_default(lang)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message for the number ``n``, in this tab's language."""
    return translations(language()).ngettext(singular, plural, n)


def _(message: str) -> str:
    """``message`` in this tab's language (as written when it has no translation)."""
    return translations(language()).gettext(message)


def option_labels(labels: dict[str, str] | None = None) -> Callable[[str], str]:
    """A ``format_func`` for a widget's options: each option (or ``labels[option]``) in this
    tab's language. It holds the catalog itself, so it also works where Streamlit calls it
    outside the page's run (AppTest does)."""
    catalog = translations(language())
    labels = labels or {}
    return lambda option: catalog.gettext(labels.get(option, option))


def labelled(label: str, text: Any) -> str:
    """``text`` (translated when a message) after ``label``, with the language's colon."""
    return _(LABELLED).format(label=label, text=tr(text))


def tr(text: Any) -> Any:
    """A message (``Msg``) or an error in this tab's language; anything else unchanged."""
    if isinstance(text, BaseException):
        return translate_error(text, translations(language()))
    return translate(text, translations(language()))


def problems_of(exc: FormatError, limit: int = 50) -> str:
    """A rejected file's problems, one ``file:line: field: problem`` a line, translated."""
    return "\n".join(problem_lines(exc, translations(language()), limit))
