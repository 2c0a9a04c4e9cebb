"""Sign-in sessions kept in the study database: opened at sign-in, checked on every page and
every save, ended by sign-out, deactivation, a new access code, idleness or age.

Because they live in the study database, every app server of one study sees the same
sessions: a rater signed in on one server continues on another, and a session ended on one is
refused by all at once. The browser holds a random token (about 256 bits); only its SHA-256
is stored, so a copy of the database signs nobody in.

Timeouts (minutes / hours) come from ``H2H_SESSION_IDLE_MINUTES`` (default 120) and
``H2H_SESSION_HOURS`` (default 12).

Example
-------
>>> from datetime import timedelta
>>> ended = SessionEnded("idle")
>>> ended.reason, "Sign in again" in str(ended)
('idle', True)
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import bindparam
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Connection, Engine
from sqlmodel import Session, select, update

from .engine import write_session
from .errors import H2HError
from .models import AuthSession, Rater, utcnow

__all__ = ["SessionEnded", "SessionInfo", "EndReason", "open_session", "resume",
           "check_in", "end_session", "revoke_rater_sessions", "lock_rater", "idle_timeout",
           "lifetime", "token_hash"]

EndReason = Literal["signed_out", "deactivated", "reissued", "idle", "expired", "unknown"]
_TOUCH_EVERY = timedelta(seconds=60)  # last_seen_at is written at most this often


def idle_timeout() -> timedelta:
    return timedelta(minutes=float(os.environ.get("H2H_SESSION_IDLE_MINUTES", "120")))


def lifetime() -> timedelta:
    return timedelta(hours=float(os.environ.get("H2H_SESSION_HOURS", "12")))


def _minutes_in_words(span: timedelta) -> str:
    """'120 minutes', '1 minute', '12 seconds' (a short test setting is not '0 minutes')."""
    seconds = round(span.total_seconds())
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = round(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


class SessionEnded(H2HError):
    """The session behind a page or a save is over; ``reason`` says why, the message says
    what to do. Nothing was saved by the request that raised it."""

    def __init__(self, reason: EndReason):
        self.reason = reason
        idle = _minutes_in_words(idle_timeout())
        hours = lifetime().total_seconds() / 3600
        super().__init__({
            "signed_out": "You were signed out (here or in another window). Sign in again "
                          "to continue.",
            "deactivated": "Your access to this study has been ended by the study team. "
                           "Your saved ratings are kept; ask the team if this is a mistake.",
            "reissued": "The study team gave you a new access code, so this sign-in has "
                        "ended. Sign in with the new code to continue; nothing you saved is "
                        "lost.",
            "idle": f"You were signed out after {idle} without activity. Sign in "
                    "again to continue; nothing you saved is lost.",
            "expired": f"Sign-ins last {hours:g} hours and yours is over. Sign in again to "
                       "continue; nothing you saved is lost.",
            "unknown": "This sign-in is not valid any more. Sign in again to continue.",
        }[reason])


@dataclass(frozen=True)
class SessionInfo:
    """Who a live session belongs to."""

    session_id: int
    rater_id: int
    name: str
    role: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def open_session(engine: Engine, rater_id: int, *, client: str | None = None
                 ) -> tuple[str, SessionInfo]:
    """Start a session for a rater who just signed in; returns (token, info). The token is
    handed to the browser once and never stored."""
    token = secrets.token_urlsafe(32)
    now = utcnow()
    with write_session(engine) as s:
        rater = lock_rater(s, rater_id)  # a revocation either sees this session or is seen
        if rater is None or not rater.active:
            raise SessionEnded("deactivated")
        row = AuthSession(token_hash=token_hash(token), rater_id=rater_id, created_at=now,
                          last_seen_at=now, expires_at=now + lifetime(),
                          client=(client or None) and client[:64])
        s.add(row)
        s.flush()
        return token, SessionInfo(row.id, rater.id, rater.name, rater.role)


def _verdict(row: AuthSession | None, rater: Rater | None, now: datetime
             ) -> EndReason | None:
    if row is None or rater is None:
        return "unknown"
    if row.revoked_at is not None:
        return row.revoked_reason if row.revoked_reason in (
            "signed_out", "deactivated", "reissued", "idle", "expired") else "unknown"
    if not rater.active or not rater.code_hash:
        return "deactivated"
    if now >= row.expires_at:
        return "expired"
    if now - row.last_seen_at > idle_timeout():
        return "idle"
    return None


def resume(engine: Engine, token: str | None) -> SessionInfo:
    """The live session for ``token`` (from the browser), or :class:`SessionEnded`.

    Called on every page; notes the activity (at most once a minute, so pages stay reads).
    A session found idle or expired is closed for good.
    """
    if not token:
        raise SessionEnded("unknown")
    now = utcnow()
    # one plain query, no ORM objects: every run of every page asks (the columns keep the
    # models' names, so the verdict reads this row as it reads the models)
    with engine.connect() as c:
        row = c.execute(_RESUME, {"h": token_hash(token)}).first()
    # the row holds the rater's columns too (the verdict reads active and code_hash)
    rater = None if row is None or row.rater_name is None else row
    why = _verdict(row, rater, now)
    if why is not None:
        if why in ("idle", "expired") and row is not None and row.revoked_at is None:
            _revoke(engine, row.id, why, now)
        raise SessionEnded(why)
    if now - row.last_seen_at >= _TOUCH_EVERY:
        with write_session(engine) as s:
            s.exec(update(AuthSession).where(AuthSession.id == row.id,
                                             AuthSession.revoked_at.is_(None))
                   .values(last_seen_at=now))
    return SessionInfo(row.id, row.rater_id, row.rater_name, row.role)


_RESUME = (sa_select(AuthSession.id, AuthSession.rater_id, AuthSession.last_seen_at,
                     AuthSession.expires_at, AuthSession.revoked_at, AuthSession.revoked_reason,
                     Rater.name.label("rater_name"), Rater.role, Rater.active, Rater.code_hash)
           .outerjoin(Rater, Rater.id == AuthSession.rater_id)
           .where(AuthSession.token_hash == bindparam("h")))


def check_in(s: Session | Connection, token: str | None, rater_id: int) -> SessionInfo:
    """Inside a write transaction: the session must be live and belong to ``rater_id``, and
    the rater must be active — or :class:`SessionEnded` rolls the transaction back.

    How a save and a revocation (sign-out, deactivation, a new code) never overlap: the
    save locks **its session's row** exclusively (``FOR UPDATE``) for the rest of its
    transaction, and every revocation updates that row (:func:`revoke_rater_sessions`,
    :func:`end_session`). So a save that holds the lock commits before the revocation can,
    and a save that comes later waits for the revocation and then reads the row as revoked.
    Exclusive lockers of one row queue first come, first served on PostgreSQL, so a
    revocation waits for at most the one save in flight per session, however many follow.
    The rater's row is only read (after the session's lock, so it is the committed state):
    a shared lock on it, as before, let a stream of overlapping saves starve the exclusive
    lock a deactivation needs (36.7 s behind four save loops on PostgreSQL).
    ``s`` is the transaction's ORM session or its connection; plain column queries either
    way (every save asks).
    """
    if not token:
        raise SessionEnded("unknown")
    conn = s.connection() if isinstance(s, Session) else s
    row = conn.execute(_CHECK_IN_SESSION, {"h": token_hash(token)}).first()
    rater = conn.execute(_CHECK_IN_RATER, {"r": rater_id}).first()
    now = utcnow()  # after the lock: a wait behind a revocation is not idleness
    if row is not None and row.rater_id != rater_id:
        row = None
    why = _verdict(row, rater, now)
    if why is not None:
        raise SessionEnded(why)
    conn.execute(update(AuthSession).where(AuthSession.id == row.id).values(last_seen_at=now))
    return SessionInfo(row.id, rater.id, rater.name, rater.role)


_CHECK_IN_SESSION = (sa_select(AuthSession.id, AuthSession.rater_id, AuthSession.last_seen_at,
                               AuthSession.expires_at, AuthSession.revoked_at,
                               AuthSession.revoked_reason)
                     .where(AuthSession.token_hash == bindparam("h")).with_for_update())
_CHECK_IN_RATER = (sa_select(Rater.id, Rater.name, Rater.role, Rater.active, Rater.code_hash)
                   .where(Rater.id == bindparam("r")))


def _revoke(engine: Engine, session_id: int, reason: str, now: datetime) -> None:
    with write_session(engine) as s:
        s.exec(update(AuthSession).where(AuthSession.id == session_id,
                                         AuthSession.revoked_at.is_(None))
               .values(revoked_at=now, revoked_reason=reason))


def end_session(engine: Engine, token: str | None, reason: EndReason = "signed_out") -> None:
    """Sign-out: the token is refused from now on, by every server of the study."""
    if not token:
        return
    now = utcnow()
    with write_session(engine, urgent=True) as s:
        s.exec(update(AuthSession).where(AuthSession.token_hash == token_hash(token),
                                         AuthSession.revoked_at.is_(None))
               .values(revoked_at=now, revoked_reason=reason))


def lock_rater(s: Session, rater_id: int):
    """Lock a rater's row against sign-ins and other revocations until the transaction ends
    (``FOR NO KEY UPDATE``: saves, whose new ratings take a key-share lock on it through
    their foreign key, are not blocked and do not block it). Returns the row, or None."""
    return s.exec(select(Rater).where(Rater.id == rater_id)
                  .with_for_update(key_share=True)).first()


def revoke_rater_sessions(s: Session, rater_id: int, reason: EndReason = "deactivated",
                          **rater_changes) -> int:
    """End every live session of a rater and apply ``rater_changes`` to the rater's row
    (``active=False``, a new ``code_hash``), inside the caller's write transaction (open it
    with ``write_session(engine, urgent=True)``); returns how many sessions were live.

    The one way to revoke a rater, whatever the reason (deactivation, a new code): it takes
    effect within a moment under any save load, and no save that begins after it commits
    is stored. In order: the rater's row is locked against concurrent sign-ins (so no
    session opens unseen), every session row is marked revoked (each waits for at most the
    one save holding it, see :func:`check_in`; later saves wait and are refused), and only
    then is the rater's row changed — a change to ``code_hash``, a key column, needs an
    exclusive lock that new ratings' key-share locks would otherwise hold off for as long
    as the rater keeps saving.
    """
    lock_rater(s, rater_id)
    res = s.exec(update(AuthSession).where(AuthSession.rater_id == rater_id,
                                           AuthSession.revoked_at.is_(None))
                 .values(revoked_at=utcnow(), revoked_reason=reason))
    if rater_changes:
        s.exec(update(Rater).where(Rater.id == rater_id).values(**rater_changes))
    return res.rowcount or 0
