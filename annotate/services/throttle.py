"""Slowing down code guessing, in the study database so every app server counts together.

Every attempt is counted **when it is made** (as ``pending`` until its answer), and every
wait comes **before the code is checked**: a client that stops waiting learns nothing, and
parallel attempts are counted like sequential ones. Three kinds of bucket, each counting
failures over a sliding window:

* **the attempted code's prefix** (its first four symbols, ``prefix:7KQM``): after
  ``prefix_free`` failures or attempts in flight, each further attempt *on that prefix* waits
  its turn, 1, 2, 4 … s after the previous one (capped). A correct code waits here only for
  failures on codes that begin like its own, which random guessing hits once in
  31⁴ ≈ 920,000 tries. A success clears the bucket.
* **the client address** (``client:203.0.113.9``; see :func:`client_address` for proxies):
  after ``client_free`` failures or attempts in flight, each further attempt *from that
  address*, right or wrong, waits its turn the same way. Once throttled, an address gets
  at most one check per ``cap`` seconds, however many it sends at once. People behind one
  proxy or NAT share this bucket (``--trusted-proxy`` gives each their own address).
* **the whole study** (``global``, the ceiling): after ``global_free`` failures, each attempt
  from an address that failed in the window, or has another attempt in flight, waits
  before it is checked, 1, 2, 4 … s by the count of failures and attempts in flight,
  capped. Not a queue: a flood from many addresses holds such an attempt at most ``cap``
  seconds, and an address with no recent failure is not held by the ceiling at all (a
  rater signing in during an attack is not locked out).

Counts are forgotten ``window`` seconds after the last activity in a bucket; only a prefix
bucket is cleared by a success (an address or the study is not: a rater who knows their own
code cannot reset the count of their guesses at someone else's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from data.codes import normalise
from data.engine import write_session
from data.models import SigninThrottle, utcnow

__all__ = ["ThrottlePolicy", "Throttle", "code_prefix"]


@dataclass(frozen=True)
class ThrottlePolicy:
    """Free failures per bucket before slowing, the longest wait, and the memory window."""

    prefix_free: int = 3
    client_free: int = 10
    global_free: int = 100
    cap: float = 30.0
    window: float = 900.0

    def delay(self, failures: int, free: int) -> float:
        """Seconds for the next attempt after ``failures`` failures: 0 while under ``free``,
        then 2^(failures - free), capped."""
        return 0.0 if failures < free else min(self.cap, 2.0 ** min(failures - free, 30))


def code_prefix(code: str) -> str:
    """The bucket of an attempted code: its first four symbols after the ``H2H`` mark."""
    n = normalise(code)
    return (n[3:] if n.startswith("H2H") else n)[:4]


class Throttle:
    """Database-backed sign-in throttle (see the module docstring). ``clock`` is for tests."""

    def __init__(self, policy: ThrottlePolicy | None = None,
                 clock: Callable[[], datetime] = utcnow):
        self.policy = policy or ThrottlePolicy()
        self.clock = clock

    def _row(self, s: Session, bucket: str, now: datetime) -> SigninThrottle:
        """The bucket's row, created if new, locked until the transaction ends. Its
        failures are forgotten a whole window after the last one (attempts that succeed
        do not keep them alive); its turns and attempts in flight when nothing was
        attempted for a whole window (an attempt cut off by a crash is not counted for
        ever)."""
        ins = pg_insert if s.get_bind().dialect.name == "postgresql" else sqlite_insert
        s.execute(ins(SigninThrottle).values(bucket=bucket, failures=0, pending=0)
                  .on_conflict_do_nothing(index_elements=["bucket"]))
        row = s.exec(select(SigninThrottle).where(SigninThrottle.bucket == bucket)
                     .with_for_update()).one()
        window = timedelta(seconds=self.policy.window)
        if row.last_failure_at is None or now - row.last_failure_at > window:
            row.failures, row.last_failure_at = 0, None
        if row.next_slot_at is None or now - row.next_slot_at > window:
            row.pending, row.next_slot_at = 0, None
        return row

    def before_check(self, engine: Engine, prefix: str, client: str | None = None) -> float:
        """Count this attempt in its buckets and reserve its turn; returns the seconds to
        wait before checking the code (the caller waits, then checks, then calls
        :meth:`after_check`)."""
        p = self.policy
        now = self.clock()
        with write_session(engine) as s:  # rows locked in one order: prefix, client, global
            pre = self._row(s, f"prefix:{prefix}", now)
            cli = self._row(s, f"client:{client or 'unknown'}", now)
            glo = self._row(s, "global", now)
            turns = [(pre, p.prefix_free), (cli, p.client_free)]
            start = now
            for row, free in turns:  # attempts already failed or being checked
                if row.failures + row.pending >= free and row.next_slot_at is not None:
                    start = max(start, row.next_slot_at)
            if cli.failures + cli.pending > 0:  # the ceiling holds addresses that failed
                start = max(start, now + timedelta(
                    seconds=p.delay(glo.failures + glo.pending, p.global_free)))
            for row, free in turns:
                n = row.failures + row.pending
                # the turn after this one, should this attempt fail too
                after = start + timedelta(seconds=p.delay(n + 1, free))
                row.next_slot_at = max(row.next_slot_at or after, after)
            glo.next_slot_at = max(glo.next_slot_at or now, now)  # when it was last used
            for row in (pre, cli, glo):
                row.pending += 1
                s.add(row)
            return (start - now).total_seconds()

    def after_check(self, engine: Engine, prefix: str, client: str | None, ok: bool) -> None:
        """Record the outcome of an attempt counted by :meth:`before_check`."""
        p = self.policy
        now = self.clock()
        with write_session(engine) as s:
            rows = [self._row(s, f"prefix:{prefix}", now),
                    self._row(s, f"client:{client or 'unknown'}", now),
                    self._row(s, "global", now)]
            for row in rows:
                row.pending = max(0, row.pending - 1)
                if not ok:
                    row.failures += 1
                    row.last_failure_at = now
                s.add(row)
            if ok:  # a success clears its prefix's failures only (attempts in flight count)
                rows[0].failures, rows[0].next_slot_at = 0, now
            quiet = now - timedelta(seconds=p.window)
            s.exec(delete(SigninThrottle).where(  # forget buckets quiet for a whole window
                SigninThrottle.pending == 0,
                func.coalesce(SigninThrottle.last_failure_at, quiet) <= quiet,
                func.coalesce(SigninThrottle.next_slot_at, quiet) <= quiet))
