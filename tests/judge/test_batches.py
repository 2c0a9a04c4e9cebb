"""Anthropic Message Batches: submit in chunks, collect by custom_id, failures as data, discount."""

from __future__ import annotations

import asyncio

import pytest

from data.errors import H2HError
from judge.batches import collect_batches, custom_id, open_batches, submit_batches
from judge.judging import plan_judging
from judge.providers import make_provider

from .conftest import N_PAIRS, judge_spec, query


def submit(engine, fake, prices, spec, max_requests=None):
    provider = make_provider("anthropic", base_url=fake.url)
    if max_requests:
        provider.max_batch_requests = max_requests
    plan = plan_judging(engine, spec)
    return asyncio.run(submit_batches(engine, plan, provider, prices)), plan


def collect(engine, fake, prices, **kw):
    return asyncio.run(collect_batches(engine, make_provider("anthropic", base_url=fake.url),
                                       prices, **kw))


def test_submit_and_collect_with_one_errored_request(study, anthropic_fake, prices):
    spec = judge_spec(study)
    ids, plan = submit(study, anthropic_fake, prices, spec, max_requests=5)
    assert len(ids) == 3  # 14 requests in chunks of at most 5
    sizes = [len(b["requests"]) for b in anthropic_fake.batches.values()]
    assert sizes == [5, 5, 4]
    assert anthropic_fake.calls("judge") == []  # nothing went to /v1/messages
    rows = query(study, "SELECT provider_batch_id, status, request_count, collected_at "
                        "FROM judge_batch ORDER BY id")
    assert [r[:3] for r in rows] == [(i, "in_progress", n) for i, n in zip(ids, sizes,
                                                                             strict=True)]
    # one request of the second batch errors on the provider's side, one of the third expires
    bad, late = plan.units[7], plan.units[12]
    anthropic_fake.batch_errors.add(custom_id(spec.hash, bad))
    anthropic_fake.batch_expired.add(custom_id(spec.hash, late))

    rep = collect(study, anthropic_fake, prices)
    assert rep.collected == ids and rep.pending == []
    assert (rep.scored, rep.unscored, rep.failed) == (N_PAIRS - 2, 0, 2)
    got = {(i, d): (s, o, r) for i, d, s, o, r in query(
        study, "SELECT item_id, dimension, score, outcome, unscored_reason FROM judgment")}
    assert len(got) == N_PAIRS
    score, outcome, reason = got[(bad.item_id, bad.store[0])]
    assert (score, outcome) == (None, "request_failed")
    assert reason == "request: errored: invalid_request_error: scripted batch error"
    assert got[(late.item_id, late.store[0])] == (None, "request_failed",
                                                  "request: expired before it ran")
    failed = {(bad.item_id, bad.store[0]), (late.item_id, late.store[0])}
    for (item, dim), (s, o, _) in got.items():
        if (item, dim) not in failed:
            assert (s, o) == (anthropic_fake.score(item, dim), "scored")
    assert query(study, "SELECT COUNT(*) FROM judge_batch WHERE collected_at IS NULL") == [(0,)]
    # the batch discount: 12 answered calls x (1000 in x $1 + 100 out x $10) / 1e6 x 0.5
    ledger = query(study, "SELECT status, batch, cost_usd FROM cost_ledger")
    ok = [c for s, b, c in ledger if s == "ok"]
    assert len(ok) == 12 and all(b for _, b, _ in ledger)
    assert sum(ok) == pytest.approx(12 * 0.002 * 0.5)
    assert sorted((s, c) for s, _, c in ledger if s != "ok") == [("errored", 0.0),
                                                                 ("expired", 0.0)]


def test_open_batches_are_not_submitted_twice_and_failures_are_resubmitted(
        study, anthropic_fake, prices):
    spec = judge_spec(study)
    ids, plan = submit(study, anthropic_fake, prices, spec)
    again = plan_judging(study, spec)
    assert again.units == [] and again.in_batches == N_PAIRS
    anthropic_fake.batch_errors.add(custom_id(spec.hash, plan.units[0]))
    collect(study, anthropic_fake, prices)
    retry = plan_judging(study, spec)
    assert [(u.item_id, u.store) for u in retry.units] == [(plan.units[0].item_id,
                                                             plan.units[0].store)]


def test_collect_waits_until_ended_and_is_idempotent(study, anthropic_fake, prices):
    anthropic_fake.batch_polls = 3  # "in_progress" on the first two status checks
    spec = judge_spec(study, mode="all")
    ids, _ = submit(study, anthropic_fake, prices, spec)
    early = collect(study, anthropic_fake, prices)
    assert early.collected == [] and [b for b, _ in early.pending] == ids
    rep = collect(study, anthropic_fake, prices, wait=True, poll=0.01)
    assert rep.collected == ids and rep.scored == N_PAIRS
    n_ledger = query(study, "SELECT COUNT(*) FROM cost_ledger")
    # collecting again finds nothing open; re-reading the same batch stores nothing twice
    assert collect(study, anthropic_fake, prices).collected == []
    from sqlmodel import Session, select

    from data.models import JudgeBatch
    with Session(study) as s:
        b = s.exec(select(JudgeBatch)).one()
        b.collected_at = None
        s.add(b)
        s.commit()
    assert collect(study, anthropic_fake, prices).scored == 0
    assert query(study, "SELECT COUNT(*) FROM cost_ledger") == n_ledger
    assert query(study, "SELECT COUNT(*) FROM judgment") == [(N_PAIRS,)]


def test_cancel_stores_canceled_requests_as_unscored(study, anthropic_fake, prices):
    anthropic_fake.batch_polls = 99
    spec = judge_spec(study)
    submit(study, anthropic_fake, prices, spec)
    rep = collect(study, anthropic_fake, prices, cancel=True)
    assert rep.failed == N_PAIRS and rep.scored == 0
    reasons = {r for (r,) in query(study, "SELECT unscored_reason FROM judgment")}
    assert reasons == {"request: canceled before it ran"}
    assert open_batches(study) == []


def test_batches_need_the_anthropic_provider(study, openai_fake, prices):
    spec = judge_spec(study, "openai")
    plan = plan_judging(study, spec)
    provider = make_provider("openai", base_url=openai_fake.url)
    with pytest.raises(H2HError, match="--batch: openai has no batch API"):
        asyncio.run(submit_batches(study, plan, provider, prices))
