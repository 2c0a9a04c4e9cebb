"""Structured output adapts to what an OpenAI-compatible server supports (issue 10).

Loopback fakes refuse forms the way real servers do (llama-cpp-python: HTTP 500 naming
response_format; others 400 naming response_format or tools); every request is counted. A
refusal is a capability answer: the provider falls back at once, once for the whole run, and
never retries it.
"""

from __future__ import annotations

from collections import Counter

import pytest

from judge.calls import RunOptions
from judge.judging import Filters

from .conftest import FAST, N_PAIRS, judge, judge_spec, query
from .fakes import LLAMA_CPP_REFUSAL, RF_REFUSAL, TOOLS_REFUSAL, FakeServer, Scripted, openai_form

SERVERS = {
    # name: (what it refuses, the form it ends on)
    "llama-cpp-like": ({"json_schema": LLAMA_CPP_REFUSAL}, "json_object"),
    "tools only": ({"json_schema": RF_REFUSAL, "json_object": RF_REFUSAL}, "tools"),
    "plain text only": ({"json_schema": RF_REFUSAL, "json_object": RF_REFUSAL,
                         "tools": TOOLS_REFUSAL}, "text"),
}
LADDER = ("json_schema", "json_object", "tools", "text")


@pytest.fixture
def server(request, monkeypatch):
    refuse, _ = SERVERS[request.param]
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    fake = FakeServer("openai", api_key=None, refuse=refuse)
    yield fake
    fake.close()


def forms_sent(fake: FakeServer) -> Counter:
    return Counter(openai_form(c.body) for c in fake.calls("judge"))


@pytest.mark.parametrize("server", list(SERVERS), indirect=True)
def test_each_server_negotiates_to_its_strongest_form_once(study, server, prices, request):
    refuse, final = SERVERS[request.node.callspec.params["server"]]
    _, stats = judge(study, server, prices, options=RunOptions(concurrency=4, max_retries=3,
                                                               backoff=0.01))
    assert stats.scored == N_PAIRS and stats.request_failed == 0
    # One request per refused form, however many calls were in flight; then every call in
    # the form the server supports. Nothing refused was retried.
    sent = forms_sent(server)
    assert sent == Counter({**{f: 1 for f in refuse}, final: N_PAIRS})
    refused = [c for c in server.calls("judge") if c.status != 200]
    assert len(refused) == len(refuse)
    assert query(study, "SELECT output_form FROM judge_config") == [(final,)]
    # the ledger shows the refused attempts (no tokens) beside the answered calls
    statuses = Counter(s for (s,) in query(study, "SELECT status FROM cost_ledger"))
    assert statuses["ok"] == N_PAIRS
    assert sum(n for s, n in statuses.items() if s.startswith("refused")) == len(refuse)
    assert stats.refused == len(refuse)
    # every score stored is the server's answer, in whichever form it came
    rows = query(study, "SELECT item_id, dimension, score FROM judgment")
    assert all(score == server.score(i, d) for i, d, score in rows)


@pytest.mark.parametrize("server", ["llama-cpp-like"], indirect=True)
def test_the_negotiated_form_is_remembered_by_the_next_run(study, server, prices):
    judge(study, server, prices, filters=Filters(items=("d1",)))
    before = len(server.calls("judge"))
    _, stats = judge(study, server, prices)  # the same configuration, the other items
    later = server.calls("judge")[before:]
    assert {openai_form(c.body) for c in later} == {"json_object"}
    assert len(later) == N_PAIRS - 3 and stats.refused == 0


@pytest.mark.parametrize("server", ["llama-cpp-like"], indirect=True)
def test_json_object_carries_the_schema_like_llama_cpp_python_wants(study, server, prices):
    judge(study, server, prices, filters=Filters(items=("d1",)), reason_first=True)
    body = [c for c in server.calls("judge") if c.status == 200][0].body
    rf = body["response_format"]
    assert rf["type"] == "json_object"
    assert list(rf["schema"]["properties"]) == ["reasoning", "score"]
    assert rf["schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert query(study, "SELECT DISTINCT reasoning FROM judgment WHERE dimension = 'safety'") \
        == [("about safety",)]


@pytest.mark.parametrize("server", ["tools only"], indirect=True)
def test_tool_calls_are_forced_and_read(study, server, prices):
    _, stats = judge(study, server, prices, filters=Filters(items=("r1",)), mode="all")
    assert stats.scored == 4
    body = [c for c in server.calls("judge") if c.status == 200][0].body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "score_all"}}
    assert set(body["tools"][0]["function"]["parameters"]["properties"]) == \
        {"empathy", "safety", "fluency", "memory_fidelity"}


def test_no_structured_sends_plain_text_from_the_start(study, openai_fake, prices):
    _, stats = judge(study, openai_fake, prices, structured=False)
    assert stats.scored == N_PAIRS and forms_sent(openai_fake) == Counter(text=N_PAIRS)
    assert query(study, "SELECT output_form FROM judge_config") == [("text",)]


def test_a_server_error_that_names_no_capability_is_still_retried(study, openai_fake, prices):
    openai_fake.script(Scripted(500, message="CUDA out of memory"),
                       Scripted(503, message="loading model"))
    _, stats = judge(study, openai_fake, prices, options=FAST)
    assert stats.scored == N_PAIRS and stats.failed_attempts == 2 and stats.refused == 0
    assert forms_sent(openai_fake) == Counter(json_schema=N_PAIRS + 2)


def test_a_refusal_mid_run_after_settling_still_falls_back(study, prices, monkeypatch):
    """A server swapped behind the same URL: a settled form that is refused later falls back
    once more instead of failing every remaining call."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    fake = FakeServer("openai", api_key=None)
    try:
        judge(study, fake, prices, filters=Filters(items=("d1",)))
        fake.refuse = {"json_schema": LLAMA_CPP_REFUSAL}
        _, stats = judge(study, fake, prices, options=RunOptions(concurrency=1))
        assert stats.scored == N_PAIRS - 3 and stats.refused == 1
        assert query(study, "SELECT output_form FROM judge_config") == [("json_object",)]
    finally:
        fake.close()


def test_the_prompt_is_the_same_whatever_the_form(study, prices, monkeypatch):
    """Reproducibility: the server's capabilities change the transport, not the prompt."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    texts = []
    for refuse in ({}, SERVERS["plain text only"][0]):
        fake = FakeServer("openai", api_key=None, refuse=refuse)
        try:
            spec = judge_spec(study, "openai", name=f"n{len(texts)}", temperature=0.0
                              if texts else None)
            judge(study, fake, prices, spec=spec, filters=Filters(items=("d1",),
                                                                  dimensions=("safety",)))
            ok = [c for c in fake.calls("judge") if c.status == 200][0]
            texts.append([m["content"] for m in ok.body["messages"]])
        finally:
            fake.close()
    assert texts[0] == texts[1]


@pytest.mark.parametrize("server", ["llama-cpp-like"], indirect=True)
def test_judge_configs_shows_the_negotiated_form(study, server, prices, monkeypatch, capsys):
    from .test_cli import h2h, run_args
    db = str(study.url.database)
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, server, "--name", "llama-cpp",
                                                      "--items", "d1"))
    assert code == 0 and "Structured output: json_object" in out
    assert "Note: json_schema refused (http 500: Input should be 'text' or 'json_object'); " \
           "now json_object" in out
    code, out, _ = h2h(monkeypatch, capsys, "judge", "configs", "--db", db)
    row = next(line for line in out.splitlines() if "llama-cpp" in line)
    assert "json_object" in row
