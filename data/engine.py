"""Where the study lives and how to talk to it.

The database comes from ``--db``, else the ``H2H_DB`` environment variable, else ``./h2h.db``.
A plain path means a SQLite file; anything with ``://`` is an SQLAlchemy URL, e.g.
``postgresql+psycopg://user@127.0.0.1:5432/study``. The same code runs on both.

SQLite is tuned for many raters saving at once: WAL journal, foreign keys on, a 30 s busy
timeout, and write transactions that take the write lock up front (``BEGIN IMMEDIATE``) so two
writers never deadlock on a read-to-write upgrade (which SQLite reports as "database is locked"
without waiting).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session

from .errors import H2HError

__all__ = ["DEFAULT_DB", "resolve_url", "get_engine", "read_session", "write_session",
           "write_connection", "describe_url"]

DEFAULT_DB = "h2h.db"
_WRITE = "h2h_write"


def resolve_url(db: str | os.PathLike | None = None) -> str:
    """The SQLAlchemy URL for ``db`` (a path or URL), ``$H2H_DB``, or ``./h2h.db``."""
    raw = os.fspath(db) if db else os.environ.get("H2H_DB") or DEFAULT_DB
    if "://" in raw:
        try:
            sa.engine.make_url(raw)
        except sa.exc.ArgumentError:
            raise H2HError(f"--db: '{raw}' is not a database URL or a file path") from None
        return raw
    return f"sqlite:///{Path(raw).expanduser().resolve()}"


def describe_url(url: str) -> str:
    """The URL as safe to print: a file path for SQLite, the password hidden otherwise."""
    u = sa.engine.make_url(url)
    if u.get_backend_name() == "sqlite":
        return u.database or ":memory:"
    return u.render_as_string(hide_password=True)


def _sqlite_on_connect(dbapi_conn, _record) -> None:
    # Let SQLAlchemy's "begin" event decide how transactions start (see _sqlite_on_begin).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _sqlite_on_begin(conn) -> None:
    if conn.get_execution_options().get(_WRITE):
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        conn.exec_driver_sql("BEGIN")


@lru_cache(maxsize=16)
def _engine_for(url: str) -> Engine:
    u = sa.engine.make_url(url)
    if u.get_backend_name() == "sqlite":
        if u.database and u.database != ":memory:":
            parent = Path(u.database).parent
            if not parent.exists():
                raise H2HError(f"--db: folder '{parent}' does not exist")
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_on_connect)
        event.listen(engine, "begin", _sqlite_on_begin)
        return engine
    try:
        return sa.create_engine(url, pool_pre_ping=True)
    except ModuleNotFoundError as exc:
        raise H2HError(f"--db: the driver for '{u.drivername}' is not installed ({exc.name})") \
            from None


def get_engine(db: str | os.PathLike | None = None) -> Engine:
    """One engine per database URL per process (a pool shared by every session)."""
    return _engine_for(resolve_url(db))


@contextmanager
def read_session(engine: Engine) -> Iterator[Session]:
    """A session for reading; nothing it does is committed."""
    with Session(engine, expire_on_commit=False) as s:
        yield s


@contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """A session whose work is committed on success and rolled back whole on any error.

    On SQLite the transaction takes the write lock when it starts, so concurrent writers queue
    (up to the busy timeout) instead of failing.
    """
    bound = engine.execution_options(**{_WRITE: True})
    with Session(bound, expire_on_commit=False) as s:
        try:
            yield s
            s.commit()
        except BaseException:
            s.rollback()
            raise


@contextmanager
def write_connection(engine: Engine) -> Iterator[sa.Connection]:
    """Like :func:`write_session` for Core statements: one transaction on one connection,
    committed on success, rolled back whole on any error (no ORM bookkeeping, for hot paths)."""
    with engine.execution_options(**{_WRITE: True}).begin() as conn:
        yield conn
