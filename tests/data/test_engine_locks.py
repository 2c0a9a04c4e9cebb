"""Opening a new connection to a study must not cancel the locks the process already holds.

POSIX advisory locks belong to the (process, file) pair: closing *any* descriptor of the file
drops every lock the process holds on it, including those of SQLite connections that are still
open (SQLite documents this as a way to corrupt a database: "How To Corrupt An SQLite Database
File", section 2.2, https://sqlite.org/howtocorrupt.html). A check that read the file's header
with ``open()`` on every new pool connection did exactly that, and backups taken by another
process while the app saved came out damaged about one time in five. These tests observe the
locks directly from a second process, so they fail deterministically when a lock is dropped.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from data.engine import make_engine, sqlite_connect

pytestmark = pytest.mark.integration  # left out of `make test-fast`

_PROBE = r"""
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
try:
    con.execute(sys.argv[2])
except sqlite3.OperationalError as exc:
    print("locked" if "locked" in str(exc) else f"error: {exc}")
else:
    print("acquired")
"""


def _other_process(path: Path, sql: str) -> str:
    out = subprocess.run([sys.executable, "-c", _PROBE, str(path), sql],
                         capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


def _study(tmp_path: Path, journal: str) -> Path:
    path = tmp_path / "study.db"
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA journal_mode={journal}")
    con.execute("CREATE TABLE t (x INTEGER)")
    con.commit()
    con.close()
    return path


def test_a_new_connection_keeps_the_write_lock_of_an_open_one(tmp_path):
    path = _study(tmp_path, "delete")
    holder = sqlite_connect(path)
    holder.isolation_level = None
    holder.execute("BEGIN IMMEDIATE")  # RESERVED lock on the study file
    holder.execute("INSERT INTO t VALUES (1)")
    assert _other_process(path, "BEGIN IMMEDIATE") == "locked"
    second = sqlite_connect(path)  # what the pool does when it needs another connection
    try:
        # With the lock dropped, another process could write in the middle of our transaction.
        assert _other_process(path, "BEGIN IMMEDIATE") == "locked"
    finally:
        second.close()
        holder.execute("ROLLBACK")
        holder.close()


def test_an_engine_growing_its_pool_keeps_the_locks_of_a_wal_study(tmp_path):
    path = _study(tmp_path, "wal")
    engine = make_engine(f"sqlite:///{path}")
    with engine.connect() as first:
        first.exec_driver_sql("SELECT COUNT(*) FROM t").fetchone()
        # An open WAL connection holds a shared lock on the study file, which keeps another
        # process from taking it out of WAL mode under our feet.
        assert _other_process(path, "PRAGMA journal_mode=DELETE") != "acquired"
        with engine.connect() as second:  # a second pooled connection is opened
            second.exec_driver_sql("SELECT COUNT(*) FROM t").fetchone()
            assert _other_process(path, "PRAGMA journal_mode=DELETE") != "acquired"
    engine.dispose()


@pytest.mark.parametrize("content", [b"hello, this is not a database at all" * 4, b"\x00" * 512])
def test_a_file_that_is_not_a_database_is_still_refused_by_name(tmp_path, content):
    from data.errors import H2HError

    path = tmp_path / "notes.db"
    path.write_bytes(content)
    with pytest.raises(H2HError, match="is not an SQLite database"):
        sqlite_connect(path)
    assert path.read_bytes() == content
