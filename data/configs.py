"""Finding a stored configuration (a judge's or a metric's) the way every command names one."""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy.engine import Engine
from sqlmodel import SQLModel, select

from .engine import read_session
from .errors import H2HError

__all__ = ["find_by_name_or_hash"]

Row = TypeVar("Row", bound=SQLModel)


def find_by_name_or_hash(engine: Engine, model: type[Row], ref: str, *, what: str,
                         none_yet: str = "none yet") -> Row:
    """The row of ``model`` (a table with ``name`` and primary key ``hash``) named ``ref``, or
    with hash ``ref``, or whose hash starts with ``ref`` (at least 6 characters, one match).
    Otherwise an :class:`H2HError` listing the known names ("no {what} '{ref}' (known: …)")."""
    with read_session(engine) as s:
        row = s.exec(select(model).where(model.name == ref)).first()
        if row is None:
            row = s.get(model, ref)
        if row is None and len(ref) >= 6:
            hits = s.exec(select(model).where(model.hash.startswith(ref))).all()
            row = hits[0] if len(hits) == 1 else None
        if row is None:
            names = s.exec(select(model.name).order_by(model.name)).all()
            known = ", ".join(names) if names else none_yet
            raise H2HError(f"no {what} '{ref}' (known: {known})")
        return row
