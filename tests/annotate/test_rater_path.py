"""A rater's path through the app loads and computes only what it needs (issue 16): no
statistics, judge or SDK modules; one parsed rubric per process; `h2h serve` refuses what it
cannot serve, quickly and clearly."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from annotate.serving import study_url
from data.engine import resolve_url
from data.errors import H2HError
from tests.annotate.conftest import APP_DIR
from tests.helpers import H2HResult, item, jsonl, run_h2h

NOT_FOR_RATERS = ("analysis", "judge", "scipy", "pandas", "numpy", "anthropic", "openai",
                  "krippendorff", "kaleido", "llama_cpp",
                  # the schema check reads the study's revision itself (data.migrate.HEAD)
                  "alembic")

H2H = [sys.executable, "-m", "annotate.cli"]


def _h2h(*args: str, timeout: float = 120) -> H2HResult:
    """`h2h serve` runs in a subprocess (it is a server); the rest in this process."""
    return run_h2h(*args, check=False, process=args[0] == "serve", timeout=timeout)


@pytest.fixture
def small_study(tmp_path: Path) -> tuple[Path, str]:
    """A study built through the CLI (no test-process imports leak into the probe)."""
    db = tmp_path / "s.db"
    items = tmp_path / "items.jsonl"
    items.write_text(jsonl(*(item(f"i{n}") for n in range(4))), encoding="utf-8")
    for args in (["init"], ["import", "items", str(items)]):
        assert _h2h(*args, "--db", str(db)).returncode == 0
    add = _h2h("raters", "add", "pat", "--db", str(db))
    code = add.stdout.strip().splitlines()[-1]
    assert _h2h("assign", "--db", str(db), "--k", "1").returncode == 0
    return db, code


def test_signing_in_and_rating_loads_no_statistics_judge_or_sdk(small_study):
    """Sign in, rate the first item, reach the second: in a fresh interpreter, so nothing
    imported by other tests can hide a heavy import on the rater's path."""
    db, code = small_study
    probe = textwrap.dedent(f"""
        import json, sys
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file({str(APP_DIR / "app.py")!r}, default_timeout=60).run()
        at.text_input(key="h2h_code_input").input({code!r})
        at.button[0].click().run()
        for r in at.radio:
            r.set_value(3)
        at.button(key="h2h_save").click().run()
        print("@@" + json.dumps({{"progress": at.get("progress")[0].proto.text,
                                  "errors": [str(e) for e in at.exception],
                                  "modules": sorted(m for m in sys.modules if "." not in m)}}))
    """)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, env={**__import__("os").environ, "H2H_DB": str(db)})
    assert "@@" in proc.stdout, proc.stdout + proc.stderr
    res = json.loads(proc.stdout.rsplit("@@", 1)[1])
    assert res["errors"] == [] and res["progress"].startswith("1 of 4 done")
    assert sorted(set(res["modules"]) & set(NOT_FOR_RATERS)) == []


# the database layer: `h2h serve` imports it on another thread while the browser draws the
# sign-in page, so the page's first run must not wait for it
DATA_LAYER = ("sqlalchemy", "sqlmodel", "psycopg", "data.engine", "data.models", "data.study")


def test_the_sign_in_page_is_drawn_without_the_database_layer(small_study):
    """A browser without a session cookie gets the sign-in page from a first run that imports
    no database module and opens no connection (fresh interpreter); signing in then works."""
    db, code = small_study
    probe = textwrap.dedent(f"""
        import json, sys
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file({str(APP_DIR / "app.py")!r}, default_timeout=60).run()
        first = sorted(m for m in sys.modules if m.split(".")[0] in ("sqlalchemy", "sqlmodel",
                       "psycopg") or m in {list(DATA_LAYER)!r})
        form = [t.label for t in at.text_input]
        at.text_input(key="h2h_code_input").input({code!r})
        at.button[0].click().run()
        print("@@" + json.dumps({{"first": first, "form": form,
                                  "errors": [str(e) for e in at.exception],
                                  "progress": at.get("progress")[0].proto.text}}))
    """)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, env={**__import__("os").environ, "H2H_DB": str(db)})
    assert "@@" in proc.stdout, proc.stdout + proc.stderr
    res = json.loads(proc.stdout.rsplit("@@", 1)[1])
    assert res["form"] == ["Access code"] and res["errors"] == []
    assert res["first"] == []
    assert res["progress"].startswith("0 of 4 done")


def test_the_app_shares_one_parsed_rubric(demo_db):
    """Every session and rerun reads the same parsed rubric object (no re-parse, no copy)."""
    from data.study import current_rubric

    def script():
        import streamlit as st

        from annotate.resources import cached_rubric, engine
        st.session_state["ids"] = [id(cached_rubric(engine())), id(cached_rubric(engine()))]

    ids = []
    for _ in range(2):  # two sessions of the same server process
        at = AppTest.from_function(script, default_timeout=60).run()
        assert not at.exception
        ids += at.session_state["ids"]
    assert len(set(ids)) == 1
    assert ids[0] == id(current_rubric(demo_db["engine"]))


def test_study_url_follows_resolve_url_without_the_database_layer(tmp_path, monkeypatch):
    (tmp_path / "s.db").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    for given in ("s.db", str(tmp_path / "s.db"), "./s.db"):
        assert study_url(given)[0] == resolve_url(given)
    monkeypatch.setenv("H2H_DB", "s.db")
    assert study_url(None) == (resolve_url(None), str(tmp_path / "s.db"))
    from annotate import resources  # the app's own reading of $H2H_DB, as light

    for env in ("s.db", str(tmp_path / "s.db"), "~/x.db", "postgresql+psycopg://u@h/s"):
        monkeypatch.setenv("H2H_DB", env)
        assert resources.resolve_url() == resolve_url(None)
    monkeypatch.delenv("H2H_DB")
    assert resources.resolve_url() == resolve_url(None)
    url = "postgresql+psycopg://me:secret@127.0.0.1:5432/study"
    assert study_url(url)[0] == url and "secret" not in study_url(url)[1]
    with pytest.raises(H2HError, match="no study here yet"):
        study_url("missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_serve_refuses_a_missing_study_before_starting(tmp_path):
    proc = _h2h("serve", "--db", str(tmp_path / "none.db"), "--port", "1")
    assert proc.returncode == 1
    assert "none.db: no study here yet; create one with `h2h init`" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "none.db").exists()


def test_serve_stops_with_a_clear_error_on_a_database_that_is_not_a_study(tmp_path):
    """Checked while the server starts: it stops by itself, exit 1, one message."""
    import sqlite3

    from tests.browser import free_port

    db = tmp_path / "other.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE notes (body TEXT)")
    proc = _h2h("serve", "--db", str(db), "--port", str(free_port()), timeout=90)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Error: this database is not an h2htalk study" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
