"""Shared fixtures: a temp working dir per test, fresh study databases on SQLite and PostgreSQL."""

from __future__ import annotations

import atexit
import functools
import gc
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from data.engine import _engine_for, get_engine
from data.study import init_study
from tests.helpers import built_once_per_run, run_h2h
from tests.pg import PgCluster, start_cluster


def pytest_configure(config):
    """Test files in memory where the machine has it (/dev/shm), unless TMPDIR says where.
    Every test writes a study, and on disk the run waited for the kernel's writeback: under
    load tests/data took 293-327 s instead of 124 s with the same CPU time. Studies behave the
    same on either; the test processes, servers and PostgreSQL started here inherit it."""
    shm = "/dev/shm"
    if "TMPDIR" not in os.environ and os.path.isdir(shm) and os.access(shm, os.W_OK):
        os.environ["TMPDIR"] = shm
        tempfile.tempdir = None  # computed again from TMPDIR
    _scan_installed_components_once()
    _build_the_command_tree_once()
    _collect_garbage_less_often()
    atexit.register(_skip_the_collection_at_exit)


def _skip_the_collection_at_exit() -> None:
    """When a test process ends, Python's finalisation collects cyclic garbage over the whole
    heap, which by then holds every module and fixture the process used: 2.2 s after the
    last line of a 79-test run in one process (four AppTest and report files), 4-5 s for each
    xdist worker of a whole run, after the last test, while nothing else runs (a whole run
    timed hook by hook: the last worker's atexit at 462.9 s, the controller's session end at
    467.5 s). Frozen, the heap is left to the operating system: 0.1 s. Every atexit handler
    still runs and the exit status is kept; the tests and their folders are done with by
    then, and the servers and databases they started were stopped by their fixtures."""
    gc.freeze()


def _collect_garbage_less_often() -> None:
    """A test process holds a large, long-lived heap (SQLAlchemy, pandas, Streamlit, torch,
    every test module) and allocates fast, so Python's cycle collector ran thousands of times
    a file at its default thresholds (700, 10, 10): on tests/data/test_upgrades.py,
    tests/annotate/test_autocal.py, test_cli.py and three analysis files (112 tests, one
    process), 5,409 collections took 7.0 s of 41.8 CPU-s. At (20000, 20, 20): 156
    collections, 2.0 s, and 63.5 → 58.2 CPU-s for the run (second pair of runs: 60.9 →
    54.3). Garbage is still collected, in larger batches; only the test processes are set
    so, not the `h2h` processes and app servers they start."""
    gc.set_threshold(20_000, 20, 20)


def _build_the_command_tree_once() -> None:
    """Typer builds `h2h`'s whole command tree (57 commands, every signature's annotations
    evaluated) on each call of the app: 52 ms, once per process for a person, but the suite
    calls `h2h` in its own process about a thousand times (run_h2h, CliRunner) - some 50 s of
    CPU in a whole run, measured with cProfile in both workers. The tree of a Typer app does
    not change once its commands are registered, so it is built once per app object and the
    same click objects run every call, each with its own context, as in a process of its own;
    every command still goes through Typer's own entry point and error handling."""
    import typer.main
    import typer.testing

    if hasattr(typer.main.get_command, "cache_info"):
        return  # done already in this process
    once = functools.cache(typer.main.get_command)  # keyed by the app object
    typer.main.get_command = once
    typer.testing._get_command = once  # CliRunner took its own reference at import


def _scan_installed_components_once() -> None:
    """Streamlit's AppTest scans every installed distribution's metadata for v2 components
    on the first run of each AppTest (0.6 s of parsing, 60% of a short page check; some 250
    AppTests in the suite). The installed packages do not change during a test run, so the
    scan is made once per process and its result handed to every AppTest; the app servers
    the browser tests start scan for themselves, as in production."""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if getattr(scan, "_h2h_once", False):
        return
    found: list = []

    def once(*args, **kwargs):
        if not found:
            found.append(scan(*args, **kwargs))
        return list(found[0])

    once._h2h_once = True  # type: ignore[attr-defined]
    manifest_scanner.scan_component_manifests = once


def pytest_collection_modifyitems(config, items):
    """Every test that starts the throwaway PostgreSQL cluster is marked ``postgres``, however
    it reaches it, so `-m "not postgres"` (make test-fast) leaves exactly those out."""
    for it in items:
        if "pg_cluster" in getattr(it, "fixturenames", ()):
            it.add_marker(pytest.mark.postgres)
    _longest_files_first(items)


# The files that take longest (seconds of `--durations=0`, quiet, two workers), given out
# first: the longest file given out last kept one worker busy while the other had nothing
# left to do. Longest first is the classic packing; the order of the tests inside a file, and
# of every other file (all shorter than these), is unchanged. xdist would otherwise reorder
# the files by their number of tests (its --loadscope-reorder, on by default; turned off in
# pyproject.toml's addopts), which put the browser files, few tests each, at the end.
LONGEST_FILES = (  # whole quiet run, two workers, e7055ef (test_import_stream and test_drift
    # left the list at a4ccb2f, which cut their slowest tests)
    "tests/annotate/test_browser_rating_page.py",   # 66 s
    "tests/judge/test_local.py",                    # 52 s: the model in this process
    "tests/analysis/test_report.py",                # 44 s
    "tests/annotate/test_browser_quality.py",       # 39 s
    "tests/annotate/test_browser_app.py",           # 37 s
    "tests/annotate/test_browser_training_page.py",  # 34 s
    "tests/analysis/test_report_latex.py",          # 31 s
    "tests/annotate/test_two_servers.py",           # 27 s
    "tests/annotate/test_hostile_text_pages.py",    # 27 s
    "tests/judge/test_llama_server.py",             # 25 s: llama.cpp's server
    "tests/annotate/test_revocation_load.py",       # 22 s
    "tests/data/test_backup.py",                    # 22 s
    "tests/data/test_upgrades.py",                  # 20 s
    "tests/annotate/test_autocal.py",               # 20 s
    "tests/annotate/test_browser_pairs_page.py",    # 19 s
    "tests/analysis/test_metrics_cli.py",           # 16 s
    "tests/annotate/test_cli.py",                   # 15 s
    "tests/data/test_hostile_files.py",             # 15 s
    "tests/annotate/test_browser_admin_charts.py",  # 14 s
    "tests/annotate/test_i18n_pages.py",            # 13 s
    "tests/judge/test_run_summary.py",              # 10 s
    "tests/annotate/test_startup_imports.py",       # 10 s
    "tests/annotate/test_calibrate.py",             # 9 s
    "tests/data/test_concurrency.py",               # 9 s
    "tests/data/test_restore_crash.py",             # 8 s
    "tests/annotate/test_browser_uploader.py",      # 8 s
    "tests/judge/test_run_anthropic.py",            # 8 s
)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's `--dist loadfile`, choosing which file a worker takes next: a file that drives
    a browser (marked ``browser``: a browser, an app server and the test process busy
    together, more than one core) while the other worker runs none, otherwise one that runs
    in its own process; in queue order (longest first) within each kind. So no long file
    starts last, and the browser tests, the ones that wait on timing, never share the two
    cores with another browser file. Measured within one half hour, quiet: 437 s a whole run
    with this, 435 s with the longest files first alone, 435 s in xdist's own order (files
    with the most tests first); the machine's speed varied more than that (407 s for xdist's
    order half an hour before), so no order is claimed faster."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    root = Path(__file__).resolve().parents[1]
    kinds: dict[str, bool] = {}

    def browser(scope: str) -> bool:
        if scope not in kinds:
            path = root / scope
            kinds[scope] = path.suffix == ".py" and path.is_file() and \
                "mark.browser" in path.read_text(encoding="utf-8")
        return kinds[scope]

    class BrowserBesideTheRest(LoadFileScheduling):
        def _assign_work_unit(self, node) -> None:
            other_on_browser = any(
                browser(scope) and not all(done.values())
                for other, units in self.assigned_work.items() if other is not node
                for scope, done in units.items())
            pick = next((s for s in self.workqueue if browser(s) != other_on_browser), None)
            if pick is not None:
                self.workqueue.move_to_end(pick, last=False)
            super()._assign_work_unit(node)

    return BrowserBesideTheRest(config, log)


def _longest_files_first(items: list) -> None:
    rank = {f: n for n, f in enumerate(LONGEST_FILES)}

    def key(pair):
        n, it = pair
        return (rank.get(it.nodeid.split("::", 1)[0], len(rank)), n)

    items[:] = [it for _, it in sorted(enumerate(items), key=key)]


@pytest.fixture(autouse=True)
def _isolate(tmp_path, monkeypatch):
    """Every test runs in its own folder with H2H_DB pointing there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("H2H_DB", str(tmp_path / "h2h.db"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


def _fresh_pg_url(cluster: PgCluster) -> str:
    name = "t_" + uuid.uuid4().hex[:12]
    admin = sa.create_engine(cluster.url(), isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.exec_driver_sql(f'CREATE DATABASE "{name}"')
    admin.dispose()
    return cluster.url(name)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request, tmp_path) -> Iterator[str]:
    """An empty database URL: a SQLite file, and a fresh database on the test PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'study.db'}"
    else:
        url = _fresh_pg_url(request.getfixturevalue("pg_cluster"))
    yield url
    get_engine(url).dispose()
    _engine_for.cache_clear()


@pytest.fixture(scope="session")
def _sqlite_study(tmp_path_factory) -> Path:
    """An initialised SQLite study, made once per test process (the migrations take a second
    or more); `engine` copies the file."""
    path = tmp_path_factory.mktemp("study-template") / "study.db"
    eng = get_engine(path)
    init_study(eng, name="test study")
    eng.dispose()  # the last connection closed: the WAL is in the file
    _engine_for.cache_clear()
    return path


@pytest.fixture(scope="session")
def _pg_study(pg_cluster) -> str:
    """The same on the test PostgreSQL: a database that `engine` clones (CREATE DATABASE …
    TEMPLATE copies it file by file, far faster than running the migrations again)."""
    url = _fresh_pg_url(pg_cluster)
    eng = get_engine(url)
    init_study(eng, name="test study")
    eng.dispose()  # a template may have no open connection
    _engine_for.cache_clear()
    return sa.engine.make_url(url).database


@pytest.fixture
def engine(request, db_url):
    """An initialised study (default rubric, no items) on each backend: a copy of one made
    once per test process."""
    u = sa.engine.make_url(db_url)
    if u.get_backend_name() == "sqlite":
        shutil.copyfile(request.getfixturevalue("_sqlite_study"), u.database)
    else:
        template = request.getfixturevalue("_pg_study")
        admin = sa.create_engine(request.getfixturevalue("pg_cluster").url(),
                                 isolation_level="AUTOCOMMIT")
        with admin.connect() as c:  # db_url made it empty: made again from the template
            c.exec_driver_sql(f'DROP DATABASE "{u.database}"')
            c.exec_driver_sql(f'CREATE DATABASE "{u.database}" TEMPLATE "{template}"')
        admin.dispose()
    return get_engine(db_url)


@dataclass(frozen=True)
class DemoStudy:
    """A study as `h2h demo` builds it: its file, what the command printed, and the codes."""

    path: Path
    stdout: str
    codes: dict[str, str]  # account → code: "demo-rater", "demo-admin", "demo-pairs"

    def copy_to(self, folder: Path, name: str = "demo.db") -> Path:
        """A fresh, independent copy of the demo study in ``folder``."""
        dest = Path(folder) / name
        shutil.copyfile(self.path, dest)
        return dest


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> DemoStudy:
    """`h2h demo` built once per test run (it takes seconds); tests take copies of it
    (`demo_template.copy_to(tmp_path)`) rather than building their own."""

    def build(folder: Path) -> None:
        out = run_h2h("demo", "--db", str(folder / "demo.db")).stdout
        # run_h2h disposed the command's engine: the WAL is checkpointed into the file
        (folder / "demo.out").write_text(out, encoding="utf-8")

    folder = built_once_per_run(tmp_path_factory, "demo-template", build)
    path, out = folder / "demo.db", (folder / "demo.out").read_text(encoding="utf-8")
    codes = dict(re.findall(r"code \((demo-[\w-]+)\): (H2H-[A-Z0-9-]+)", out))
    assert {"demo-rater", "demo-admin"} <= set(codes), out
    return DemoStudy(path, out, codes)
