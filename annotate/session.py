"""Who is signed in, and the guard every page calls first."""

from __future__ import annotations

import streamlit as st

from annotate import state
from annotate.services.auth import Identity

__all__ = ["identity", "require", "sign_out"]


def identity() -> Identity | None:
    return st.session_state.get(state.IDENTITY)


def require(role: str) -> Identity:
    """Stop the page unless the signed-in person has ``role`` (admins are not raters)."""
    who = identity()
    if who is None or who.role != role:
        st.error("This page is not available to you.")
        st.stop()
    return who


def sign_out() -> None:
    for key in list(st.session_state):
        if str(key).startswith(("h2h_", "score-")):
            del st.session_state[key]
    st.session_state.pop(state.IDENTITY, None)
