"""What one "Save and next" stores: the rows, a revision per change and nothing else, the
time spent, the assignment marked done; hidden repeats apart. On SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from data.engine import write_session
from data.errors import H2HError
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Assignment, Rater
from data.rating_service import save_item_ratings
from data.study import current_rubric
from tests.helpers import item


def _study(engine):
    import_item_records(engine, [ItemRecord.model_validate(item("it1"))], file="t")
    with write_session(engine) as s:
        rater = Rater(name="ann", role="rater")
        s.add(rater)
        s.flush()
        a = Assignment(rater_id=rater.id, item_id="it1", position=1, kind="primary")
        s.add(a)
        s.flush()
        return rater.id, a.id


def _flags(stored) -> list:
    return json.loads(stored) if isinstance(stored, str) else stored  # SQLite: JSON text


def _rows(engine, sql: str):
    with engine.connect() as c:
        return [tuple(r) for r in c.execute(sa.text(sql))]


def test_saving_again_revises_only_what_changed(engine):
    rid, aid = _study(engine)
    dims = [d.key for d in current_rubric(engine).dimensions_for("dialogue")]
    assert len(dims) >= 3
    first = {k: 3 for k in dims}
    first[dims[0]] = None  # cannot rate
    save_item_ratings(engine, rater_id=rid, item_id="it1", scores=first, comment="hm",
                      flags=["red_flag"], seconds_spent=30.0, assignment_id=aid)
    rows = _rows(engine, "SELECT id, dimension, score, comment, flags, seconds_spent, source "
                         "FROM rating ORDER BY dimension")
    per_dim = 30.0 / len(dims)
    assert [(d, s, c, _flags(fl), sec, src) for _i, d, s, c, fl, sec, src in rows] == [
        (k, first[k], "hm", ["red_flag"], pytest.approx(per_dim), "app") for k in sorted(dims)]
    ids = {d: i for i, d, *_ in rows}
    revs = _rows(engine, "SELECT rating_id, score, comment, seconds_spent FROM rating_revision "
                         "ORDER BY id")
    # one revision per dimension, in the order of the dimensions, as stored
    assert revs == [(ids[k], first[k], "hm", pytest.approx(per_dim)) for k in dims]
    (done,) = _rows(engine, f"SELECT completed_at FROM assignment WHERE id = {aid}")
    assert done[0] is not None

    # the same scores again: nothing changes, no revision
    save_item_ratings(engine, rater_id=rid, item_id="it1", scores=first, comment="hm",
                      flags=["red_flag"], seconds_spent=9.0, assignment_id=aid)
    assert len(_rows(engine, "SELECT id FROM rating_revision")) == len(dims)
    assert _rows(engine, f"SELECT completed_at FROM assignment WHERE id = {aid}") == [done]

    # one score changed: that row is updated in place, its time adds up, one revision more
    second = dict(first, **{dims[1]: 5})
    save_item_ratings(engine, rater_id=rid, item_id="it1", scores=second, comment="hm",
                      flags=["red_flag"], seconds_spent=12.0, assignment_id=aid)
    after = {d: (i, s, sec) for i, d, s, _c, _f, sec, _src in _rows(
        engine, "SELECT id, dimension, score, comment, flags, seconds_spent, source "
                "FROM rating ORDER BY dimension")}
    assert after[dims[1]] == (ids[dims[1]], 5, pytest.approx(per_dim + 12.0 / len(dims)))
    assert after[dims[2]] == (ids[dims[2]], 3, pytest.approx(per_dim))
    revs = _rows(engine, "SELECT rating_id, score FROM rating_revision ORDER BY id")
    assert len(revs) == len(dims) + 1 and revs[-1] == (ids[dims[1]], 5)


def test_a_hidden_repeat_goes_to_repeat_rating_without_revisions(engine):
    rid, _aid = _study(engine)
    dims = [d.key for d in current_rubric(engine).dimensions_for("dialogue")]
    save_item_ratings(engine, rater_id=rid, item_id="it1", scores={k: 2 for k in dims},
                      repeat=True)
    assert sorted(_rows(engine, "SELECT dimension, score FROM repeat_rating")) == sorted(
        (k, 2) for k in dims)
    assert _rows(engine, "SELECT id FROM rating") == []
    assert _rows(engine, "SELECT id FROM rating_revision") == []


def test_a_bad_save_stores_nothing(engine):
    rid, aid = _study(engine)
    dims = [d.key for d in current_rubric(engine).dimensions_for("dialogue")]
    with pytest.raises(H2HError, match="not in your queue"):
        save_item_ratings(engine, rater_id=rid + 1, item_id="it1",
                          scores={k: 2 for k in dims}, assignment_id=aid)
    with pytest.raises(H2HError, match="score every dimension"):
        save_item_ratings(engine, rater_id=rid, item_id="it1", scores={dims[0]: 2},
                          assignment_id=aid)
    with pytest.raises(H2HError, match="not dimensions of this item"):
        save_item_ratings(engine, rater_id=rid, item_id="it1",
                          scores={**{k: 2 for k in dims}, "nope": 1}, assignment_id=aid)
    assert _rows(engine, "SELECT id FROM rating") == []
    assert _rows(engine, f"SELECT completed_at FROM assignment WHERE id = {aid}") == [(None,)]
