"""The schema comes only from migrations, and an old study upgrades without losing data."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

from data.engine import create_sqlite_file, get_engine
from data.errors import H2HError
from data.migrate import HEAD, current_revision, head_revision, schema_state, upgrade
from data.rubric import load_default_rubric
from data.study import current_rubric, init_study


def test_models_match_head_migration(db_url):
    engine = get_engine(db_url)
    upgrade(engine)
    with engine.connect() as c:
        diff = compare_metadata(MigrationContext.configure(c, opts={"compare_type": True}),
                                SQLModel.metadata)
    assert diff == []


def test_first_schema_to_head_keeps_populated_data(db_url):
    engine = get_engine(db_url)
    upgrade(engine, "0001")
    rub = load_default_rubric()
    now = "2026-01-02 03:04:05"
    with engine.begin() as c:
        c.execute(sa.text("INSERT INTO rubric (id, name, version, definition, source, "
                          "created_at) VALUES (1, :n, :v, :d, '', :t)"),
                  {"n": rub.name, "v": rub.version, "d": json.dumps(rub.definition()), "t": now})
        c.execute(sa.text("INSERT INTO study (id, name, description, created_at, rubric_id) "
                          "VALUES (1, 'old study', 'from 0001', :t, 1)"), {"t": now})
        ctx = json.dumps({"turns": [{"role": "user", "text": "我今天很累"}]}, ensure_ascii=False)
        for i in range(3):
            c.execute(sa.text(
                "INSERT INTO item (id, task, scenario, context, response, model, condition, "
                "reference, metadata, content_hash, position, created_at, updated_at) VALUES "
                "(:id, 'dialogue', 's1', :ctx, '辛苦了', 'm', 'sap', NULL, '{}', 'h', :p, :t, :t)"),
                {"id": f"i{i}", "ctx": ctx, "p": i, "t": now})
        c.execute(sa.text("INSERT INTO rater (id, name, role, code_hash, active, created_at) "
                          "VALUES (1, 'ann', 'rater', 'sha256:x', :a, :t)"),
                  {"a": True, "t": now})
        c.execute(sa.text("INSERT INTO assignment (rater_id, item_id, position, created_at) "
                          "VALUES (1, 'i0', 0, :t)"), {"t": now})
        for i in range(3):
            c.execute(sa.text(
                "INSERT INTO rating (rater_id, item_id, dimension, score, comment, "
                "rubric_version, created_at, updated_at) VALUES "
                "(1, :item, 'empathy', :s, 'ok', :v, :t, :t)"),
                {"item": f"i{i}", "s": 3 + i, "v": rub.version, "t": now})
    assert current_revision(engine) == "0001"

    res = init_study(engine)  # what `h2h init` does on an existing study

    assert not res.created and res.revision_before == "0001"
    assert res.revision_after == head_revision() == current_revision(engine)
    with engine.connect() as c:
        rows = c.execute(sa.text("SELECT item_id, score, comment, flags, source FROM rating "
                                 "ORDER BY item_id")).all()
        assert [(r[0], r[1], r[2]) for r in rows] == [("i0", 3, "ok"), ("i1", 4, "ok"),
                                                      ("i2", 5, "ok")]
        assert all(json.loads(r[3]) == [] if isinstance(r[3], str) else r[3] == []
                   for r in rows)
        assert {r[4] for r in rows} == {"app"}
        revs = c.execute(sa.text("SELECT COUNT(*) FROM rating_revision")).scalar_one()
        assert revs == 3  # history starts with each existing rating's state
        ctx = c.execute(sa.text("SELECT context FROM item WHERE id='i0'")).scalar_one()
        assert "我今天很累" in (ctx if isinstance(ctx, str) else json.dumps(ctx,
                                                                          ensure_ascii=False))
        assert c.execute(sa.text("SELECT simulated FROM rater")).scalar_one() in (0, False)
        assert c.execute(sa.text("SELECT kind FROM assignment")).scalar_one() == "primary"
    assert current_rubric(engine).version == rub.version


def test_init_twice_is_a_no_op(db_url):
    engine = get_engine(db_url)
    first = init_study(engine, name="s")
    second = init_study(engine)
    assert first.created and not second.created
    assert second.revision_before == second.revision_after == head_revision()


def test_init_refuses_a_foreign_database(db_url):
    create_sqlite_file(db_url)  # another program's database (no-op on PostgreSQL)
    engine = get_engine(db_url)
    with engine.begin() as c:
        c.execute(sa.text("CREATE TABLE patients (id INTEGER PRIMARY KEY)"))
    with pytest.raises(H2HError, match="not an h2htalk study"):
        init_study(engine)
    with engine.connect() as c:  # untouched
        assert "alembic_version" not in sa.inspect(c).get_table_names()


def test_the_fast_schema_check_knows_the_head_alembic_knows():
    """ensure_current answers from data.migrate.HEAD without Alembic: a new migration must
    move HEAD with it (else every command would call a current study 'older')."""
    assert HEAD == head_revision()


def test_the_fast_schema_check_never_calls_an_older_or_odd_study_current(db_url):
    engine = get_engine(db_url)
    upgrade(engine, "0001")
    assert schema_state(engine) == "behind"
    upgrade(engine)
    assert schema_state(engine) == "current"
    with engine.begin() as c:  # two recorded revisions (branches): not the fast path's case
        c.execute(sa.text("INSERT INTO alembic_version (version_num) VALUES ('0001')"))
    with pytest.raises(Exception, match="more than one head"):  # Alembic's own answer
        schema_state(engine)
    with engine.begin() as c:
        c.execute(sa.text("DELETE FROM alembic_version"))
        c.execute(sa.text("INSERT INTO alembic_version (version_num) VALUES ('9999')"))
    assert schema_state(engine) == "ahead"
