"""Where the study is, read without the database layer (the standard library only): `h2h
serve` and the app's first page need it before SQLAlchemy is imported.

``--db``, else ``$H2H_DB``, else ``./h2h.db``; a plain path is a SQLite file, anything with
``://`` a database URL (checked by :func:`data.engine.resolve_url`).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEFAULT_DB", "given", "is_url", "file_url"]

DEFAULT_DB = "h2h.db"


def given(db: str | os.PathLike | None = None) -> str:
    """What names the study: ``db``, else ``$H2H_DB``, else ``./h2h.db``."""
    return os.fspath(db) if db else os.environ.get("H2H_DB") or DEFAULT_DB


def is_url(raw: str) -> bool:
    return "://" in raw


def file_url(raw: str) -> str:
    """The SQLite URL of a study file path (made absolute, ``~`` expanded)."""
    return f"sqlite:///{Path(raw).expanduser().resolve()}"
