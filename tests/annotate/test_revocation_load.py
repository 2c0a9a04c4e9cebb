"""Revocation under save load: eight loops of one rater save through the app's save service
as fast as they can while the rater is deactivated, signed out or given a new code
(tests/annotate/save_loops.py). The revocation must commit within a second, and no save that
began after it committed may be stored (on SQLite and PostgreSQL).

Before the fix every save took a shared lock on the rater's row; deactivation needs an
exclusive one, and on PostgreSQL overlapping shared locks starved it: 36.7 s with four loops
in the report, 9.9 s (deactivation) and 94 s (a new code) with eight here; on SQLite a
sign-out waited 1.8 s behind eight loops (SQLite's busy handler backs off ever longer).
benchmarks/bench_revocation.py measures the times.
"""

from __future__ import annotations

import pytest

from tests.annotate.save_loops import HOW, LOOPS, revoke_under_load

REVOKE_WITHIN = 1.0  # seconds, from the issue


@pytest.mark.parametrize("how", HOW)
def test_revocation_under_eight_save_loops(engine, how):
    r = revoke_under_load(engine, how)
    print(f"\n{engine.dialect.name} {how}: revoked in {r.took * 1000:.0f} ms under {LOOPS} "
          f"loops ({r.saves} saves stored)")
    assert [lp.error for lp in r.loops] == [None] * LOOPS
    assert r.busy == LOOPS  # every loop was saving when the revocation began
    assert r.took <= REVOKE_WITHIN
    # every loop was turned away, with the reason of this revocation
    assert [lp.ended for lp in r.loops] == ["signed_out" if how == "sign_out"
                                            else "deactivated"] * LOOPS
    assert r.late == []  # no save that began after the revocation committed was accepted
    # and nothing reached the database after it: every stored save is one a loop saw stored
    assert r.revisions_after == r.revisions_at_commit == r.saves * r.per_save
    assert r.live_sessions == 0
    assert r.old_code_signs_in is (how == "sign_out")
