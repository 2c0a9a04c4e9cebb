"""Many raters saving at once: every rating lands exactly once, nobody sees an error."""

from __future__ import annotations

import threading

import sqlalchemy as sa

from data.engine import write_session
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Rater
from data.rating_service import save_rating
from tests.helpers import item

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
