"""The sign-in throttle does what docs/app.md says it guarantees (issue 36): attempts are
counted when they are made and every wait comes before the code is checked, so a client
that stops waiting learns nothing and parallel guesses queue like sequential ones; the
prefix bucket and the hash read a code the same way.

Before: wrong answers were held back *after* the check while a right one came at once, so a
tab that gave up after 2.5 s learned "wrong" without paying (190 guesses in 518 s, not
slowing), and 200 parallel guesses were all answered within about a second; and
``H2H-Xé…`` landed in another prefix bucket than ``H2H-X…`` while signing in the same.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

import annotate.services.auth as auth
from annotate.services.auth import sign_in
from annotate.services.throttle import Throttle, ThrottlePolicy, code_prefix
from data.codes import hash_code, normalise
from data.raters import add_rater

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


class Clock:
    """Moves only when the code under test sleeps; logs sleeps and code checks in order."""

    def __init__(self):
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
        self.events: list[tuple[str, object]] = []

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.events.append(("wait", round(seconds, 6)))
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def logged_checks(monkeypatch):
    """Every code check, in order with the waits of the clock given."""
    clocks: list[Clock] = []
    real = auth.authenticate

    def checking(engine, code):
        for c in clocks:
            c.events.append(("check", code))
        return real(engine, code)

    monkeypatch.setattr(auth, "authenticate", checking)
    return clocks


def _guess(i: int) -> str:
    """A wrong code with its own prefix (no prefix bucket is slowed by these)."""
    return f"H2H-{ALPHABET[i % 31]}{ALPHABET[i // 31 % 31]}ZZ-2222-3333-4444"


def _attempts(events) -> list[tuple[float, object]]:
    """(wait before the check, code checked) per attempt, from the event log."""
    out, waited = [], 0.0
    for kind, what in events:
        if kind == "wait":
            waited += what
        else:
            out.append((waited, what))
            waited = 0.0
    assert waited == 0.0, "a wait after the last check: an answer held back after checking"
    return out


def test_one_address_guessing_in_sequence_is_slowed_before_each_check(engine,
                                                                      logged_checks):
    """190 guesses from one tab, as in the report: after ten, every attempt waits its turn
    (1, 2, 4 … 30 s) before its code is even checked, and a correct code from that address
    waits the same (its answer would otherwise tell the guesser which one was right)."""
    _, code = add_rater(engine, "pat", "rater")
    clock = Clock()
    logged_checks.append(clock)
    t = Throttle(ThrottlePolicy(), clock=clock)
    start = clock.now
    for i in range(189):
        assert sign_in(engine, _guess(i), "203.0.113.9", t, clock.sleep) is None
    assert sign_in(engine, code, "203.0.113.9", t, clock.sleep) is not None
    attempts = _attempts(clock.events)
    waits = [w for w, _ in attempts]
    assert len(attempts) == 190 and attempts[-1][1] == code
    assert waits[:16] == [0.0] * 10 + [1.0, 2.0, 4.0, 8.0, 16.0, 30.0]
    assert set(waits[15:]) == {30.0}  # the correct code included
    took = (clock.now - start).total_seconds()
    assert took == 31 + 30 * 175 == 5281  # was 518 s of the browser's own pace


def test_parallel_guesses_from_one_address_are_counted_when_made(engine, logged_checks):
    """40 guesses at once, each on its own prefix: attempts in flight count, so they queue
    one turn apart like sequential ones (0 × 10, then 1, 3, 7, 15, 31, 61, 91 … s)."""
    frozen = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    t = Throttle(ThrottlePolicy(cap=30), clock=lambda: frozen)
    waits: list[float] = []
    barrier = threading.Barrier(40)

    def guess(i: int) -> None:
        barrier.wait()
        sign_in(engine, _guess(i), "203.0.113.9", t, waits.append)

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(40)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    expected = [1, 3, 7, 15, 31] + [31 + 30 * k for k in range(1, 26)]
    assert sorted(waits) == expected  # 30 waits; the first ten went through at once


def test_the_ceiling_holds_addresses_that_failed_but_never_a_clean_one(engine,
                                                                       logged_checks):
    """Past the study's ceiling, an address that failed waits before its next check (not in
    a queue: at most the cap); a rater from an address with no failure signs in at once."""
    _, code = add_rater(engine, "pat", "rater")
    clock = Clock()
    logged_checks.append(clock)
    t = Throttle(ThrottlePolicy(global_free=5, client_free=100), clock=clock)
    for i in range(8):  # eight addresses, one failure each: first attempts are not held
        sign_in(engine, _guess(i), f"198.51.100.{i}", t, clock.sleep)
    assert [w for w, _ in _attempts(clock.events)] == [0.0] * 8
    clock.events.clear()
    sign_in(engine, _guess(20), "198.51.100.0", t, clock.sleep)  # a second try
    sign_in(engine, _guess(21), "198.51.100.0", t, clock.sleep)
    assert [w for w, _ in _attempts(clock.events)] == [8.0, 16.0]  # 2^(8-5), 2^(9-5)
    clock.events.clear()
    assert sign_in(engine, code, "192.0.2.7", t, clock.sleep) is not None
    assert [w for w, _ in _attempts(clock.events)] == [0.0]


def test_a_non_ascii_letter_does_not_escape_a_slowed_prefix(engine, logged_checks):
    """Six failures on a rater's prefix, then the rater's code with an é inside: the same
    bucket (it waits its turn) and the same code (it signs in)."""
    _, code = add_rater(engine, "pat", "rater")
    prefix = code_prefix(code)
    clock = Clock()
    logged_checks.append(clock)
    t = Throttle(ThrottlePolicy(), clock=clock)
    for i in range(6):  # from six addresses: only the prefix bucket is slowed
        sign_in(engine, f"H2H-{prefix}-{ALPHABET[i]}222-3333-4444", f"198.51.100.{i}", t,
                clock.sleep)
    clock.events.clear()
    twisted = code[:5] + "é" + code[5:]  # H2H-Xé…
    assert code_prefix(twisted) == prefix
    assert sign_in(engine, twisted, "192.0.2.7", t, clock.sleep) is not None
    assert [w for w, _ in _attempts(clock.events)] == [8.0]  # the 7th attempt's turn


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_the_hash_and_the_prefix_read_a_code_the_same_way(text):
    n = normalise(text)
    assert n == normalise(n) and all(c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ" for c in n)
    assert hash_code(text) == hash_code(n) and code_prefix(text) == code_prefix(n)


@pytest.mark.parametrize("typed,same", [
    ("h2h-7kqm-xr2d-9pwe-bn4t", True),
    ("ＨＡＳＨ", False),                       # full width: folded, not dropped
    ("H2H-7Ké QM-XR2D-9PWE-BN4T", True),       # a stray accent: dropped in both
    ("H2H-7KQM-XR2D-9PWE-BN4ß", False),        # ß is not "SS"
])
def test_codes_as_people_type_them(typed, same):
    code = "H2H-7KQM-XR2D-9PWE-BN4T"
    assert (hash_code(typed) == hash_code(code)) is same
    assert normalise("ＨＡＳＨ") == "HASH" and normalise("ß") == ""
