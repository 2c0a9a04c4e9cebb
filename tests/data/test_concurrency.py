"""Many raters saving at once: every rating lands exactly once, nobody sees an error."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from data.engine import write_session
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Rater
from data.rating_service import save_item_ratings, save_rating
from data.study import current_rubric
from tests.helpers import item

pytestmark = pytest.mark.integration  # left out of `make test-fast`

N_THREADS, N_RATINGS = 20, 50


def _setup(engine, n_items: int, n_raters: int) -> list[int]:
    recs = [ItemRecord.model_validate(item(f"it{i:03d}")) for i in range(n_items)]
    import_item_records(engine, recs, file="t")
    ids = []
    with write_session(engine) as s:
        for r in range(n_raters):
            rater = Rater(name=f"rater{r}", role="rater")
            s.add(rater)
            s.flush()
            ids.append(rater.id)
    return ids


def test_20_threads_x_50_ratings(engine):
    rater_ids = _setup(engine, N_RATINGS, N_THREADS)
    errors: list[BaseException] = []
    start = threading.Barrier(N_THREADS)

    def work(rid: int) -> None:
        start.wait()
        try:
            for i in range(N_RATINGS):
                save_rating(engine, rater_id=rid, item_id=f"it{i:03d}", dimension="empathy",
                            score=1 + (rid + i) % 5, seconds_spent=1.0)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(rid,)) for rid in rater_ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with engine.connect() as c:
        n = c.execute(sa.text("SELECT COUNT(*) FROM rating")).scalar_one()
        distinct = c.execute(sa.text("SELECT COUNT(*) FROM (SELECT DISTINCT rater_id, item_id, "
                                     "dimension FROM rating) d")).scalar_one()
        revs = c.execute(sa.text("SELECT COUNT(*) FROM rating_revision")).scalar_one()
    assert n == distinct == N_THREADS * N_RATINGS == 1000
    assert revs == 1000


def test_double_click_and_two_tabs_never_duplicate(engine):
    (rid,) = _setup(engine, 1, 1)
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def click(score: int) -> None:
        barrier.wait()
        try:
            save_rating(engine, rater_id=rid, item_id="it000", dimension="safety", score=score)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=click, args=(1 + i % 2 * 3,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with engine.connect() as c:
        rows = c.execute(sa.text("SELECT score FROM rating")).all()
        last_rev = c.execute(sa.text("SELECT score FROM rating_revision ORDER BY id DESC"
                                     )).first()
    assert len(rows) == 1
    assert rows[0][0] == last_rev[0]  # the row holds the last saved state


TRIALS = 100


@pytest.mark.parametrize("how", ["item", "dimension"])
def test_two_sessions_of_one_rater_never_store_a_rating_nobody_saved(engine, how):
    """Two tabs of one rater save the same item at the same moment, 100 times. The stored
    row must always equal its last revision: one of the two saves, whole. Without a row
    lock, PostgreSQL stored a mix (4 from one save with the comment of the other) in about a
    third of the trials, because each update wrote only the columns that differed from what
    its own transaction had read."""
    (rid,) = _setup(engine, 1, 1)
    dims = [d.key for d in current_rubric(engine).dimensions_for("dialogue")]

    if how == "dimension":  # save_rating, one dimension at a time
        dims = dims[:1]

    def save(score: int, comment: str) -> None:
        if how == "item":  # "Save and next": every dimension in one transaction
            save_item_ratings(engine, rater_id=rid, item_id="it000",
                              scores=dict.fromkeys(dims, score), comment=comment)
        else:
            save_rating(engine, rater_id=rid, item_id="it000", dimension=dims[0],
                        score=score, comment=comment)

    mixed: list[tuple] = []
    errors: list[BaseException] = []
    for trial in range(TRIALS):
        save(3, f"old {trial}")
        barrier = threading.Barrier(2)

        def tab(score: int, comment: str, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                save(score, comment)
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=tab, args=(4, f"A {trial}")),
                   threading.Thread(target=tab, args=(3, f"B {trial}"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with engine.connect() as c:
            for dim in dims:
                row = c.execute(sa.text(
                    "SELECT id, score, comment FROM rating WHERE rater_id = :r AND "
                    "dimension = :d"), {"r": rid, "d": dim}).one()
                last = c.execute(sa.text(
                    "SELECT score, comment FROM rating_revision WHERE rating_id = :i "
                    "ORDER BY id DESC LIMIT 1"), {"i": row.id}).one()
                if (row.score, row.comment) != (last.score, last.comment) \
                        or (row.score, row.comment[:1]) not in ((4, "A"), (3, "B")):
                    mixed.append((trial, dim, tuple(row)[1:], tuple(last)))
    assert errors == []
    assert mixed == [], f"{len(mixed)} rows hold a state nobody saved, e.g. {mixed[:3]}"


def test_every_rater_at_once_gets_a_connection(engine):
    """40 raters' script runs each hold a connection at the same moment (a page reading while
    another saves): none waits for the pool. With SQLAlchemy's default pool (5 + 10 overflow)
    the 16th waited until the pool timeout and then failed its save, which is how a loaded
    machine lost saves in test_20_threads_x_50_ratings: threads looping on saves took the
    connections back before a waiting one woke."""
    n = 40
    held = threading.Barrier(n, timeout=20)
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            with engine.connect() as c:
                c.execute(sa.text("SELECT COUNT(*) FROM rating")).scalar_one()
                held.wait()  # every thread is inside a connection now
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=hold) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
