"""What a run tells the researcher: failures by reason with what to try, unscored answers by
reason, the concurrency it chose, and a non-zero exit when nothing worked (issue 10)."""

from __future__ import annotations

import pytest

from judge.calls import RunOptions

from .conftest import N_PAIRS, judge, query
from .fakes import FakeServer, Scripted
from .test_cli import h2h, run_args


@pytest.fixture
def db(study) -> str:
    return str(study.url.database)


def test_a_run_in_which_every_call_failed_exits_non_zero_and_says_what_to_try(
        monkeypatch, capsys, db, openai_fake):
    openai_fake.script(*[Scripted(500, message="model crashed: GGML_ASSERT failed")] * 40)
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--max-retries", "1",
                                                        "--concurrency", "2"))
    assert code == 1
    assert f"every one of the {N_PAIRS} calls failed" in err
    assert f"most common: {N_PAIRS} × {openai_fake.url} answered 500: model crashed: " \
           "GGML_ASSERT failed" in err
    assert "the server's log" in err
    # the failures are stored (asked again next run), the summary is printed before the error
    assert query(openai_fake_db(db), "SELECT count(*) FROM judgment "
                                     "WHERE outcome = 'request_failed'") == [(N_PAIRS,)]
    assert "0 ok" in out


def openai_fake_db(db: str):
    from data.engine import get_engine
    return get_engine(db)


def test_timeouts_suggest_a_longer_timeout_and_fewer_calls_in_flight(monkeypatch, capsys, db):
    fake = FakeServer("openai", api_key=None, delay=1.0)
    try:
        code, _, err = h2h(monkeypatch, capsys, *run_args(
            db, fake, "--max-retries", "0", "--timeout", "0.2", "--items", "d1"))
    finally:
        fake.close()
    assert code == 1
    assert "3 × timeout: no reply within 0.2 s" in err
    assert "--timeout" in err and "--concurrency 1" in err


def test_unscored_answers_are_summarised_by_reason_with_an_example(monkeypatch, capsys, db,
                                                                   openai_fake):
    openai_fake.script(Scripted(text="I would say it is warm."),
                       Scripted(text="I would say it is warm, really."),
                       Scripted(text='{"score": 9}'), when=lambda r: r.item == "d1")
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--concurrency", "1",
                                                      "--items", "d1"))
    assert code == 0
    assert "Not scored: 2 malformed (e.g. no score found in the reply), 1 off-scale " \
           "(e.g. 9 is not on the scale (an integer from 1 to 5))" in out


def test_a_run_where_nothing_parsed_exits_zero_but_warns(monkeypatch, capsys, db, openai_fake):
    openai_fake.script(*[Scripted(text="no idea")] * 3, when=lambda r: r.item == "d1")
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--items", "d1"))
    assert code == 0  # answers are data: stored, counted, not a failed run
    assert "No answer could be scored" in out and "--no-structured" not in out


def test_a_server_on_this_machine_gets_two_calls_in_flight_by_default(monkeypatch, capsys, db):
    fake = FakeServer("openai", api_key=None, delay=0.05)
    try:
        code, out, err = h2h(monkeypatch, capsys, *run_args(db, fake))
        assert code == 0, err
        assert fake.max_in_flight == 2
        assert "Concurrency 2 (a server on this machine" in out
        code, out, _ = h2h(monkeypatch, capsys, *run_args(db, fake, "--name", "other",
                                                          "--temperature", "0.5",
                                                          "--concurrency", "5"))
        assert code == 0 and "Concurrency 5 (--concurrency)" in out
        assert fake.max_in_flight == 5
    finally:
        fake.close()


def test_a_server_that_answers_one_at_a_time_makes_the_run_lower_its_concurrency(study,
                                                                                prices):
    """Six calls in flight against a one-slot server: the queued ones time out; the run
    halves its calls in flight instead of timing out again and again, and still finishes."""
    fake = FakeServer("openai", api_key=None, delay=0.3, serial=True)
    try:
        _, stats = judge(study, fake, prices, timeout=1.0,
                         options=RunOptions(concurrency=6, max_retries=8, backoff=0.05,
                                            max_backoff=0.5))
    finally:
        fake.close()
    assert stats.scored == N_PAIRS and stats.request_failed == 0
    assert stats.concurrency < 6
    assert any("timed out" in n and "concurrency" in n for n in stats.notes)


def test_dry_run_output_tokens_from_max_tokens_then_from_measured_runs(monkeypatch, capsys, db,
                                                                       openai_fake, tmp_path):
    """Without history the honest bound is max_tokens per call; after a run, the measured mean
    output of this configuration (a chatty model answers far more than a score)."""
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."fake-*"]\ninput = 1.0\noutput = 10.0\n', encoding="utf-8")
    args = run_args(db, openai_fake, "--prices", str(prices), "--max-tokens", "300",
                    "--name", "chatty")
    code, out, _ = h2h(monkeypatch, capsys, *args, "--dry-run")
    assert code == 0
    # 14 calls x 300 = 4,200; no earlier run to measure from
    assert "at most 4,200 output tokens (--max-tokens 300 × 14 calls; no earlier run of " \
           "this configuration to measure from)" in out
    # the fake answers 100 output tokens per call; run 3 of the 14 calls for real
    code, _, _ = h2h(monkeypatch, capsys, *args, "--items", "d1")
    assert code == 0
    code, out, _ = h2h(monkeypatch, capsys, *args, "--dry-run")
    # 11 calls left x 100 measured = 1,100; the bound 11 x 300 = 3,300
    assert "about 1,100 output tokens (mean 100 per call measured over 3 earlier calls of " \
           "this configuration; at most 3,300 at --max-tokens 300)" in out
    # cost: input estimate x $1/M + 1,100 x $10/M, and the bound with 3,300
    assert "estimated cost $0.0" in out and "(at most $0.0" in out


def test_identical_settings_under_a_new_name_are_refused_with_the_match(monkeypatch, capsys,
                                                                        db, openai_fake):
    code, _, _ = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--name", "llama-v1"))
    assert code == 0
    calls = len(openai_fake.calls("judge"))
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--name", "llama-v2"))
    assert code == 1
    h = query(openai_fake_db(db), "SELECT hash FROM judge_config")[0][0]
    assert f"the same settings as the stored configuration 'llama-v1' ({h[:8]}: openai " \
           f"fake-judge" in err
    assert f"{N_PAIRS} judgments" in err and "--config llama-v1" in err
    assert len(openai_fake.calls("judge")) == calls  # nothing asked
    assert query(openai_fake_db(db), "SELECT name FROM judge_config") == [("llama-v1",)]
    # leaving --name out continues the stored configuration under its name
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, openai_fake))
    assert code == 0 and "Judge 'llama-v1'" in out and "Nothing to ask" in out


def test_a_name_given_later_renames_an_unnamed_configuration(monkeypatch, capsys, db,
                                                             openai_fake):
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--items", "d1"))
    assert code == 0
    (auto,) = query(openai_fake_db(db), "SELECT name FROM judge_config")[0]
    assert auto.startswith("fake-judge-")
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--name", "local-v1"))
    assert code == 0
    assert f"'{auto}' has the same settings and no name of its own: it is now 'local-v1'" in out
    assert query(openai_fake_db(db), "SELECT name FROM judge_config") == [("local-v1",)]
    assert len(openai_fake.calls("judge")) == N_PAIRS  # the 3 stored ones were not asked again
    code, out, _ = h2h(monkeypatch, capsys, "judge", "configs", "--db", db)
    assert "local-v1" in out and auto not in out
