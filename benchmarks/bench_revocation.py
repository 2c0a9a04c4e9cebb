"""Revocation under save load: how long a deactivation, a sign-out and a new code take to
commit while eight loops of the rater save as fast as they can, on PostgreSQL and SQLite.

The scenario is tests/annotate/save_loops.py (the test asserts the same bounds once per
case): eight threads save through the app's save service, each through its own items, and
the revocation is timed from its call to its commit. Each case is run ``REPEAT`` times on a
fresh study (a throwaway PostgreSQL cluster, a SQLite file).

Reference, in the same run and on the same kind of study: the same revocation with no save
running (the bare cost of the transaction). The ratio says what the load adds.

Target: every revocation under load commits within 1 s, and no save that began after it is
stored. (The report: 36.7 s behind four loops on PostgreSQL, when every save share-locked
the rater's row.)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from data.engine import _engine_for, get_engine  # noqa: E402
from data.raters import add_rater, deactivate_rater  # noqa: E402
from data.study import init_study  # noqa: E402
from tests.annotate.save_loops import HOW, LOOPS, revoke_under_load  # noqa: E402
from tests.pg import start_cluster  # noqa: E402

REPEAT = 3
LIMIT = 1.0


def _fresh(kind: str, cluster, tmp: Path):
    if kind == "sqlite":
        url = f"sqlite:///{tmp / (uuid.uuid4().hex + '.db')}"
    else:
        name = "b_" + uuid.uuid4().hex[:12]
        admin = sa.create_engine(cluster.url(), isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.exec_driver_sql(f'CREATE DATABASE "{name}"')
        admin.dispose()
        url = cluster.url(name)
    engine = get_engine(url)
    init_study(engine, name="bench")
    return engine


def _done(engine) -> None:
    engine.dispose()
    _engine_for.cache_clear()


def idle(kind: str, cluster, tmp: Path) -> float:
    """The reference: a deactivation with nobody saving."""
    engine = _fresh(kind, cluster, tmp)
    try:
        add_rater(engine, "pat", "rater")
        t0 = time.monotonic()
        deactivate_rater(engine, "pat")
        return time.monotonic() - t0
    finally:
        _done(engine)


def loaded(kind: str, how: str, cluster, tmp: Path):
    engine = _fresh(kind, cluster, tmp)
    try:
        return revoke_under_load(engine, how)
    finally:
        _done(engine)


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-"))
    cluster = start_cluster()
    ok = True
    try:
        for kind in ("postgresql", "sqlite"):
            ref = statistics.median(idle(kind, cluster, tmp) for _ in range(REPEAT))
            print(f"{kind}: deactivation with nobody saving (reference) "
                  f"{ref * 1000:.1f} ms (median of {REPEAT})")
            for how in HOW:
                runs = [loaded(kind, how, cluster, tmp) for _ in range(REPEAT)]
                took = [r.took for r in runs]
                late = sum(len(r.late) for r in runs)
                rate = statistics.median(r.saves / max(r.committed - min(
                    b for lp in r.loops for b, _ in lp.stored), 1e-9) for r in runs)
                med = statistics.median(took)
                print(f"  {how:<10} under {LOOPS} save loops: median {med * 1000:.0f} ms, "
                      f"max {max(took) * 1000:.0f} ms ({med / ref:.1f}x the idle reference; about "
                      f"{rate:.0f} saves/s before it; {late} saves stored after it)",
                      flush=True)
                ok = ok and max(took) <= LIMIT and late == 0
    finally:
        cluster.stop()
    print(f"target: every revocation under load within {LIMIT:g} s, no save after it")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
