"""Small builders shared by tests."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

TABLES = ("study", "rubric", "dimension", "item", "rater", "assignment", "rating",
          "rating_revision", "repeat_rating", "adjudication", "judge_config", "judgment",
          "judge_batch", "cost_ledger", "generation_config", "generation", "quality_settings",
          "gold_score", "training_rating", "qualification", "attention_check", "attention_result",
          "norming_session", "norming_item", "norming_participant", "norming_rating",
          "metric_config", "metric_score", "pair", "pair_assignment", "preference",
          "preference_revision", "pair_judgment", "active_draw", "active_draw_item",
          "calibration_split", "autocalibration", "drift_check", "drift_judgment")


ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class H2HResult:
    """What an `h2h` run left: its exit status and its two streams."""

    returncode: int
    stdout: str
    stderr: str


def built_once_per_run(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder ``name`` that ``build(folder)`` fills once per test run, whichever worker asks
    first; the other worker waits for it (a lock file) instead of building its own. For what
    takes seconds to make and is only read afterwards (the demo study every test copies, the
    2-block local model). Outside xdist, once per process."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above each worker's own
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (folder / ".built").exists():
            folder.mkdir(exist_ok=True)
            build(folder)
            (folder / ".built").touch()
    return folder


def h2h_env(**extra: str) -> dict[str, str]:
    """The environment for an `h2h` subprocess that imports this checkout first."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **extra)


def run_h2h(*args: str, check: bool = True, input: str | None = None,
            env: dict[str, str] | None = None, process: bool = False,
            timeout: float = 600) -> H2HResult:
    """Run `h2h ARGS` as a user would and return its status and output.

    By default in this process, through the console entry point ``annotate.cli.main`` (the
    same error handling, exit codes and messages; a Python start and the imports cost about a
    second a call, which the suite paid ~300 times). ``process=True`` runs a real subprocess:
    for the tests whose subject is the process boundary (start-up imports, signals, kills,
    servers). ``check``: a non-zero status fails the test with both streams shown."""
    if process:
        proc = subprocess.run([sys.executable, "-m", "annotate.cli", *args],
                              capture_output=True, text=True, timeout=timeout, input=input,
                              env=h2h_env(**(env or {})))
        res = H2HResult(proc.returncode, proc.stdout, proc.stderr)
    else:
        res = _in_process(list(args), input, env or {})
    if check and res.returncode != 0:
        raise AssertionError(f"h2h {' '.join(args)} exited {res.returncode}:\n{res.stdout}\n"
                             f"{res.stderr}")
    return res


def h2h(*args: str, **kw) -> H2HResult:
    """`run_h2h` that must succeed (the older name, kept for brevity)."""
    return run_h2h(*args, **kw)


def _in_process(args: list[str], input: str | None, env: dict[str, str]) -> H2HResult:
    import data.engine as engine_mod
    from annotate.cli import main

    made = []
    real_make = engine_mod.make_engine

    def recording(*a, **kw):
        eng = real_make(*a, **kw)
        made.append(eng)
        return eng

    out, err = io.StringIO(), io.StringIO()
    saved_argv, saved_stdin, saved_env = sys.argv, sys.stdin, dict(os.environ)
    sys.argv = ["h2h", *args]
    sys.stdin = io.StringIO(input or "")
    os.environ.update(env)
    # a fresh process has no engine: the command gets its own, disposed afterwards, so a
    # file it deletes or replaces (demo --force, restore) is never read through a stale pool
    engine_mod._engine_for.cache_clear()
    engine_mod.make_engine = recording
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception:  # what a subprocess would print as a traceback
                traceback.print_exc()
                code = 1
    finally:
        engine_mod.make_engine = real_make
        engine_mod._engine_for.cache_clear()
        for eng in made:
            eng.dispose()
        sys.argv, sys.stdin = saved_argv, saved_stdin
        os.environ.clear()
        os.environ.update(saved_env)
    return H2HResult(code, out.getvalue(), err.getvalue())


def item(id: str, task: str = "dialogue", **kw) -> dict:
    d = {"id": id, "task": task, "scenario": kw.pop("scenario", id),
         "context": {"persona": "Mira, a calm companion.", "memories": [], "schedule": "",
                     "turns": [{"role": "user", "text": f"hello from {id}"}]},
         "response": kw.pop("response", f"reply to {id}"), "model": "m", "condition": None,
         "reference": None, "metadata": {}}
    d.update(kw)
    return d


def jsonl(*objs: dict) -> str:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def snapshot(engine) -> dict[str, int | str]:
    """Row counts of every table plus the rating rows, to prove an import changed nothing."""
    out: dict[str, int | str] = {}
    with engine.connect() as c:
        for t in TABLES:
            out[t] = c.execute(sa.text(f"SELECT COUNT(*) FROM {t}")).scalar_one()
        rows = c.execute(sa.text("SELECT rater_id, item_id, dimension, score, comment "
                                 "FROM rating ORDER BY rater_id, item_id, dimension")).all()
        out["ratings"] = repr(rows)
        items = c.execute(sa.text("SELECT id, content_hash FROM item ORDER BY id")).all()
        out["items"] = repr(items)
    return out
