"""Process-wide resources for the app, cached across reruns and sessions.

The database layer is imported on first use, not with this module: the sign-in page's first
run needs none of it (`h2h serve` loads it on another thread meanwhile, annotate.serving).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from data.location import file_url, given, is_url

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from data.rubric import Rubric


def resolve_url() -> str:
    """The study's URL: :func:`data.engine.resolve_url` of $H2H_DB (a test keeps the two
    equal) without importing the database layer; a URL is checked when the engine is made."""
    raw = given()
    return raw if is_url(raw) else file_url(raw)


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    from data.engine import get_engine

    return get_engine(url)


def engine() -> Engine:
    """The study engine for $H2H_DB (set by `h2h serve`), one per URL per process."""
    return _engine(resolve_url())


# A resource, not data: every session and rerun shares the one parsed (frozen) rubric of
# this process instead of unpickling a copy on every read.
@st.cache_resource(ttl=30, show_spinner=False)
def _rubric(url: str) -> Rubric:
    from data.study import current_rubric

    return current_rubric(_engine(url))


def cached_rubric(_engine: Engine | None = None, language: str | None = None) -> Rubric:
    """The study's current rubric, re-read at most every 30 s (admins may import a new one);
    a version already parsed in this process is not parsed again (data.study).

    With ``language``: the rubric shown in that language (the rubric's own text where a
    translation is missing, marked), made once per process, rubric version and language
    (:meth:`~data.rubric.Rubric.in_language` keeps it with the parsed rubric)."""
    rubric = _rubric(resolve_url())
    return rubric if language is None else rubric.in_language(language)


def forget_rubric() -> None:
    """Read the rubric afresh on next use (after an admin imported a new version)."""
    _rubric.clear()


@st.cache_resource(show_spinner=False)
def _study_key(url: str) -> str:
    from data.study import get_study

    study = get_study(_engine(url))
    return f"{study.id}|{study.created_at.isoformat()}"


def study_key() -> str:
    """What tells this study apart from another served on the same host (the same on every
    app server of one study): names its session cookie."""
    return _study_key(resolve_url())
