"""`h2h restore --force` killed with ``kill -9`` at each critical moment, into a study that a
server holds open: the study is whole, and no session survives — neither the study's own
nor one that was open when the backup was taken ("everyone signs in again" after any crash).

The report: the restore committed the backup's pages, then ended the sessions in a separate
transaction; 4 of 11 kills (at 0.48–0.55 s) left the backup's content with a session of the
backup's still open. The restore stops at a named moment when ``H2H_TEST_PAUSE_AT`` says so
(data/backup.py), so each kill lands exactly there.
"""

from __future__ import annotations

import os
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from data.backup import PAUSE_ENV, backup
from data.engine import get_engine
from data.importing import import_item_records
from data.items import ItemRecord
from data.raters import add_rater
from data.rating_service import save_rating
from data.sessions import SessionEnded, open_session, resume
from data.study import init_study
from tests.conftest import _fresh_pg_url
from tests.helpers import item


def _study(engine) -> dict:
    """A study with a backup taken while a session was open, then more work and another
    session after the backup."""
    import_item_records(engine, [ItemRecord.model_validate(item(f"it{i}")) for i in range(4)],
                        file="t")
    pat, _ = add_rater(engine, "pat", "rater")
    save_rating(engine, rater_id=pat.id, item_id="it0", dimension="empathy", score=2)
    in_backup, _ = open_session(engine, pat.id)  # open in the backup's content
    return {"rater": pat.id, "in_backup": in_backup}


def _after_backup(engine, study) -> None:
    save_rating(engine, rater_id=study["rater"], item_id="it1", dimension="empathy", score=4)
    study["live"], _ = open_session(engine, study["rater"])  # only in the study


def _restore_killed_at(backup_file: Path, db: str, point: str) -> None:
    """Run `h2h restore --force` until it reports ``point``, then kill -9 it."""
    # a killed restore leaves its private copy behind (h2h-restore-*): in this test's
    # folder, not in the machine's temp (in memory, /dev/shm, for the whole suite)
    env = {**os.environ, PAUSE_ENV: point, "TMPDIR": str(backup_file.parent)}
    proc = subprocess.Popen([sys.executable, "-m", "annotate.cli", "restore", str(backup_file),
                             "--db", db, "--force"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    seen, deadline = "", time.monotonic() + 120
    try:
        while f"h2h paused at {point}" not in seen:
            assert proc.poll() is None, f"finished without pausing at {point}: {seen}"
            assert time.monotonic() < deadline, f"never paused at {point}: {seen}"
            ready, _, _ = select.select([proc.stderr], [], [], 0.5)
            if ready:
                seen += proc.stderr.readline()
    finally:
        proc.kill()  # SIGKILL: no cleanup, no finally blocks
        proc.wait()
    assert proc.returncode == -9


def _open_sessions(engine) -> int:
    with engine.connect() as c:
        return c.execute(sa.text("SELECT COUNT(*) FROM auth_session WHERE revoked_at IS NULL")
                         ).scalar_one()


def _ratings(engine) -> int:
    with engine.connect() as c:
        return c.execute(sa.text("SELECT COUNT(*) FROM rating")).scalar_one()


def _assert_no_session_survives(engine, study) -> None:
    for token in (study["in_backup"], study["live"]):
        with pytest.raises(SessionEnded):
            resume(engine, token)
    assert _open_sessions(engine) == 0


# (the moment, the content found after the kill: the study's own or the backup's, and
# whether the study's sessions are already ended)
SQLITE_MOMENTS = [("restore:prepared", "study", False),
                  ("restore:sessions-ended", "study", True),
                  ("restore:replaced", "backup", True)]


@pytest.mark.parametrize("point,content,ended", SQLITE_MOMENTS)
def test_a_sqlite_restore_killed_at_any_moment_leaves_no_session_open(tmp_path, point,
                                                                      content, ended):
    db = tmp_path / "pilot.db"
    engine = get_engine(db)
    init_study(engine, name="pilot")
    study = _study(engine)
    backup(str(db), tmp_path / "b.db")
    _after_backup(engine, study)
    served = engine.connect()  # a server holds the study open throughout
    try:
        served.execute(sa.text("SELECT COUNT(*) FROM item")).scalar_one()
        served.commit()
        _restore_killed_at(tmp_path / "b.db", str(db), point)
    finally:
        served.close()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert _ratings(engine) == {"study": 2, "backup": 1}[content]
    if ended:
        _assert_no_session_survives(engine, study)
    else:  # killed before it touched the study: the study as it was, sessions and all
        assert resume(engine, study["live"]).rater_id == study["rater"]
    # and run again to its end, the study comes back as the backup, everyone signed out
    proc = subprocess.run([sys.executable, "-m", "annotate.cli", "restore",
                           str(tmp_path / "b.db"), "--db", str(db), "--force"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert _ratings(engine) == 1
    _assert_no_session_survives(engine, study)
    engine.dispose()


@pytest.mark.parametrize("fmt", ["pg_dump", "sqlite"])
def test_a_postgres_restore_killed_once_it_committed_leaves_no_session_open(pg_cluster,
                                                                           tmp_path, fmt):
    """Into PostgreSQL: a pg_dump archive over a study (--force), or a SQLite backup into an
    empty database. The sessions end in the restore's own transaction, so a kill right after
    it commits leaves none open."""
    url = _fresh_pg_url(pg_cluster)
    engine = get_engine(url)
    init_study(engine, name="pilot")
    study = _study(engine)
    out = tmp_path / ("b.dump" if fmt == "pg_dump" else "b.db")
    backup(url, out, fmt=fmt)
    _after_backup(engine, study)
    target = url if fmt == "pg_dump" else _fresh_pg_url(pg_cluster)
    if fmt == "sqlite":  # the tokens live on in the backup only
        study["live"] = study["in_backup"]
    _restore_killed_at(out, target, "restore:replaced")
    restored = get_engine(target)
    assert _ratings(restored) == 1
    _assert_no_session_survives(restored, study)
