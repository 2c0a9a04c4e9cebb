"""Save loops of one rater against a revocation: the scenario of
tests/annotate/test_revocation_load.py, also run by benchmarks/bench_revocation.py.

Eight loops of one rater save through the app's save service (``queue.save_item``) as fast
as they can, each through its own items (a first save inserts, as rating new items does;
then it goes round again, updating), while the rater is deactivated, signed out or given a
new code. What is measured: the time from the revocation's call to its commit, every save
each loop had stored (when it began and returned), how each loop was turned away, and the
revisions in the study the moment the revocation returned.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import sqlalchemy as sa

from annotate.services import queue
from annotate.services.auth import Identity, SessionEnded, sign_in, sign_out
from data.codes import hash_code, new_code
from data.engine import write_session
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Assignment, Rater
from data.raters import add_rater, deactivate_rater
from data.sessions import revoke_rater_sessions
from data.study import current_rubric
from tests.helpers import item

LOOPS = 8
ITEMS = 25  # per loop
WARM_UP = 3  # saves each loop has stored before the revocation starts
HOW = ("deactivate", "sign_out", "reissue")


def reissue(engine, name: str) -> None:
    """A new code for ``name``: the old one stops signing in and every session ends, in one
    transaction, through the same revocation as deactivation (what `h2h raters reissue`
    does)."""
    with write_session(engine, urgent=True) as s:
        rater_id = s.execute(sa.select(Rater.id).where(Rater.name == name)).scalar_one()
        revoke_rater_sessions(s, rater_id, "deactivated", code_hash=hash_code(new_code()))


@dataclass
class Loop:
    """One save loop: its saves as (began, returned) monotonic times, and how it ended."""

    who: Identity
    views: list[queue.ItemView]
    stored: list[tuple[float, float]] = field(default_factory=list)
    ended: str | None = None
    error: BaseException | None = None

    def run(self, engine, stop: threading.Event, warm: threading.Event) -> None:
        k = 0
        while not stop.is_set():
            if k == WARM_UP:
                # Warmed up: wait for the others. SQLite's busy handler backs off ever longer,
                # so a loop that lost the write lock a few times could wait seconds behind
                # seven that kept it (thousands of saves before all eight had stored three).
                warm.wait(60)
            view = self.views[k % len(self.views)]
            score = 1 + k % 5  # every save changes the scores: one revision each
            began = time.monotonic()
            try:
                queue.save_item(engine, self.who, view,
                                {d.key: score for d in view.dimensions}, f"c{k}", False, 0.1)
            except SessionEnded as exc:
                self.ended = exc.reason
                return
            except BaseException as exc:  # collected and asserted by the caller
                self.error = exc
                return
            self.stored.append((began, time.monotonic()))
            k += 1


@dataclass
class Revocation:
    """What one revocation under load did."""

    how: str
    took: float            # seconds from the call to its return (committed)
    committed: float       # monotonic time it returned
    loops: list[Loop]
    busy: int              # loops that had stored a save when it began
    revisions_at_commit: int
    revisions_after: int
    per_save: int          # revisions one save makes
    live_sessions: int
    old_code_signs_in: bool

    @property
    def saves(self) -> int:
        return sum(len(lp.stored) for lp in self.loops)

    @property
    def late(self) -> list[float]:
        """Seconds after the commit at which a stored save began (must be none)."""
        return [b - self.committed for lp in self.loops for b, _ in lp.stored
                if b > self.committed]


def _revisions(engine) -> int:
    with engine.connect() as c:
        return c.execute(sa.text("SELECT COUNT(*) FROM rating_revision")).scalar_one()


def revoke_under_load(engine, how: str, loops: int = LOOPS) -> Revocation:
    """On an empty study: a rater with ``loops`` × :data:`ITEMS` items saving in ``loops``
    threads, then ``how`` ("deactivate", "sign_out", "reissue"). Sign-out ends one session,
    so every loop saves through it (tabs of one browser); the rater-wide revocations meet a
    session per loop (several browsers or devices)."""
    import_item_records(engine, [ItemRecord.model_validate(item(f"it{i}"))
                                 for i in range(loops * ITEMS)], file="t")
    pat, code = add_rater(engine, "pat", "rater")
    with write_session(engine) as s:
        for i in range(loops * ITEMS):
            s.add(Assignment(rater_id=pat.id, item_id=f"it{i}", position=i))
    rubric = current_rubric(engine)
    shared = sign_in(engine, code)
    running = [Loop(shared if how == "sign_out" else sign_in(engine, code),
                    [queue.item_at(engine, pat.id, i * ITEMS + j, rubric)
                     for j in range(ITEMS)]) for i in range(loops)]
    stop, warm = threading.Event(), threading.Event()
    threads = [threading.Thread(target=lp.run, args=(engine, stop, warm)) for lp in running]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 60
        while min(len(lp.stored) for lp in running) < WARM_UP and time.monotonic() < deadline:
            time.sleep(0.005)
        warm.set()  # all at full speed again: the revocation meets eight loops saving
        flowing = sum(len(lp.stored) for lp in running) + loops
        while sum(len(lp.stored) for lp in running) < flowing and time.monotonic() < deadline:
            time.sleep(0.002)
        busy = sum(1 for lp in running if lp.stored)
        began = time.monotonic()
        if how == "deactivate":
            deactivate_rater(engine, "pat")
        elif how == "sign_out":
            sign_out(engine, shared)
        else:
            reissue(engine, "pat")
        committed = time.monotonic()
        at_commit = _revisions(engine)
    finally:
        warm.set()  # no loop is left waiting, whatever went wrong above
        for t in threads:
            t.join(timeout=60)
        stop.set()
        for t in threads:
            t.join()
    with engine.connect() as c:
        live = c.execute(sa.text("SELECT COUNT(*) FROM auth_session WHERE revoked_at IS NULL"
                                 )).scalar_one()
    return Revocation(how, committed - began, committed, running, busy, at_commit,
                      _revisions(engine), len(rubric.dimensions_for("dialogue")), live,
                      sign_in(engine, code) is not None)
