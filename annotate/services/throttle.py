"""Slowing down code guessing, in the study database so every app server counts together.

Three kinds of bucket, each counting failed sign-ins over a sliding window:

* **the attempted code's prefix** (its first four random symbols, ``prefix:7KQM``): after
  ``prefix_free`` failures, each further attempt *in that bucket* waits its turn before it is
  checked, 1, 2, 4 … s apart (capped). Parallel attempts reserve successive turns, so they are
  slowed exactly like sequential ones. A correct code only ever waits here for failures on
  codes that begin like its own, which random guessing hits once in 31⁴ ≈ 920,000 tries.
* **the client address** (``client:203.0.113.9``; see :func:`client_address` for proxies) and
  **the whole study** (``global``, the ceiling): after ``client_free`` / ``global_free``
  failures, each further *wrong* answer is held back 1, 2, 4 … s (capped) before it is given.
  Correct codes are answered at once: people behind one proxy, or on one machine, never wait
  for each other's typos.

A success clears its prefix bucket. Counts are forgotten ``window`` seconds after the last
activity in a bucket.
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
        """The bucket's row, created if new, locked until the transaction ends, and
        forgotten (zeroed) when nothing happened in it for a whole window."""
        ins = pg_insert if s.get_bind().dialect.name == "postgresql" else sqlite_insert
        s.execute(ins(SigninThrottle).values(bucket=bucket, failures=0, pending=0)
                  .on_conflict_do_nothing(index_elements=["bucket"]))
        row = s.exec(select(SigninThrottle).where(SigninThrottle.bucket == bucket)
                     .with_for_update()).one()
        seen = [t for t in (row.last_failure_at, row.next_slot_at) if t is not None]
        if not seen or now - max(seen) > timedelta(seconds=self.policy.window):
            row.failures, row.pending, row.next_slot_at, row.last_failure_at = 0, 0, None, None
        return row

    def before_check(self, engine: Engine, prefix: str) -> float:
        """Reserve a turn in the prefix bucket; returns the seconds to wait before checking."""
        p = self.policy
        now = self.clock()
        with write_session(engine) as s:
            row = self._row(s, f"prefix:{prefix}", now)
            n = row.failures + row.pending  # attempts already failed or being checked
            row.pending += 1
            start = max(now, row.next_slot_at or now) if n >= p.prefix_free else now
            # the turn after this one, should this attempt fail too
            row.next_slot_at = start + timedelta(seconds=p.delay(n + 1, p.prefix_free))
            s.add(row)
            return (start - now).total_seconds()

    def after_check(self, engine: Engine, prefix: str, client: str | None, ok: bool) -> float:
        """Record the outcome; returns the seconds to hold back a wrong answer (0 if right)."""
        p = self.policy
        now = self.clock()
        hold = 0.0
        with write_session(engine) as s:
            row = self._row(s, f"prefix:{prefix}", now)
            row.pending = max(0, row.pending - 1)
            if ok:
                row.failures, row.next_slot_at = 0, None
            else:
                row.failures += 1
                row.last_failure_at = now
            s.add(row)
            if not ok:
                for bucket, free in ((f"client:{client or 'unknown'}", p.client_free),
                                     ("global", p.global_free)):
                    b = self._row(s, bucket, now)
                    hold = max(hold, p.delay(b.failures, free))
                    b.failures += 1
                    b.last_failure_at = now
                    s.add(b)
            s.exec(delete(SigninThrottle).where(  # forget buckets quiet for a whole window
                SigninThrottle.pending == 0,
                func.coalesce(SigninThrottle.last_failure_at, SigninThrottle.next_slot_at)
                < now - timedelta(seconds=p.window)))
        return hold
