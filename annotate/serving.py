"""`h2h serve` without a slow start: Streamlit runs in this process, and the study is checked
while the browser loads the app.

From process start to a rater's first item, the largest single step is the browser loading
Streamlit's page (about a second of the browser's own work). The server is idle then, so it
listens first and, on a second thread, meanwhile imports the database layer, checks that the
study is at the current schema (refusing to serve otherwise) and reads the rubric once, so the
first sign-in finds all of it done (benchmarks/bench_cold_start.py measures the whole path).

A missing study file is refused before anything starts; a database that is not a current
h2htalk study stops the server within moments of its start, with the same message and exit
status 1 as before.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from data.errors import H2HError
from data.location import file_url, given, is_url

__all__ = ["study_url", "serve_app", "run_streamlit"]

NO_STUDY = "no study here yet; create one with `h2h init`"


def study_url(db: str | None) -> tuple[str, str]:
    """The study's SQLAlchemy URL and how to print it, for ``--db`` / ``$H2H_DB`` / ./h2h.db.

    A file path follows the rule of :func:`data.engine.resolve_url` without importing the
    database layer (a test keeps the two equal); a missing file is refused here rather than
    created empty by the database driver.
    """
    raw = given(db)
    if is_url(raw):
        from data.engine import describe_url, resolve_url

        url = resolve_url(raw)
        return url, describe_url(url)
    path = Path(raw).expanduser().resolve()
    if not path.is_file():
        raise H2HError(f"{path}: {NO_STUDY}")
    _refuse_non_database(path)
    return file_url(raw), str(path)


def _refuse_non_database(path: Path) -> None:
    """Say before the server starts (and its banner prints) that ``path`` is no database.

    Asked of SQLite, read-only, before this process holds any connection to the file."""
    import sqlite3

    try:
        con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return  # unreadable: the study check reports it in the words of the database layer
    try:
        con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc):
            raise H2HError(f"--db: '{path}' is not an SQLite database, so not an h2htalk "
                           "study (check the path)") from None
    finally:
        con.close()


class _StudyCheck(threading.Thread):
    """Once the server listens: check the study, then warm what the first sign-in needs."""

    def __init__(self, url: str, host: str, port: int):
        super().__init__(name="h2h-study-check", daemon=True)
        self.url, self.port = url, port
        self.host = "127.0.0.1" if host in ("", "0.0.0.0") else "::1" if host == "::" else host
        self.problem: str | None = None

    def run(self) -> None:
        if not self._wait_listening():
            return  # the server did not come up; Streamlit reports why
        try:
            from data.engine import get_engine
            from data.study import current_rubric

            # The schema check, then the rubric: parsed once here, every later read in this
            # process gets the same parsed rubric (data.study keeps it by version).
            current_rubric(get_engine(self.url))
        except Exception as exc:  # noqa: BLE001 - any failure means: do not serve this
            self.problem = _message(exc)
            self._stop_server()
            return
        # The rest of what the sign-in and the first rating page use, loaded while the
        # browser is busy with Streamlit's page. None of it imports streamlit.
        import annotate.services.auth  # noqa: F401
        import annotate.services.queue  # noqa: F401
        import annotate.services.render  # noqa: F401

    def _wait_listening(self, timeout: float = 120.0) -> bool:
        if self.port == 0:  # the server picks its port: nothing to wait on, check at once
            return True
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((self.host, self.port), timeout=1):
                    return True
            except OSError:
                time.sleep(0.01)
        return False

    def _stop_server(self) -> None:
        # The web server (uvicorn, under Streamlit) installs its SIGTERM handler (a clean
        # shutdown) just after it starts listening; wait for it so the signal is not taken
        # by ours (or the default "terminate now") while it starts.
        deadline = time.monotonic() + 10
        while signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None, _exit_quietly) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)


def _exit_quietly(signum, frame) -> None:
    """SIGTERM after the web server has shut down: uvicorn puts back the handler it found
    and sends the signal again; end with SystemExit, not the default "terminated"."""
    raise SystemExit(0)


def _message(exc: Exception) -> str:
    if isinstance(exc, H2HError):
        return str(exc)
    orig = getattr(exc, "orig", None)  # sqlalchemy's DBAPI errors carry the driver's error
    first = (str(orig) if orig else str(exc)).strip().splitlines()
    return f"cannot use the study database: {first[0] if first else type(exc).__name__}"


def serve_app(url: str, host: str, port: int, streamlit_args: list[str]) -> None:
    """Serve the app for the study at ``url`` until stopped; an unusable study raises
    :class:`H2HError` (after stopping the server)."""
    os.environ["H2H_DB"] = url
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_quietly)
    check = _StudyCheck(url, host, port)
    check.start()
    try:
        run_streamlit(streamlit_args)
    except SystemExit as exc:  # Streamlit's command line always ends this way
        if check.problem is None and exc.code not in (0, None):
            raise
    if check.problem is not None:
        raise H2HError(check.problem)


def run_streamlit(args: list[str]) -> None:
    """Run `streamlit ARGS` in this process, through Streamlit's own command line (the code
    path of `streamlit run`): no second interpreter, no child process left behind."""
    from streamlit.web import cli as streamlit_cli

    sys.stdout.flush()
    streamlit_cli.main(args, prog_name="streamlit")
