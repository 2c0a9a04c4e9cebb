"""Sessions in the study database and the shared sign-in throttle, through the services the
pages call (no Streamlit), on SQLite and PostgreSQL. Two engines on one database stand for two
app servers of one study."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from annotate.services import queue
from annotate.services.auth import SessionEnded, resume_identity, sign_in, sign_out
from annotate.services.proxies import client_address, parse_trusted
from annotate.services.throttle import Throttle, ThrottlePolicy
from data.engine import _engine_for, write_session
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Assignment
from data.raters import add_rater, deactivate_rater
from data.sessions import token_hash
from data.study import current_rubric
from tests.helpers import item


class FakeClock:
    """A clock that moves only when the code under test sleeps."""

    def __init__(self):
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
        self.slept: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def study(engine):
    recs = [ItemRecord.model_validate(item(f"it{i}")) for i in range(3)]
    import_item_records(engine, recs, file="t")
    pat, pat_code = add_rater(engine, "pat", "rater")
    _, ada_code = add_rater(engine, "ada", "admin")
    with write_session(engine) as s:
        for i in range(3):
            s.add(Assignment(rater_id=pat.id, item_id=f"it{i}", position=i))
    return {"engine": engine, "pat_code": pat_code, "ada_code": ada_code}


@pytest.fixture
def second_server(engine):
    """Another connection pool on the same database: what a second `h2h serve` holds."""
    url = engine.url.render_as_string(hide_password=False)
    other = sa.create_engine(url) if engine.dialect.name == "postgresql" else None
    if other is None:  # SQLite: the same file through this package's engine setup
        _engine_for.cache_clear()
        from data.engine import get_engine
        other = get_engine(url)
    yield other
    other.dispose()


def _save(engine, who, n: int = 0, score: int = 3):
    view = queue.item_at(engine, who.rater_id, n, current_rubric(engine))
    queue.save_item(engine, who, view, {d.key: score for d in view.dimensions}, "", False, 1.0)


def _ratings(engine) -> int:
    with engine.connect() as c:
        return c.execute(sa.text("SELECT COUNT(*) FROM rating")).scalar_one()


def test_a_session_continues_on_another_server_and_only_its_hash_is_stored(study,
                                                                          second_server):
    who = sign_in(study["engine"], study["pat_code"])
    assert who.name == "pat" and who.session and study["pat_code"] not in who.session
    assert resume_identity(second_server, who.session) == who  # a reload on server B
    _save(second_server, who)
    with study["engine"].connect() as c:
        stored = c.execute(sa.text("SELECT token_hash FROM auth_session")).scalar_one()
    assert stored == token_hash(who.session) and who.session not in stored


def test_sign_out_is_refused_everywhere_at_once(study, second_server):
    who = sign_in(study["engine"], study["pat_code"])
    other_tab = sign_in(study["engine"], study["pat_code"])  # another browser: its own session
    sign_out(second_server, who)  # signed out through server B
    for eng in (study["engine"], second_server):
        with pytest.raises(SessionEnded) as ei:
            resume_identity(eng, who.session)
        assert ei.value.reason == "signed_out"
    with pytest.raises(SessionEnded, match="signed out"):
        _save(study["engine"], who)
    assert _ratings(study["engine"]) == 0
    _save(study["engine"], other_tab)  # the other browser's session is its own
    assert _ratings(study["engine"]) == 3


def test_deactivation_ends_every_session_before_the_next_save(study, second_server):
    who = sign_in(study["engine"], study["pat_code"])
    _save(study["engine"], who, 0)
    assert deactivate_rater(second_server, "pat") == 1
    before = _ratings(study["engine"])
    for eng in (study["engine"], second_server):
        with pytest.raises(SessionEnded) as ei:
            _save(eng, who, 1)
        assert ei.value.reason == "deactivated" and "study team" in str(ei.value)
        with pytest.raises(SessionEnded):
            resume_identity(eng, who.session)
    assert _ratings(study["engine"]) == before  # nothing stored after the deactivation
    assert sign_in(study["engine"], study["pat_code"]) is None


def test_deactivation_racing_a_saving_rater_lets_no_later_save_through(study):
    """A rater saving as fast as they can while an admin deactivates them: every save that
    begins after the deactivation returned is refused, none is stored."""
    eng = study["engine"]
    who = sign_in(eng, study["pat_code"])
    done = threading.Event()
    late: list[float] = []
    refused: list[str] = []

    def keep_saving() -> None:
        k = 0
        while True:
            began_after = done.is_set()
            try:
                _save(eng, who, k % 3, 1 + k % 5)
            except SessionEnded as exc:
                refused.append(exc.reason)
                return
            if began_after:
                late.append(k)
            k += 1

    t = threading.Thread(target=keep_saving)
    t.start()
    deactivate_rater(eng, "pat")
    done.set()
    t.join(timeout=120)
    assert not t.is_alive() and refused == ["deactivated"] and late == []


@pytest.mark.parametrize("column,reason", [("last_seen_at", "idle"), ("expires_at", "expired")])
def test_idle_and_old_sessions_end(study, column, reason):
    eng = study["engine"]
    who = sign_in(eng, study["pat_code"])
    past = datetime.now(UTC) - timedelta(hours=13)
    with eng.begin() as c:
        c.execute(sa.text(f"UPDATE auth_session SET {column} = :t"), {"t": past})
    with pytest.raises(SessionEnded) as ei:
        _save(eng, who)
    assert ei.value.reason == reason and "Sign in again" in str(ei.value)
    with pytest.raises(SessionEnded):
        resume_identity(eng, who.session)
    with eng.connect() as c:  # closed for good, not just refused this time
        assert c.execute(sa.text("SELECT revoked_reason FROM auth_session")).scalar_one() \
            == reason
    assert _ratings(eng) == 0


def test_a_session_saves_only_as_its_own_rater(study):
    eng = study["engine"]
    ada = sign_in(eng, study["ada_code"])
    pat = sign_in(eng, study["pat_code"])
    forged = type(pat)(pat.rater_id, "pat", "rater", ada.session)  # pat's id, ada's token
    with pytest.raises(SessionEnded):
        _save(eng, forged)
    for junk in (None, "", "garbage", pat.session[:-1] + "x"):
        with pytest.raises(SessionEnded):
            _save(eng, type(pat)(pat.rater_id, "pat", "rater", junk))
    assert _ratings(eng) == 0


# --- the throttle ------------------------------------------------------------------------


def test_failures_on_one_prefix_slow_that_prefix_only(study):
    """The case from the report: failures from one address (everyone on localhost, or
    behind one proxy) made a correct code wait 31.6 s. Now a prefix's failures slow only
    attempts on that prefix: 1, 2, 4 s after three free ones."""
    clock = FakeClock()
    t = Throttle(ThrottlePolicy(), clock=clock)
    eng = study["engine"]
    for _ in range(6):
        assert sign_in(eng, "H2H-AAAA-2222-3333-4444", "127.0.0.1", t, clock.sleep) is None
    assert clock.slept == [1.0, 2.0, 4.0]
    clock.slept.clear()
    who = sign_in(eng, study["pat_code"], "127.0.0.1", t, clock.sleep)
    assert who is not None and clock.slept == []  # no wait for someone else's failures


def test_a_correct_code_from_another_address_never_waits_for_a_flood(study):
    """A flood of failures from one address, each on another prefix: that address is slowed
    (before each check, up to the cap; tests/annotate/test_signin_throttle.py), raters
    signing in from elsewhere are not, even past the study's ceiling."""
    clock = FakeClock()
    t = Throttle(ThrottlePolicy(global_free=20, client_free=5), clock=clock)
    eng = study["engine"]
    alphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
    for i in range(60):  # every guess on another prefix, all from the same address
        prefix = alphabet[i % 31] + alphabet[i // 31] + "ZZ"
        sign_in(eng, f"H2H-{prefix}-2222-3333-4444", "203.0.113.9", t, clock.sleep)
    assert clock.slept and max(clock.slept) == 30.0  # slowed, up to the cap
    clock.slept.clear()
    for code in (study["pat_code"], study["ada_code"]):
        assert sign_in(eng, code, "192.0.2.44", t, clock.sleep) is not None
    assert clock.slept == []


def test_parallel_guesses_on_one_prefix_wait_their_turn(study):
    """Eight guesses at the same moment: each reserves the next turn in the database, so
    they are slowed exactly as if made one after another (0, 0, 0, 1, 3, 7, 15, 31 s)."""
    frozen = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    t = Throttle(ThrottlePolicy(cap=60), clock=lambda: frozen)
    eng = study["engine"]
    waits: list[float] = []
    barrier = threading.Barrier(8)

    def guess(i: int) -> None:
        barrier.wait()
        sign_in(eng, f"H2H-BBBB-{i}222-3333-4444", "127.0.0.1", t, waits.append)

    threads = [threading.Thread(target=guess, args=(i + 2,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    before = sorted(w for w in waits if w)  # waits before checking, then holds (none here)
    assert before == [1.0, 3.0, 7.0, 15.0, 31.0]


def test_throttle_counts_are_shared_by_every_server(study, second_server):
    clock = FakeClock()
    a = Throttle(ThrottlePolicy(), clock=clock)
    b = Throttle(ThrottlePolicy(), clock=clock)
    for eng, t in ((study["engine"], a), (second_server, b), (study["engine"], a)):
        assert sign_in(eng, "H2H-CCCC-2222-3333-4444", "127.0.0.1", t, clock.sleep) is None
    assert clock.slept == []
    sign_in(second_server, "H2H-CCCC-5555-3333-4444", "127.0.0.1", b, clock.sleep)
    assert clock.slept == [1.0]  # the 4th failure on this prefix, whichever server


TRUSTED = parse_trusted("127.0.0.1, 10.0.0.0/8, ::1")


@pytest.mark.parametrize("peer,xff,expected", [
    (None, [], "127.0.0.1"),                                   # local, no proxy
    ("203.0.113.5", ["198.51.100.7"], "203.0.113.5"),          # header from a stranger: ignored
    (None, ["198.51.100.7"], "198.51.100.7"),                  # local trusted proxy
    (None, ["6.6.6.6, 198.51.100.7"], "198.51.100.7"),         # client-forged entry to the left
    ("10.1.2.3", ["198.51.100.7, 10.9.9.9"], "198.51.100.7"),  # two trusted proxies
    ("10.1.2.3", ["198.51.100.7", "10.9.9.9"], "198.51.100.7"),  # repeated header lines
    (None, ["[2001:db8::1]:443"], "2001:db8::1"),
    (None, ["198.51.100.7:51234"], "198.51.100.7"),
    (None, ["not-an-ip"], "not-an-ip"),
    (None, ["10.0.0.1"], "10.0.0.1"),                          # only proxies: the last one
])
def test_client_address_trusts_forwarded_for_only_from_trusted_proxies(peer, xff, expected):
    assert client_address(peer, xff, TRUSTED) == expected
    assert client_address(peer, xff, ()) == (peer or "127.0.0.1")  # no proxy configured


def test_trusted_proxy_spec_errors_name_the_entry():
    with pytest.raises(ValueError, match="'proxy.local' is not an IP address"):
        parse_trusted("127.0.0.1,proxy.local")


def test_training_attention_and_norming_saves_check_the_session_too(engine):
    """Every save a rater makes from the browser, not only "Save and next": a deactivated
    rater's training answer, attention-check answer and norming score are refused, and
    nothing is stored."""
    from annotate.services import training
    from data import norming as nm
    from data import quality as q

    recs = [ItemRecord.model_validate(item(i)) for i in ("r0", "r1", "g1")]
    import_item_records(engine, recs, file="t")
    for d in ("empathy", "safety", "fluency"):
        q.set_gold(engine, "g1", d, 3, "why", source="import")
    q.save_settings(engine, training_count=1)
    pat, code = add_rater(engine, "pat", "rater")
    add_rater(engine, "kim", "rater")
    (check,) = q.add_instructed_checks(engine, 1, score=2, seed=0)
    sid = nm.create_session(engine, "n1", ["r0"], ["pat", "kim"])
    who = sign_in(engine, code)
    scores = {"empathy": 3, "safety": 3, "fluency": 3}
    rub = current_rubric(engine)
    deactivate_rater(engine, "pat")
    with pytest.raises(SessionEnded, match="ended by the study team"):
        training.submit_training(engine, who, "g1", scores, 1.0, rub)
    with pytest.raises(SessionEnded):
        q.save_attention(engine, pat.id, check, scores, 1.0, session_token=who.session)
    with pytest.raises(SessionEnded):
        nm.save_norming(engine, sid, pat.id, "r0", scores, session_token=who.session)
    with engine.connect() as c:
        for table in ("training_rating", "attention_result", "norming_rating"):
            assert c.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar_one() == 0


@pytest.mark.parametrize("minutes,words", [("120", "after 120 minutes without"),
                                           ("1", "after 1 minute without"),
                                           ("0.2", "after 12 seconds without")])
def test_the_idle_message_names_the_setting_in_words(monkeypatch, minutes, words):
    # A short test setting (H2H_SESSION_IDLE_MINUTES=0.2) used to read "after 0 minutes".
    from data.sessions import SessionEnded

    monkeypatch.setenv("H2H_SESSION_IDLE_MINUTES", minutes)
    assert words in str(SessionEnded("idle"))
