"""Signing in with an access code, staying signed in, signing out.

A sign-in opens a session in the study database (:mod:`data.sessions`); the browser keeps
its token in a cookie, never in the address bar. Every page re-checks the session and every
save checks it again in the save's own transaction, so sign-out, deactivation and idleness
take effect at once — on every app server of the study. Guessing codes is slowed by the
shared, database-backed :class:`~annotate.services.throttle.Throttle`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from annotate.services.i18n import N_
from annotate.services.proxies import client_address, parse_trusted
from annotate.services.throttle import Throttle, code_prefix
from data.raters import authenticate
from data.sessions import SessionEnded, end_session, open_session, resume

__all__ = ["Identity", "sign_in", "resume_identity", "sign_out", "SessionEnded",
           "GENERIC_FAILURE", "THROTTLE", "request_client", "TRUSTED_PROXIES_ENV"]

GENERIC_FAILURE = N_("That code did not work. Check it and try again, or ask the study team.")
TRUSTED_PROXIES_ENV = "H2H_TRUSTED_PROXIES"  # set by `h2h serve --trusted-proxy`
THROTTLE = Throttle()


@dataclass(frozen=True)
class Identity:
    """Who is signed in, and the token of their session (never the access code)."""

    rater_id: int
    name: str
    role: str
    session: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def request_client(peer: str | None, forwarded_for: Sequence[str]) -> str:
    """The client address of a request, trusting ``X-Forwarded-For`` only from the proxies
    named in ``$H2H_TRUSTED_PROXIES``."""
    return client_address(peer, forwarded_for,
                          parse_trusted(os.environ.get(TRUSTED_PROXIES_ENV, "")))


def sign_in(engine: Engine, code: str, client: str | None = None,
            throttle: Throttle | None = None,
            sleep: Callable[[float], None] = time.sleep) -> Identity | None:
    """The identity for ``code`` with a new session, or None (the caller shows
    :data:`GENERIC_FAILURE`). Counted and slowed as the throttle says, always before the
    code is checked (:mod:`annotate.services.throttle`): the answer, right or wrong, comes
    only after the wait."""
    throttle = throttle or THROTTLE
    code = (code or "").strip()
    prefix = code_prefix(code)
    wait = throttle.before_check(engine, prefix, client)
    if wait > 0:
        sleep(wait)
    try:
        rater = authenticate(engine, code) if code else None
    except BaseException:
        throttle.after_check(engine, prefix, client, ok=False)
        raise
    throttle.after_check(engine, prefix, client, ok=rater is not None)
    if rater is None:
        return None
    token, info = open_session(engine, rater.id, client=client)
    return Identity(info.rater_id, info.name, info.role, token)


def resume_identity(engine: Engine, token: str | None) -> Identity:
    """The identity of a live session (a reload, another tab, another app server), or
    :class:`SessionEnded` saying why not."""
    info = resume(engine, token)
    return Identity(info.rater_id, info.name, info.role, token)


def sign_out(engine: Engine, who: Identity) -> None:
    """End the session everywhere: its token is refused from now on by every server."""
    end_session(engine, who.session, "signed_out")
