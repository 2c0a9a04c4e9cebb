"""Raters and admins: create with a one-time code, list, deactivate, sign in."""

from __future__ import annotations

import re

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from messages import Msg

from .codes import codes_match, hash_code, new_code
from .engine import read_session, write_session
from .errors import H2HError
from .models import ROLES, Rater, Rating
from .sessions import revoke_rater_sessions

__all__ = ["add_rater", "list_raters", "deactivate_rater", "reissue_code", "reactivate_rater",
           "authenticate", "RaterSummary", "name_problem", "get_language", "set_language"]

_NAME_RE = re.compile(r"^[\w.@+-][\w .@+-]{0,99}$", re.UNICODE)


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a rater's name, or None. The same rule for every way a rater is
    created (``h2h raters add``, the Raters page, a ratings import)."""
    if _NAME_RE.fullmatch(name):
        return None
    shown = name if len(name) <= 40 else name[:37] + "…"
    return Msg("rater name {shown!r} is not usable: use 1-100 letters, digits, spaces or . @ + - "
               "_", shown=shown)


def add_rater(engine: Engine, name: str, role: str = "rater") -> tuple[Rater, str]:
    """Create a rater (or admin); returns the row and the access code, shown only now."""
    name = name.strip()
    if (why := name_problem(name)) is not None:
        raise H2HError(why)
    if role not in ROLES:
        raise H2HError(Msg("--role: '{role}' is not one of {roles}",
                           role=role, roles=", ".join(ROLES)))
    code = new_code()
    with write_session(engine) as s:
        existing = s.exec(select(Rater).where(Rater.name == name)).first()
        if existing is not None:
            raise H2HError(Msg("a rater named '{name}' already exists", name=name))
        rater = Rater(name=name, role=role, code_hash=hash_code(code), active=True)
        s.add(rater)
        s.flush()
    return rater, code


class RaterSummary(dict):
    """name, role, active, simulated, can_sign_in, n_ratings."""


def list_raters(engine: Engine) -> list[RaterSummary]:
    with read_session(engine) as s:
        counts = dict(s.exec(select(Rating.rater_id, func.count()).group_by(Rating.rater_id))
                      .all())
        out = []
        for r in s.exec(select(Rater).order_by(Rater.id)).all():
            out.append(RaterSummary(name=r.name, role=r.role, active=r.active,
                                    simulated=r.simulated, can_sign_in=bool(r.code_hash),
                                    n_ratings=counts.get(r.id, 0)))
    return out


def deactivate_rater(engine: Engine, name: str) -> int:
    """Stop a rater at once: no new sign-in, and every open session ends now (their next
    page or save is refused, on every app server). Their ratings stay. Returns how many
    sessions were open."""
    with write_session(engine, urgent=True) as s:
        rater_id = s.exec(select(Rater.id).where(Rater.name == name)).first()
        if rater_id is None:
            raise H2HError(Msg("no rater named '{name}'", name=name))
        return revoke_rater_sessions(s, rater_id, "deactivated", active=False)


def reissue_code(engine: Engine, name: str) -> tuple[str, int, bool]:
    """A new access code for a rater who lost theirs: the old code stops working and every
    open session of theirs ends at once, through the one revocation path deactivation takes
    (:func:`data.sessions.revoke_rater_sessions`: it changes the code only after the sessions
    are revoked, so a rater saving meanwhile cannot hold it off). Their ratings, queue and
    training stay. Returns (the new code, shown only now; sessions ended; whether they are
    active — a deactivated rater gets a code but signs in only once reactivated).

    A simulated (demo) rater gets no code: nobody signs in as one."""
    code = new_code()
    with write_session(engine, urgent=True) as s:
        row = s.exec(select(Rater.id, Rater.simulated, Rater.active)
                     .where(Rater.name == name)).first()
        if row is None:
            raise H2HError(Msg("no rater named '{name}'", name=name))
        rater_id, simulated, active = row
        if simulated:
            raise H2HError(Msg("'{name}' is a simulated rater (demo data); nobody signs in "
                               "as one", name=name))
        ended = revoke_rater_sessions(s, rater_id, "reissued", code_hash=hash_code(code))
    return code, ended, bool(active)


def reactivate_rater(engine: Engine, name: str) -> tuple[bool, bool]:
    """Let a deactivated rater sign in again with their code (their ratings, queue and
    training are as they were). Returns (whether anything changed, whether they have a
    code to sign in with: a rater created by a ratings import has none until
    :func:`reissue_code`)."""
    with write_session(engine) as s:
        rater = s.exec(select(Rater).where(Rater.name == name).with_for_update()).first()
        if rater is None:
            raise H2HError(Msg("no rater named '{name}'", name=name))
        changed = not rater.active
        rater.active = True
        s.add(rater)
        return changed, bool(rater.code_hash)


def authenticate(engine: Engine, code: str) -> Rater | None:
    """The active rater whose code this is, else None (the caller says one generic message)."""
    with read_session(engine) as s:
        rater = s.exec(select(Rater).where(Rater.code_hash == hash_code(code))).first()
    if rater is None or not rater.active or not codes_match(code, rater.code_hash):
        return None
    return rater


def get_language(engine: Engine, rater_id: int) -> str | None:
    """The language this rater chose for the app ("en", "zh"), or None for the default."""
    with read_session(engine) as s:
        rater = s.get(Rater, rater_id)
        return rater.language if rater is not None else None


def set_language(engine: Engine, rater_id: int, language: str) -> None:
    """Keep ``language`` as this rater's choice (on every device they sign in from)."""
    if not re.fullmatch(r"[a-z]{2}(-[A-Za-z]{2,4})?", language):
        raise ValueError(f"language {language!r} is not a language code such as 'en' or 'zh'")
    with write_session(engine) as s:
        rater = s.get(Rater, rater_id)
        if rater is not None and rater.language != language:
            rater.language = language
            s.add(rater)
