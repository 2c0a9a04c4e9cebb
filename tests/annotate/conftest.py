"""A demo-like study on disk for page tests: sample items, simulated ratings, one rater with
an assigned queue, one admin."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from annotate.services.assignment import assign
from annotate.services.auth import Identity
from data.engine import _engine_for, get_engine
from data.raters import add_rater
from data.sample import build_sample_study
from data.sessions import open_session
from data.study import current_rubric, init_study
from judge.simulate import add_simulated_judges

APP_DIR = Path(__file__).resolve().parents[2] / "annotate"


@pytest.fixture(autouse=True)
def _nothing_computed_yet():
    """Each test starts with none of the admin pages' results kept (annotate.computed): a
    result kept from another test's equal study would hide what this test patches."""
    from annotate.computed import forget

    forget()


@pytest.fixture(scope="session")
def _demo_db_template(tmp_path_factory):
    """The page tests' study, built once per test process (a few seconds); each test gets a
    copy of the file and its own sessions."""
    db = tmp_path_factory.mktemp("demo-db") / "demo.db"
    engine = get_engine(db)
    init_study(engine, name="Page test study")
    build_sample_study(engine, current_rubric(engine))
    rater, rater_code = add_rater(engine, "pat", "rater")
    admin, admin_code = add_rater(engine, "ada", "admin")
    assign(engine, k=1, seed=0, repeat_share=0.1)
    add_simulated_judges(engine, current_rubric(engine), seed=3)
    engine.dispose()  # the last connection closed: the WAL is in the file
    _engine_for.cache_clear()
    return db, (rater.id, rater_code), (admin.id, admin_code)


@pytest.fixture
def demo_db(tmp_path, monkeypatch, _demo_db_template):
    template, (rater_id, rater_code), (admin_id, admin_code) = _demo_db_template
    db = tmp_path / "demo.db"
    shutil.copyfile(template, db)
    monkeypatch.setenv("H2H_DB", str(db))
    engine = get_engine(db)
    rater_token, _ = open_session(engine, rater_id)
    admin_token, _ = open_session(engine, admin_id)
    yield {"db": db, "engine": engine,
           "rater": Identity(rater_id, "pat", "rater", rater_token), "rater_code": rater_code,
           "admin": Identity(admin_id, "ada", "admin", admin_token), "admin_code": admin_code}
    engine.dispose()
    _engine_for.cache_clear()
