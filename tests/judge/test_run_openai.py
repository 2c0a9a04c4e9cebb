"""Judging through an OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp), real SDK."""

from __future__ import annotations

import pytest

from data.errors import H2HError
from judge.judging import Filters
from judge.providers import make_provider
from judge.run import run_judge

from .conftest import FAST, N_PAIRS, judge, judge_spec, query
from .fakes import FakeServer, Scripted


def test_json_schema_output_is_requested_and_scores_stored(study, openai_fake, prices):
    _, stats = judge(study, openai_fake, prices, reason_first=True)
    assert stats.scored == N_PAIRS
    body = openai_fake.calls("judge")[0].body
    assert body["messages"][0]["role"] == "system"
    rf = body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    schema = rf["json_schema"]["schema"]
    assert list(schema["properties"]) == ["reasoning", "score"]
    assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    rows = query(study, "SELECT item_id, dimension, score, reasoning FROM judgment")
    assert all(score == openai_fake.score(i, d) and why == f"about {d}"
               for i, d, score, why in rows)
    # a local server needs no key: the SDK got a placeholder, no OPENAI_API_KEY was set
    assert openai_fake.calls("judge")[0].headers.get("authorization") in (None,
                                                                          "Bearer not-needed")


def test_servers_without_schema_support_get_free_text(study, openai_fake, prices):
    _, stats = judge(study, openai_fake, prices, structured=False,
                     filters=Filters(items=("d1",)))
    assert stats.scored == 3
    assert all("response_format" not in c.body for c in openai_fake.calls("judge"))
    assert "Answer with one JSON object and nothing else" in \
        openai_fake.calls("judge")[0].body["messages"][1]["content"]


def test_json_in_a_code_fence_and_off_scale_answers(study, openai_fake, prices):
    openai_fake.script(Scripted(text='Sure!\n```json\n{"score": 2}\n```'),
                       Scripted(text='{"score": 11}'), when=lambda r: r.item == "d1")
    judge(study, openai_fake, prices, filters=Filters(items=("d1",)),
          options=FAST.__class__(concurrency=1))
    got = query(study, "SELECT score, unscored_reason FROM judgment ORDER BY id")
    assert got[0] == (2.0, None)
    assert got[1][0] is None and got[1][1].startswith("off-scale: 11")


def test_rate_limit_is_retried(study, openai_fake, prices):
    openai_fake.script(Scripted(429, headers={"retry-after-ms": "50"}))
    _, stats = judge(study, openai_fake, prices)
    assert stats.failed_attempts == 1 and stats.scored == N_PAIRS


def test_key_required_against_openai_itself(study, prices, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(H2HError, match="openai: no API key; set OPENAI_API_KEY, or pass "
                                       "--base-url"):
        run_judge(study, judge_spec(study, "openai"), make_provider("openai"), prices=prices)


def test_auth_error_from_a_server_that_checks_keys(study, prices, monkeypatch):
    fake = FakeServer("openai", api_key="server-key")
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "wrong")
        with pytest.raises(H2HError, match="rejected the API key"):
            judge(study, fake, prices)
        assert fake.calls("judge") == []
        monkeypatch.setenv("OPENAI_API_KEY", "server-key")
        assert judge(study, fake, prices)[1].scored == N_PAIRS
    finally:
        fake.close()
