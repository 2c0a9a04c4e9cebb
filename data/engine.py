"""Where the study lives and how to talk to it.

The database comes from ``--db``, else the ``H2H_DB`` environment variable, else ``./h2h.db``.
A plain path means a SQLite file; anything with ``://`` is an SQLAlchemy URL, e.g.
``postgresql+psycopg://user@127.0.0.1:5432/study``. The same code runs on both.

SQLite is tuned for many raters saving at once: WAL journal, foreign keys on, a 30 s busy
timeout, and write transactions that take the write lock up front (``BEGIN IMMEDIATE``) so two
writers never deadlock on a read-to-write upgrade (which SQLite reports as "database is locked"
without waiting).

Opening a SQLite study never creates or changes the file: a missing path is an error naming
it (only ``h2h init``, ``h2h demo`` and ``h2h restore`` create one, through
:func:`create_sqlite_file`), a file that is not an SQLite database is refused before SQLite
reads it, the WAL journal is switched on by ``h2h init`` only once the file is known to be a
study, and a study on read-only storage is opened read-only so it still exports and analyses.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session

from .errors import H2HError
from .location import DEFAULT_DB, file_url, given, is_url

__all__ = ["DEFAULT_DB", "resolve_url", "get_engine", "read_session", "write_session",
           "upsert_statement",
           "write_connection", "describe_url", "sqlite_path", "create_sqlite_file",
           "sqlite_connect", "make_engine", "SQLITE_HEADER"]

_WRITE = "h2h_write"
_URGENT = "h2h_urgent"
SQLITE_HEADER = b"SQLite format 3\x00"


def resolve_url(db: str | os.PathLike | None = None) -> str:
    """The SQLAlchemy URL for ``db`` (a path or URL), ``$H2H_DB``, or ``./h2h.db``."""
    raw = given(db)
    if is_url(raw):
        try:
            sa.engine.make_url(raw)
        except sa.exc.ArgumentError:
            raise H2HError(f"--db: '{raw}' is not a database URL or a file path") from None
        return raw
    return file_url(raw)


def describe_url(url: str) -> str:
    """The URL as safe to print: a file path for SQLite, the password hidden otherwise."""
    u = sa.engine.make_url(url)
    if u.get_backend_name() == "sqlite":
        return u.database or ":memory:"
    return u.render_as_string(hide_password=True)


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for PostgreSQL or an in-memory database)."""
    u = sa.engine.make_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
        return None
    return Path(u.database)


def _check_sqlite_file(path: Path) -> None:
    """Refuse a path that is missing or a folder, with the fix.

    The file itself is never opened here: closing any descriptor of a file drops every POSIX
    lock the process holds on it, including those of SQLite connections still open in this
    process ("How To Corrupt An SQLite Database File", section 2.2). Whether the file is a
    database is asked of SQLite instead (:func:`_refuse_non_database`)."""
    if path.is_dir():
        raise H2HError(f"--db: '{path}' is a folder; give the study's file")
    if not path.exists():
        if not path.parent.exists():
            raise H2HError(f"--db: folder '{path.parent}' does not exist")
        raise H2HError(f"--db: there is no study at '{path}' (no such file); create one with "
                       f"`h2h init --db {path}`")
    if not os.access(path, os.R_OK):
        raise H2HError(f"--db: cannot read '{path}': permission denied")


def _refuse_non_database(conn: sqlite3.Connection, path: Path) -> sqlite3.Connection:
    """``conn`` after SQLite has read the file's header; a clear error if it is no database."""
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        if "not a database" in str(exc):
            raise H2HError(f"--db: '{path}' is not an SQLite database, so not an h2htalk "
                           "study (check the path)") from None
        raise
    return conn


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def sqlite_connect(path: Path) -> sqlite3.Connection:
    """Open an existing study file: read-write, or read-only when the file or its folder is
    read-only (WAL needs its -shm file beside the study; when it cannot be created the file
    is read as an immutable snapshot)."""
    _check_sqlite_file(path)
    kw = {"uri": True, "timeout": 30, "check_same_thread": False}
    uri = path.resolve().as_uri()
    if _writable(path):
        return _refuse_non_database(sqlite3.connect(f"{uri}?mode=rw", **kw), path)
    conn = sqlite3.connect(f"{uri}?mode=ro", **kw)
    try:
        return _refuse_non_database(conn, path)
    except sqlite3.OperationalError:
        return _refuse_non_database(sqlite3.connect(f"{uri}?mode=ro&immutable=1", **kw), path)


def create_sqlite_file(url: str) -> bool:
    """Create an empty database file for a SQLite URL if there is none; True if created.

    The only way a study file comes into being (``h2h init``, ``h2h demo``, ``h2h restore``);
    every other command refuses a missing path instead of leaving an empty file behind.
    """
    path = sqlite_path(url)
    if path is None or path.exists():
        return False
    if not path.parent.exists():
        raise H2HError(f"--db: folder '{path.parent}' does not exist")
    sqlite3.connect(path).close()
    return True


def _sqlite_on_connect(dbapi_conn, _record) -> None:
    # Let SQLAlchemy's "begin" event decide how transactions start (see _sqlite_on_begin).
    # No journal_mode here: switching to WAL writes to the file, so `h2h init` does it once
    # it knows the file is a study (data.migrate.upgrade); WAL then stays on in the file.
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _sqlite_on_begin(conn) -> None:
    options = conn.get_execution_options()
    if options.get(_URGENT):
        _begin_urgently(conn.connection.dbapi_connection)
    elif options.get(_WRITE):
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        conn.exec_driver_sql("BEGIN")


def _begin_urgently(dbapi_conn: sqlite3.Connection, timeout: float = 30.0) -> None:
    """``BEGIN IMMEDIATE`` for a write that must not wait behind a stream of others (a
    revocation). SQLite's busy handler retries after ever longer sleeps (up to 100 ms each),
    so a writer that has waited a while keeps losing the lock to writers that just arrived:
    a sign-out behind eight save loops took 1.8 s. Here the lock is asked for again every
    fraction of a millisecond, which finds the gaps between other writers' transactions."""
    deadline = time.monotonic() + timeout
    dbapi_conn.execute("PRAGMA busy_timeout=0")
    try:
        while True:
            try:
                dbapi_conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            time.sleep(random.uniform(0.0001, 0.0005))
    finally:
        dbapi_conn.execute("PRAGMA busy_timeout=30000")


# Connections per engine. The app serves every rater's script run on its own thread and each
# run holds a connection while it reads or saves, so the pool must not be what raters queue
# on: with SQLAlchemy's default (5 + 10 overflow, 30 s wait) the 16th concurrent run waited,
# and a waiting thread can lose every race for a returned connection to threads that save in
# a loop, until its save fails with "QueuePool limit ... timed out".
# SQLite connections are cheap and writers already queue on the file's lock (busy timeout),
# so the pool there has no upper limit. PostgreSQL refuses connections beyond its
# max_connections (100 by default), so 60 at most, leaving room for h2h commands and backups.
_SQLITE_POOL = {"pool_size": 5, "max_overflow": -1}
_SERVER_POOL = {"pool_size": 10, "max_overflow": 50, "pool_timeout": 60}


def make_engine(url: str, **kw) -> Engine:
    """A new engine for ``url`` set up as described above (``kw`` goes to
    ``create_engine``, e.g. ``poolclass=NullPool`` for a one-off job beside the app)."""
    u = sa.engine.make_url(url)
    pool = {} if "poolclass" in kw else _SERVER_POOL
    if u.get_backend_name() == "sqlite":
        path = sqlite_path(url)
        if path is None:  # in memory: SQLAlchemy's one connection per thread
            engine = sa.create_engine(url, connect_args={"check_same_thread": False}, **kw)
        else:
            if not path.parent.exists():
                raise H2HError(f"--db: folder '{path.parent}' does not exist")
            pool = {} if "poolclass" in kw else _SQLITE_POOL
            engine = sa.create_engine(url, creator=lambda: sqlite_connect(path), **pool, **kw)
        event.listen(engine, "connect", _sqlite_on_connect)
        event.listen(engine, "begin", _sqlite_on_begin)
        return engine
    try:
        return sa.create_engine(url, pool_pre_ping=True, **pool, **kw)
    except ModuleNotFoundError as exc:
        raise H2HError(f"--db: the driver for '{u.drivername}' is not installed ({exc.name})") \
            from None


@lru_cache(maxsize=16)
def _engine_for(url: str) -> Engine:
    return make_engine(url)


def get_engine(db: str | os.PathLike | None = None) -> Engine:
    """One engine per database URL per process (a pool shared by every session)."""
    return _engine_for(resolve_url(db))


@contextmanager
def read_session(engine: Engine) -> Iterator[Session]:
    """A session for reading; nothing it does is committed."""
    with Session(engine, expire_on_commit=False) as s:
        yield s


@contextmanager
def write_session(engine: Engine, *, urgent: bool = False) -> Iterator[Session]:
    """A session whose work is committed on success and rolled back whole on any error.

    On SQLite the transaction takes the write lock when it starts, so concurrent writers queue
    (up to the busy timeout) instead of failing. ``urgent`` (revocations) asks for that lock
    without backing off, so it gets it within milliseconds however busy the study is.
    """
    bound = engine.execution_options(**{_WRITE: True, _URGENT: urgent})
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


@lru_cache(maxsize=32)
def upsert_statement(table: sa.Table, dialect: str, key: tuple[str, ...],
                     columns: tuple[str, ...],
                     where: Callable[[sa.ColumnCollection, sa.ColumnCollection],
                                     sa.ColumnElement[bool]] | None = None):
    """``INSERT … ON CONFLICT (key) DO UPDATE SET`` every other of ``columns`` to the new
    row's value, on SQLite and PostgreSQL: the database decides atomically whether a row is
    new, never a SELECT before. ``where(stored, new)`` (the table's columns and the new row's)
    limits which stored rows are replaced. Built once per arguments: constructing the
    ``excluded`` columns costs more than running the statement."""
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    elif dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:  # pragma: no cover - studies live on SQLite or PostgreSQL
        raise H2HError(f"a study lives on SQLite or PostgreSQL, not {dialect}")
    stmt = insert(table)
    return stmt.on_conflict_do_update(
        index_elements=list(key), set_={c: stmt.excluded[c] for c in columns if c not in key},
        where=None if where is None else where(table.c, stmt.excluded))
