"""Consistent backups of a study while raters keep working, and restoring them.

Copying a SQLite study file while the app writes gives torn or stale copies (in WAL mode the
latest ratings sit in the ``-wal`` file until a checkpoint, and a file copy is not atomic).
So:

* **SQLite study** → a single SQLite file made with SQLite's online backup API in one step,
  i.e. one read transaction: a snapshot of the study as of the moment the backup began,
  with everything committed before that moment, taken without stopping writers (in WAL
  mode readers never block them). The copy is switched to an ordinary rollback journal (a
  single self-contained file), checked with ``PRAGMA integrity_check``, then moved into
  place atomically.
* **PostgreSQL study** → ``pg_dump --format=custom`` (its own snapshot transaction) when the
  program is installed; else the exact command to run is printed. ``--format sqlite``
  writes a SQLite snapshot instead (a repeatable-read transaction copied table by table),
  which needs no PostgreSQL tools and is the easiest file to archive with a paper.

``restore`` takes any of these: a SQLite backup into a SQLite file (the backup API again,
so a running server keeps working on the restored content) or into an empty PostgreSQL
database (how a study moves to a shared server); a ``pg_dump`` archive into an empty
PostgreSQL database with ``pg_restore``. An older backup is upgraded to the current schema.
After a restore every open session ends: everyone signs in again — also after a crash at any
moment of the restore: the sessions are ended *in the backup's content* before it replaces
the study (a SQLite backup is brought to the current schema and its sessions ended in a
private copy; a ``pg_dump`` archive is restored in one transaction with the statement that
ends them), and the study's own sessions are ended before its content is replaced.
"""

from __future__ import annotations

import glob
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.pool import NullPool
from sqlmodel import SQLModel

from messages import Msg, message_of

from .engine import (
    SQLITE_HEADER,
    create_sqlite_file,
    get_engine,
    make_engine,
    resolve_url,
    sqlite_connect,
    sqlite_path,
)
from .errors import H2HError
from .migrate import ensure_current, schema_state, upgrade
from .models import AuthSession, utcnow

__all__ = ["BackupResult", "BackupFormat", "backup", "restore", "snapshot_bytes",
           "pg_tool", "libpq_url"]

BackupFormat = Literal["auto", "sqlite", "pg_dump"]
_PGDMP = b"PGDMP"


@dataclass(frozen=True)
class BackupResult:
    """What a backup or restore wrote: where, in which format, and what it holds."""

    path: str
    format: str
    items: int
    ratings: int
    raters: int
    schema: str | None

    def __str__(self) -> str:
        return (f"{self.items} items, {self.ratings} ratings, {self.raters} raters "
                f"(schema {self.schema})")


# --- helpers -------------------------------------------------------------------------------


def pg_tool(name: str) -> str | None:
    """``pg_dump`` / ``pg_restore``: on the PATH, else the newest Debian install."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                      key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit()
                      else 0)
    return versions[-1] if versions else None


def libpq_url(url: str) -> tuple[str, dict[str, str]]:
    """A PostgreSQL URL as the command-line tools take it, the password moved into the
    environment (never on a command line other users can read)."""
    u = sa.engine.make_url(url)
    env = {"PGPASSWORD": u.password} if u.password else {}
    plain = u.set(drivername="postgresql", password=None)
    return plain.render_as_string(hide_password=False), env


def _counts(conn: sa.Connection | sqlite3.Connection) -> tuple[int, int, int]:
    def n(table: str) -> int:
        sql = f"SELECT COUNT(*) FROM {table}"
        if isinstance(conn, sqlite3.Connection):
            return conn.execute(sql).fetchone()[0]
        return conn.execute(sa.text(sql)).scalar_one()
    return n("item"), n("rating"), n("rater")


def _sqlite_study_check(path: Path) -> str:
    """Integrity-check a SQLite file and return its schema revision, or say what is wrong."""
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            ok = con.execute("PRAGMA integrity_check").fetchall()
            if ok != [("ok",)]:
                raise H2HError(_at(path, Msg("the database is damaged ({reason})",
                                             reason=ok[0][0])))
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            if "alembic_version" not in tables or "study" not in tables:
                raise H2HError(_at(path, Msg("an SQLite database, but not an h2htalk study")))
            return con.execute("SELECT version_num FROM alembic_version").fetchone()[0]
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise H2HError(_at(path, Msg("cannot read it as a study ({reason})", reason=exc))) \
            from None


def _at(path, problem: Msg) -> Msg:
    return Msg("{path}: {problem}", path=path, problem=problem)


def _temp_beside(out: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
    os.close(fd)
    os.unlink(name)  # SQLite creates it; a pre-existing empty file would be fine too
    return Path(name)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_out(out: Path, source: Path | None, force: bool) -> None:
    if not out.parent.exists():
        raise H2HError(Msg("--out: folder '{parent}' does not exist", parent=out.parent))
    if out.is_dir():
        raise H2HError(Msg("--out: '{out}' is a folder; give a file name", out=out))
    if source is not None and out.resolve() == source.resolve():
        raise H2HError(Msg("--out is the study itself; give another file"))
    if out.exists() and not force:
        raise H2HError(Msg("--out: '{out}' already exists; pass --force to replace it", out=out))


# --- backup --------------------------------------------------------------------------------


def backup(db: str, out: str | Path, *, fmt: BackupFormat = "auto",
           force: bool = False) -> BackupResult:
    """Write a consistent backup of the study at ``db`` (path or URL) to ``out``.

    Uses connections of its own (not the app's pool), so a backup taken from the admin page
    neither waits for busy raters' connections nor holds one of theirs.
    """
    with _private(resolve_url(db)) as engine:
        return _backup(engine, Path(out).expanduser(), fmt, force)


@contextmanager
def _private(url: str) -> Iterator[Engine]:
    engine = make_engine(url, poolclass=NullPool)
    try:
        yield engine
    finally:
        engine.dispose()


def _backup(engine: Engine, out: Path, fmt: BackupFormat, force: bool) -> BackupResult:
    ensure_current(engine)
    src = sqlite_path(str(engine.url))
    _check_out(out, src, force)
    if fmt == "auto":
        fmt = "sqlite" if src is not None else "pg_dump"
    if src is not None and fmt != "sqlite":
        raise H2HError(Msg("--format pg_dump is for PostgreSQL studies; a SQLite study is backed "
                           "up as a SQLite file"))
    tmp = _temp_beside(out)
    try:
        if src is not None:
            _sqlite_online_backup(src, tmp)
        elif fmt == "sqlite":
            _to_sqlite_file(engine, tmp)
        else:
            _pg_dump(str(engine.url), tmp, out)
        if fmt == "sqlite":
            try:
                rev = _sqlite_study_check(tmp)
            except H2HError as exc:  # the copy, not the study: say so, keep nothing
                why = message_of(exc)
                why = why.params.get("problem", why) if isinstance(why, Msg) else why
                raise H2HError(Msg("the copy just taken failed its check, so no backup was "
                                   "written to {out} ({reason}); the study itself was only "
                                   "read. Run the backup again.", out=out, reason=why)) \
                    from None
            con = sqlite3.connect(tmp)
            try:
                counts = _counts(con)
            finally:
                con.close()
        else:
            rev = schema_state_revision(engine)
            with engine.connect() as c:
                counts = _counts(c)
        _fsync(tmp)
        os.replace(tmp, out)
    finally:
        for p in (tmp, Path(f"{tmp}-journal")):
            p.unlink(missing_ok=True)
    return BackupResult(str(out), fmt, *counts, rev)


def schema_state_revision(engine: Engine) -> str | None:
    from .migrate import current_revision
    return current_revision(engine)


def _sqlite_online_backup(src: Path, dest: Path) -> None:
    """SQLite's online backup API, all pages in one step: one read transaction on the
    source, so the copy is the study exactly as of that moment; writers carry on."""
    source = sqlite_connect(src)  # read-only when the study is on read-only storage
    target = sqlite3.connect(dest)
    try:
        source.execute("PRAGMA busy_timeout=30000")
        source.backup(target, pages=-1)
        target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        target.commit()
    finally:
        target.close()
        source.close()


def _pg_dump(url: str, tmp: Path, out: Path) -> None:
    plain, env = libpq_url(url)
    tool = pg_tool("pg_dump")
    shown = sa.engine.make_url(plain).render_as_string(hide_password=True)
    if tool is None:
        raise H2HError(
            Msg("pg_dump is not installed here. Run it where it is (PostgreSQL's client tools), "
                "setting PGPASSWORD if the server needs one:\n  pg_dump --format=custom "
                "--no-owner --file {out} '{shown}'\nor write a SQLite snapshot instead: h2h "
                "backup --format sqlite --out {with_suffix}", out=out, shown=shown,
                with_suffix=out.with_suffix('.db')))
    proc = subprocess.run([tool, "--format=custom", "--no-owner", "--file", str(tmp),
                           "--dbname", plain], env={**os.environ, **env},
                          capture_output=True, text=True)
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise H2HError(Msg("pg_dump failed: {msg}", msg=msg))


def snapshot_bytes(engine: Engine) -> bytes:
    """A consistent SQLite snapshot of the study as bytes (the admin page's download)."""
    folder = Path(tempfile.mkdtemp(prefix="h2h-snapshot-"))
    try:
        res = backup(engine.url.render_as_string(hide_password=False), folder / "study.db",
                     fmt="sqlite")  # its own connections: the app's pool stays for raters
        return Path(res.path).read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- copying a study table by table (PostgreSQL <-> SQLite) --------------------------------


def _to_sqlite_file(source: Engine, path: Path) -> None:
    """A SQLite study file at ``path`` holding one snapshot of ``source`` (any backend)."""
    url = f"sqlite:///{path}"
    create_sqlite_file(url)
    target = get_engine(url)
    try:
        upgrade(target)
        _copy_rows(source, target, snapshot=True)
    finally:
        target.dispose()
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    finally:
        con.close()


def _copy_rows(source: Engine, target: Engine, *, snapshot: bool) -> None:
    opts = {"isolation_level": "REPEATABLE READ"} if (
        snapshot and source.dialect.name == "postgresql") else {}
    with source.connect().execution_options(**opts) as src, target.begin() as dst:
        src.begin()
        for table in SQLModel.metadata.sorted_tables:
            cols = list(table.columns)
            result = src.execution_options(stream_results=True).execute(table.select())
            while rows := result.fetchmany(1000):
                dst.execute(table.insert(), [{c.key: r._mapping[c] for c in cols}
                                             for r in rows])
        if target.dialect.name == "postgresql":
            for table in SQLModel.metadata.sorted_tables:
                if "id" in table.c and isinstance(table.c.id.type, sa.Integer):
                    dst.execute(sa.text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                        f"(SELECT COALESCE(MAX(id), 0) + 1 FROM {table.name}), false)"))


# --- restore -------------------------------------------------------------------------------


def _kind(path: Path) -> Literal["sqlite", "pg_dump"]:
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise H2HError(Msg("{path}: no such file", path=path)) from None
    except OSError as exc:
        raise H2HError(Msg("{path}: cannot read it ({strerror})", path=path,
                           strerror=exc.strerror)) from None
    if head == SQLITE_HEADER:
        return "sqlite"
    if head.startswith(_PGDMP):
        return "pg_dump"
    raise H2HError(Msg("{path}: not an h2htalk backup (neither a SQLite file nor a pg_dump "
                       "archive)", path=path))


def _has_tables(engine: Engine) -> bool:
    with engine.connect() as c:
        return bool(sa.inspect(c).get_table_names())


PAUSE_ENV = "H2H_TEST_PAUSE_AT"
"""For crash tests only: ``H2H_TEST_PAUSE_AT=restore:replaced`` makes a restore stop at that
moment, say so on stderr (``h2h paused at restore:replaced``) and wait to be killed, so a
test can ``kill -9`` it exactly there instead of at a random time."""


def _pause(point: str) -> None:
    if os.environ.get(PAUSE_ENV) == point:
        sys.stderr.write(f"h2h paused at {point}\n")
        sys.stderr.flush()
        time.sleep(600)


_END_SESSIONS = (sa.update(AuthSession).where(AuthSession.revoked_at.is_(None))
                 .values(revoked_reason="signed_out"))


def _end_sessions(engine: Engine) -> None:
    """End every open session of a study (in one committed transaction), if it has any."""
    with engine.begin() as c:
        if sa.inspect(c).has_table(AuthSession.__tablename__):
            c.execute(_END_SESSIONS.values(revoked_at=utcnow()))


@contextmanager
def _prepared_copy(src: Path) -> Iterator[Path]:
    """A private copy of a SQLite backup, at the current schema, with every session ended and
    its integrity checked: what replaces the study, whole."""
    folder = Path(tempfile.mkdtemp(prefix="h2h-restore-"))
    try:
        work = folder / "study.db"
        shutil.copy(src, work)
        with _private(f"sqlite:///{work}") as engine:
            upgrade(engine)
            if schema_state(engine) != "current":
                raise H2HError(Msg("{src}: could not bring the backup to the current schema",
                                   src=src))
            _end_sessions(engine)
        con = sqlite3.connect(work)
        try:
            con.execute("PRAGMA journal_mode=DELETE")  # everything in the one file
        finally:
            con.close()
        _sqlite_study_check(work)
        yield work
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def restore(backup_file: str | Path, db: str, *, force: bool = False) -> BackupResult:
    """Restore ``backup_file`` into the study at ``db`` (path or URL); see the module doc."""
    src = Path(backup_file).expanduser()
    kind = _kind(src)
    url = resolve_url(db)
    target_path = sqlite_path(url)
    if target_path is not None and target_path.exists() and target_path.resolve() == \
            src.resolve():
        raise H2HError(Msg("the backup and --db are the same file"))
    if kind == "pg_dump" and target_path is not None:
        raise H2HError(Msg("a pg_dump archive restores into a PostgreSQL database (--db "
                           "postgresql+psycopg://…); to get a SQLite file, back the PostgreSQL "
                           "study up with --format sqlite"))
    if kind == "sqlite":
        _sqlite_study_check(src)
    exists = target_path is None or target_path.exists()
    engine = get_engine(url) if exists else None
    if engine is not None and _has_tables(engine) and not force:
        raise H2HError(Msg("--db already holds a database with tables ({where}); pass --force to "
                           "replace its content with the backup", where=_where(url)))
    if kind == "pg_dump":
        _pg_restore(src, url, clean=engine is not None and _has_tables(engine))
    elif target_path is not None:
        with _prepared_copy(src) as work:
            create_sqlite_file(url)
            _pause("restore:prepared")
            if engine is not None and _has_tables(engine):
                _end_sessions(engine)  # before its content goes: no crash leaves one open
            _pause("restore:sessions-ended")
            _sqlite_restore(work, target_path)
    else:
        if _has_tables(get_engine(url)):
            raise H2HError(Msg("a SQLite backup restores into an empty PostgreSQL database "
                               "(create a new one, e.g. createdb study2)"))
        _restore_into_postgres(src, url)
    _pause("restore:replaced")
    engine = get_engine(url)
    upgrade(engine)  # an older pg_dump archive comes up to the current schema
    _end_sessions(engine)  # (already ended in what was restored; nothing is left open)
    with engine.connect() as c:
        counts = _counts(c)
    return BackupResult(_where(url), kind, *counts, schema_state_revision(engine))


def _where(url: str) -> str:
    from .engine import describe_url
    return describe_url(url)


def _sqlite_restore(src: Path, target: Path) -> None:
    """The backup API into the target file: its pages are replaced under the target's write
    lock, so a server that has the study open carries on with the restored content."""
    source = sqlite3.connect(f"{src.resolve().as_uri()}?mode=ro", uri=True)
    dest = sqlite3.connect(target, timeout=30)
    try:
        dest.execute("PRAGMA busy_timeout=30000")
        source.backup(dest, pages=-1)
    finally:
        dest.close()
        source.close()


def _restore_into_postgres(src: Path, url: str) -> None:
    # a copy of the backup at the current schema, its sessions ended, copied over in one
    # transaction
    with _prepared_copy(src) as work, _private(f"sqlite:///{work}") as source:
        target = get_engine(url)
        upgrade(target)
        _copy_rows(source, target, snapshot=False)


# Appended to the archive's SQL: the restored sessions end in the restore's own transaction
# (an archive older than schema 0007 has no sessions table, and no sessions).
_PG_END_SESSIONS = """
RESET search_path;  -- the archive's script empties it; the app's tables are on the default
DO $h2h$ BEGIN
  IF to_regclass('auth_session') IS NOT NULL THEN
    UPDATE auth_session SET revoked_at = now(), revoked_reason = 'signed_out'
     WHERE revoked_at IS NULL;
  END IF;
END $h2h$;
"""


def _pg_restore(src: Path, url: str, *, clean: bool) -> None:
    """The archive as SQL (``pg_restore --file``), the sessions ended after it, all run by
    ``psql`` in a single transaction: a crash leaves the database as it was, or restored
    with every session ended."""
    plain, env = libpq_url(url)
    tool, psql = pg_tool("pg_restore"), pg_tool("psql")
    if tool is None or psql is None:
        shown = sa.engine.make_url(plain).render_as_string(hide_password=True)
        raise H2HError(Msg("pg_restore and psql (PostgreSQL's client tools) are not both "
                           "installed here. Run it where they are:\n  pg_restore --no-owner "
                           "--dbname '{shown}' {src}\nthen `h2h init --db URL` to bring it to "
                           "the current schema, and end every session: UPDATE auth_session SET "
                           "revoked_at = now() WHERE revoked_at IS NULL", shown=shown, src=src))
    folder = Path(tempfile.mkdtemp(prefix="h2h-pg-restore-"))
    try:
        script = folder / "restore.sql"
        cmd = [tool, "--no-owner", "--file", str(script)]
        if clean:
            cmd += ["--clean", "--if-exists"]
        proc = subprocess.run([*cmd, str(src)], capture_output=True, text=True)
        if proc.returncode == 0:
            with open(script, "a", encoding="utf-8") as fh:
                fh.write(_PG_END_SESSIONS)
            proc = subprocess.run([psql, "--no-psqlrc", "--quiet", "--set", "ON_ERROR_STOP=1",
                                   "--single-transaction", "--dbname", plain, "--file",
                                   str(script)], env={**os.environ, **env},
                                  capture_output=True, text=True)
        if proc.returncode != 0:
            msg = (proc.stderr.strip().splitlines() or ["failed"])[-1]
            raise H2HError(Msg("pg_restore failed: {msg}", msg=msg))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
