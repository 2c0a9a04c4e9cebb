"""A rater's access from the Raters page: a new code for a lost one, reactivation. Each
returns what the page says afterwards, in words the admin can act on."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from data.raters import reactivate_rater, reissue_code
from messages import Msg, nMsg

__all__ = ["reissue", "reactivate"]


def reissue(engine: Engine, name: str) -> tuple[str, Msg]:
    """A new access code for ``name`` (the old one stops working and their open sessions end
    at once, as on deactivation); returns (the code, shown once; the message)."""
    code, n, active = reissue_code(engine, name)
    if not active:
        return code, Msg("{name} is deactivated: reactivate them to let them sign in with "
                         "the new code.", name=name)
    return code, nMsg("The old code of {name} no longer works; {n} open session ended.",
                      "The old code of {name} no longer works; {n} open sessions ended.", n,
                      name=name)


def reactivate(engine: Engine, name: str) -> Msg:
    """Let a deactivated rater sign in again; the message says if they still need a code."""
    changed, has_code = reactivate_rater(engine, name)
    if not changed:
        return Msg("{name} is already active; nothing changed.", name=name)
    if not has_code:
        return Msg("{name} may sign in again once given a code (New access code).", name=name)
    return Msg("{name} may sign in again.", name=name)
