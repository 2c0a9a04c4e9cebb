"""Shared fixtures: a temp working dir per test, fresh study databases on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from data.engine import _engine_for, get_engine
from data.study import init_study
from tests.pg import PgCluster, start_cluster


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


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> Iterator[str]:
    """An empty database URL: a SQLite file, and a fresh database on the test PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'study.db'}"
    else:
        url = _fresh_pg_url(request.getfixturevalue("pg_cluster"))
    yield url
    get_engine(url).dispose()
    _engine_for.cache_clear()


@pytest.fixture
def engine(db_url):
    """An initialised study (default rubric, no items) on each backend."""
    eng = get_engine(db_url)
    init_study(eng, name="test study")
    return eng
