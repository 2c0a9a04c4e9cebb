"""data.engine.upsert_statement, the one INSERT … ON CONFLICT DO UPDATE of the data layer (the
judgment and the metric-score stores use it), on SQLite and PostgreSQL alike: a new key is
inserted, a stored one updated in the same statement, and ``where`` keeps the rows it
rejects."""

from __future__ import annotations

import sqlalchemy as sa

from data.engine import upsert_statement, write_connection


def _table() -> sa.Table:
    meta = sa.MetaData()
    return sa.Table("upsert_probe", meta, sa.Column("a", sa.String, primary_key=True),
                    sa.Column("b", sa.Integer, primary_key=True),
                    sa.Column("value", sa.Float), sa.Column("state", sa.String))


def _failed_only(stored, new):
    return stored.state == "failed"


def test_insert_update_and_keep(engine):
    t = _table()
    t.metadata.create_all(engine)
    key, cols = ("a", "b"), ("a", "b", "value", "state")
    with write_connection(engine) as c:
        stmt = upsert_statement(t, c.dialect.name, key, cols)
        c.execute(stmt, [{"a": "x", "b": 1, "value": 1.0, "state": "ok"},
                         {"a": "x", "b": 2, "value": 2.0, "state": "failed"}])
        c.execute(stmt, [{"a": "x", "b": 1, "value": 10.0, "state": "ok"}])
        assert upsert_statement(t, c.dialect.name, key, cols) is stmt  # built once
        guarded = upsert_statement(t, c.dialect.name, key, cols, _failed_only)
        # only the failed row is replaced; the stored answer of b = 1 is kept
        c.execute(guarded, [{"a": "x", "b": 1, "value": 99.0, "state": "ok"},
                            {"a": "x", "b": 2, "value": 20.0, "state": "ok"},
                            {"a": "y", "b": 1, "value": 5.0, "state": "ok"}])
    with engine.connect() as c:
        rows = sorted(c.execute(sa.select(t.c.a, t.c.b, t.c.value, t.c.state)).all())
    assert [tuple(r) for r in rows] == [("x", 1, 10.0, "ok"), ("x", 2, 20.0, "ok"),
                                        ("y", 1, 5.0, "ok")]
