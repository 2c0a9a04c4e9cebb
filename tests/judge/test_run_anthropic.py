"""`h2h judge run` against a loopback Anthropic Messages API, through the real SDK."""

from __future__ import annotations

import socket

import pytest

from data.errors import H2HError
from judge.judging import Filters
from judge.providers import make_provider
from judge.run import run_judge

from .conftest import FAST, N_PAIRS, judge, judge_spec, query
from .fakes import FakeServer, Scripted


def judgments(engine):
    return query(engine, "SELECT item_id, dimension, sample, score, outcome, unscored_reason, "
                         "raw_reply, reasoning FROM judgment ORDER BY item_id, dimension")


def test_scores_are_stored_per_item_dimension_and_sample(study, anthropic_fake, prices):
    plan, stats = judge(study, anthropic_fake, prices, reason_first=True)
    assert (stats.calls, stats.scored, stats.unscored) == (N_PAIRS, N_PAIRS, 0)
    rows = judgments(study)
    assert len(rows) == N_PAIRS
    for item, dim, sample, score, outcome, reason, raw, reasoning in rows:
        assert score == anthropic_fake.score(item, dim)  # what the server answered
        assert (sample, outcome, reason, reasoning) == (0, "scored", None, f"about {dim}")
        assert f'"score": {int(score)}' in raw
    assert {(i, d) for i, d, *_ in rows} == set(anthropic_fake.answered_keys())
    # the request really was a forced tool call bounded to the scale, with a cached system
    body = anthropic_fake.calls("judge")[0].body
    assert body["tool_choice"] == {"type": "tool", "name": body["tools"][0]["name"]}
    assert body["tools"][0]["input_schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert anthropic_fake.calls("judge")[0].headers["Authorization"] == "Bearer test-key"


def test_all_dimensions_in_one_call(study, anthropic_fake, prices):
    _, stats = judge(study, anthropic_fake, prices, mode="all", temperature=0.0,
                     max_tokens=300)
    assert stats.calls == 4 and stats.scored == N_PAIRS
    asked = sorted(len(r.dims) for r in anthropic_fake.calls("judge"))
    assert asked == [3, 3, 4, 4]
    body = anthropic_fake.calls("judge")[0].body
    assert (body["temperature"], body["max_tokens"]) == (0.0, 300)
    assert body["tools"][0]["name"] == "score_all"
    assert len(judgments(study)) == N_PAIRS


def test_finished_configuration_makes_no_request_at_all(study, anthropic_fake, prices):
    judge(study, anthropic_fake, prices)
    before = len(anthropic_fake.log)
    plan, stats = judge(study, anthropic_fake, prices)
    assert plan.units == [] and plan.done_keys == N_PAIRS and stats.calls == 0
    assert len(anthropic_fake.log) == before  # not even the preflight


def test_429_waits_for_retry_after(study, anthropic_fake, prices):
    anthropic_fake.script(Scripted(429, error_type="rate_limit_error",
                                   headers={"retry-after": "0.4"}))
    _, stats = judge(study, anthropic_fake, prices, filters=Filters(items=("d1",)),
                     options=FAST.__class__(concurrency=1, backoff=0.01))
    calls = anthropic_fake.calls("judge")
    assert [c.status for c in calls[:2]] == [429, 200]
    assert calls[1].at - calls[0].at >= 0.38  # the server's retry-after, not the 0.01 s backoff
    assert (calls[0].item, calls[0].dims) == (calls[1].item, calls[1].dims)
    assert stats.failed_attempts == 1 and stats.scored == 3
    ledger = query(study, "SELECT status, input_tokens FROM cost_ledger ORDER BY id")
    assert ledger[0] == ("http 429", 0) and [s for s, _ in ledger[1:]] == ["ok"] * 3


def test_server_errors_and_overload_are_retried(study, anthropic_fake, prices):
    anthropic_fake.script(Scripted(500), Scripted(529, error_type="overloaded_error"))
    _, stats = judge(study, anthropic_fake, prices)
    assert stats.failed_attempts == 2 and stats.scored == N_PAIRS
    assert [c.status for c in anthropic_fake.calls("judge")].count(200) == N_PAIRS
    statuses = sorted(s for (s,) in query(study, "SELECT status FROM cost_ledger "
                                                 "WHERE status != 'ok'"))
    assert statuses == ["http 500", "http 529"]


def test_a_timeout_is_retried(study, anthropic_fake, prices):
    # The first request is never answered, so it times out however long the timeout; the
    # retry is answered at once and has 3 s, which a loaded machine does not run out of.
    anthropic_fake.script(Scripted(hang=True))
    _, stats = judge(study, anthropic_fake, prices, timeout=3.0,
                     filters=Filters(items=("d1",), dimensions=("empathy",)))
    assert stats.failed_attempts == 1 and stats.scored == 1
    assert query(study, "SELECT status FROM cost_ledger ORDER BY id") == [("timeout",), ("ok",)]


def test_retries_exhausted_are_request_failures_asked_again_next_run(study, anthropic_fake,
                                                                     prices):
    anthropic_fake.script(*[Scripted(503)] * 4, when=lambda r: r.item == "d2" and
                          r.dims == ("safety",))
    _, stats = judge(study, anthropic_fake, prices)  # FAST: 3 retries = 4 attempts
    assert stats.request_failed == 1 and stats.scored == N_PAIRS - 1
    row = query(study, "SELECT score, outcome, unscored_reason FROM judgment "
                       "WHERE item_id='d2' AND dimension='safety'")[0]
    assert row[:2] == (None, "request_failed") and "503" in row[2]
    n = len(anthropic_fake.calls("judge"))
    plan, stats = judge(study, anthropic_fake, prices)
    assert [(u.item_id, u.store) for u in plan.units] == [("d2", ("safety",))]
    assert len(anthropic_fake.calls("judge")) == n + 1 and stats.scored == 1
    assert query(study, "SELECT outcome FROM judgment WHERE item_id='d2' AND "
                        "dimension='safety'") == [("scored",)]


@pytest.mark.parametrize("answer,category", [
    ({"score": "excellent"}, "malformed"),
    ({"rating": 3}, "malformed"),
    ({"score": 7}, "off-scale"),
])
def test_bad_tool_input_is_stored_unscored_with_raw_reply(study, anthropic_fake, prices,
                                                         answer, category):
    anthropic_fake.script(Scripted(answer=answer),
                          when=lambda r: r.item == "d1" and r.dims == ("empathy",))
    _, stats = judge(study, anthropic_fake, prices)
    assert stats.unscored == 1 and stats.reasons == {category: 1}
    assert stats.scored == N_PAIRS - 1
    score, outcome, reason, raw = query(
        study, "SELECT score, outcome, unscored_reason, raw_reply FROM judgment "
               "WHERE item_id='d1' AND dimension='empathy'")[0]
    assert (score, outcome) == (None, "invalid_reply")
    assert reason.startswith(category + ":")
    assert str(list(answer.values())[0]) in raw
    # paid for: a re-run does not ask again
    plan, _ = judge(study, anthropic_fake, prices)
    assert plan.units == []


def test_text_instead_of_a_tool_call_goes_through_the_tolerant_parser(study, anthropic_fake,
                                                                      prices):
    anthropic_fake.script(Scripted(text="Clearly adequate.\n\nScore: 3"),
                          Scripted(text="I cannot rate this."),
                          when=lambda r: r.item == "d1")
    judge(study, anthropic_fake, prices, filters=Filters(items=("d1",)),
          options=FAST.__class__(concurrency=1))
    got = query(study, "SELECT dimension, score, unscored_reason FROM judgment ORDER BY id")
    assert got[0][1:] == (3.0, None)
    assert got[1][1] is None and got[1][2].startswith("malformed: no score found")


def test_authentication_error_mid_run_stops_with_one_message(study, anthropic_fake, prices):
    anthropic_fake.script(Scripted(401, error_type="authentication_error",
                                   message="invalid x-api-key"),
                          when=lambda r: r.item == "r1")
    with pytest.raises(H2HError) as exc:
        judge(study, anthropic_fake, prices, options=FAST.__class__(concurrency=1))
    msg = str(exc.value)
    assert "stopped: anthropic answered 401: invalid x-api-key" in msg
    assert "results stored before the stop are kept" in msg
    statuses = [c.status for c in anthropic_fake.calls("judge")]
    assert statuses.count(401) == 1 and statuses[-1] == 401  # no retry, nothing after it
    assert len(judgments(study)) == 6  # d1 and d2 finished before r1


def test_invalid_request_is_not_retried(study, anthropic_fake, prices):
    anthropic_fake.script(Scripted(400, error_type="invalid_request_error",
                                   message="max_tokens: 100000 > 64000, the maximum"))
    with pytest.raises(H2HError, match="400: max_tokens: 100000 > 64000"):
        judge(study, anthropic_fake, prices, options=FAST.__class__(concurrency=1))
    assert [c.status for c in anthropic_fake.calls("judge")] == [400]


def test_a_prompt_too_long_fails_only_its_own_call(study, anthropic_fake, prices):
    """One oversized item must not stop a study-sized run: not retried, stored as a request
    failure with the server's reason, and every other call goes on."""
    anthropic_fake.script(Scripted(400, error_type="invalid_request_error",
                                   message="prompt is too long: 210000 tokens > 200000 maximum"),
                          when=lambda r: r.item == "r1" and r.dims == ("safety",))
    _, stats = judge(study, anthropic_fake, prices, options=FAST.__class__(concurrency=1))
    assert stats.scored == N_PAIRS - 1 and stats.request_failed == 1
    assert stats.failed_attempts == 1  # asked once, not retried
    assert [c.status for c in anthropic_fake.calls("judge")].count(400) == 1
    (reason,) = query(study, "SELECT unscored_reason FROM judgment WHERE outcome = "
                             "'request_failed'")[0]
    assert "prompt is too long" in reason


def test_wrong_key_is_caught_by_the_preflight(study, anthropic_fake, prices, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-wrong")
    with pytest.raises(H2HError, match="anthropic rejected the API key in ANTHROPIC_API_KEY"):
        judge(study, anthropic_fake, prices)
    assert anthropic_fake.calls("judge") == [] and len(anthropic_fake.log) == 1
    assert query(study, "SELECT COUNT(*) FROM judge_config") == [(0,)]


def test_missing_key_is_one_message_before_any_request(study, anthropic_fake, prices,
                                                       monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(H2HError, match=r"no API key; set ANTHROPIC_API_KEY \(export"):
        judge(study, anthropic_fake, prices)
    assert anthropic_fake.log == []


def test_unreachable_server_is_one_message(study, prices, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    provider = make_provider("anthropic", base_url=f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(H2HError, match=f"cannot reach http://127.0.0.1:{port}"):
        run_judge(study, judge_spec(study), provider, options=FAST, prices=prices)


def test_base_url_from_the_environment(study, anthropic_fake, prices, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_fake.url)
    provider = make_provider("anthropic")
    _, stats = run_judge(study, judge_spec(study), provider, options=FAST, prices=prices,
                         filters=Filters(items=("d1",)))
    assert stats.scored == 3 and len(anthropic_fake.calls("judge")) == 3


def test_more_samples_ask_only_for_the_new_ones(study, anthropic_fake, prices):
    judge(study, anthropic_fake, prices, filters=Filters(items=("d1",)))
    plan, stats = judge(study, anthropic_fake, prices, samples=3, filters=Filters(items=("d1",)))
    assert stats.scored == 6 and {u.sample for u in plan.units} == {1, 2}
    per_key = query(study, "SELECT dimension, COUNT(*) FROM judgment GROUP BY dimension")
    assert sorted(per_key) == [("empathy", 3), ("fluency", 3), ("safety", 3)]
    asked = [r.dims[0] for r in anthropic_fake.calls("judge")]
    assert sorted(asked) == sorted(["empathy", "fluency", "safety"] * 3)  # 3 samples, once each
    assert query(study, "SELECT samples FROM judge_config") == [(3,)]


def test_a_changed_item_is_judged_again(study, anthropic_fake, prices):
    from data.importing import import_item_records
    from data.items import parse_items
    from tests.helpers import item, jsonl
    judge(study, anthropic_fake, prices)
    new = parse_items(jsonl(item("d1", response="reply to d1\n\nedited")), "u.jsonl",
                      ("dialogue",))
    import_item_records(study, new, file="u.jsonl", update=True)
    plan, stats = judge(study, anthropic_fake, prices)
    assert {u.item_id for u in plan.units} == {"d1"} and stats.scored == 3
    assert plan.redo == {"item changed since": 3}


def test_filters_task_items_limit_dimensions(study, anthropic_fake, prices):
    f = Filters(task="dialogue", limit=1, dimensions=("safety",))
    plan, _ = judge(study, anthropic_fake, prices, filters=f)
    # --limit is a seeded sample (seed 0 takes d2 of d1, d2), not the first item
    assert [(u.item_id, u.ask) for u in plan.units] == [("d2", ("safety",))]
    assert plan.limited == ("--limit 1: 1 of 2 items, sampled across task families and "
                            "models (seed 0): dialogue 1")
    with pytest.raises(H2HError, match="--items: no item with id nope"):
        judge(study, anthropic_fake, prices, filters=Filters(items=("nope",)))
    with pytest.raises(H2HError, match="--task: 'chat' is not a task"):
        judge(study, anthropic_fake, prices, filters=Filters(task="chat"))
    with pytest.raises(H2HError, match="--dimensions: 'warmth'"):
        judge(study, anthropic_fake, prices, filters=Filters(dimensions=("warmth",)))


def test_a_name_is_taken_by_one_configuration(study, anthropic_fake, prices):
    judge(study, anthropic_fake, prices, name="sonnet-v1", filters=Filters(items=("d1",)))
    with pytest.raises(H2HError, match="'sonnet-v1' already names judge configuration"):
        judge(study, anthropic_fake, prices, name="sonnet-v1", reason_first=True)


def test_concurrency_limit_is_respected(study, prices, monkeypatch):
    fake = FakeServer("anthropic", delay=0.15)
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key)
    try:
        judge(study, fake, prices, options=FAST.__class__(concurrency=3))
        calls = fake.calls("judge")
        starts = sorted(c.at for c in calls)
        # at most 3 requests began within any 0.15 s window (each took 0.15 s)
        assert max(sum(1 for t in starts if s <= t < s + 0.14) for s in starts) <= 3
        assert len(calls) == N_PAIRS
    finally:
        fake.close()
