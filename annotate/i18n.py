"""The language of this browser tab: ``_("text")`` translates an app string into it.

The language is the one chosen on the sign-in page (or in the sidebar), else the signed-in
rater's stored choice (``rater.language``), else English. Catalogs: :mod:`annotate.services.i18n`.
"""

from __future__ import annotations

import streamlit as st

from annotate import state
from annotate.services.i18n import DEFAULT, language_or_default, translations

__all__ = ["_", "ngettext", "language", "set_language"]


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
