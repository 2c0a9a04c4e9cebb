"""Process-wide resources for the app, cached across reruns and sessions."""

from __future__ import annotations

import streamlit as st
from sqlalchemy.engine import Engine

from data.engine import get_engine, resolve_url
from data.rubric import Rubric
from data.study import current_rubric, get_study


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    return get_engine(url)


def engine() -> Engine:
    """The study engine for $H2H_DB (set by `h2h serve`), one per URL per process."""
    return _engine(resolve_url())


# A resource, not data: every session and rerun shares the one parsed (frozen) rubric of
# this process instead of unpickling a copy on every read.
@st.cache_resource(ttl=30, show_spinner=False)
def _rubric(url: str) -> Rubric:
    return current_rubric(get_engine(url))


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
    study = get_study(get_engine(url))
    return f"{study.id}|{study.created_at.isoformat()}"


def study_key() -> str:
    """What tells this study apart from another served on the same host (the same on every
    app server of one study): names its session cookie."""
    return _study_key(resolve_url())
