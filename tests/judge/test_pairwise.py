"""The pairwise judge against loopback Anthropic and OpenAI-compatible servers, through the
real SDKs: both orders asked and both raw answers stored, the position bias of a judge that
always picks the first reply measured as 1.0, resume, the cost ledger and batches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analysis.arena import combine_orders, position_bias
from analysis.arena_study import study_pair_answers
from annotate.cli import app
from annotate.pairwise_cli import judge_summary
from data.engine import _engine_for, get_engine
from data.pairs import make_pairs
from data.rubric import load_default_rubric
from data.study import current_rubric
from judge.batches import collect_batches
from judge.config import JudgeSpec
from judge.pairwise import PairFilters, parse_preference, plan_pairwise
from judge.pairwise_run import run_pairwise, submit_pair_batches
from judge.prompts import load_pairwise_template
from judge.providers import make_provider
from judge.run import run_async
from tests.helpers import item

from .conftest import FAST, make_study, query
from .fakes import FakeServer, Scripted

MODELS = {"ash": 1, "birch": 2, "cedar": 3}  # cedar best
# 4 scenarios × 3 model pairs = 12 pairs; 3 dimensions (dialogue) × 2 orders = 72 answers
ITEMS = [item(f"s{s}-{m}", scenario=f"s{s}", model=m) for s in range(4) for m in MODELS]
N_ANSWERS = 72


@pytest.fixture(scope="session")
def _pairs_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pairwise") / "study.db"
    engine = make_study(path, ITEMS)
    make_pairs(engine, seed=1)
    engine.dispose()
    _engine_for.cache_clear()
    return path


@pytest.fixture
def study(tmp_path, _pairs_template):
    path = tmp_path / "study.db"
    shutil.copyfile(_pairs_template, path)
    engine = get_engine(path)
    yield engine
    engine.dispose()
    _engine_for.cache_clear()


def spec_for(engine, provider="anthropic", **kw) -> JudgeSpec:
    return JudgeSpec(provider, kw.pop("model", "fake-judge"), load_pairwise_template(None),
                     current_rubric(engine).version, mode=kw.pop("mode", "pairwise"), **kw)


def run(engine, fake: FakeServer, prices, filters=PairFilters(), **kw):
    spec = kw.pop("spec", None) or spec_for(engine, fake.kind, **kw)
    provider = make_provider(spec.provider, base_url=fake.url, timeout=5.0,
                             structured=spec.structured)
    return run_pairwise(engine, spec, provider, filters=filters, options=FAST, prices=prices)


def _model(item_id: str) -> str:
    return item_id.split("-")[1]


def test_a_judge_that_always_picks_the_first_reply_has_position_bias_one(study, anthropic_fake,
                                                                        prices):
    plan, stats = run(study, anthropic_fake, prices)  # the fake answers "A" to everything
    assert (stats.calls, stats.scored, stats.unscored) == (N_ANSWERS, N_ANSWERS, 0)
    rows = query(study, "SELECT j.pair_id, j.dimension, j.\"order\", j.verdict, j.winner, "
                        "j.raw_reply, p.item_a, p.item_b FROM pair_judgment j "
                        "JOIN pair p ON p.id = j.pair_id")
    assert len(rows) == N_ANSWERS
    for _pid, _dim, order, verdict, winner, raw, _a, _b in rows:
        assert verdict == "first" and winner == ("a" if order == "ab" else "b")
        assert '"winner": "A"' in raw  # both raw answers kept
    # each pair and dimension in both orders
    assert {(p, d) for p, d, o, *_ in rows if o == "ab"} == \
        {(p, d) for p, d, o, *_ in rows if o == "ba"}
    # the prompt showed the pair's replies in the order it says, with the rubric's anchors
    for call in anthropic_fake.calls("judge"):
        assert call.pairwise and len(call.items) == 2
        body = call.body
        assert body["tools"][0]["input_schema"]["properties"]["winner"]["enum"] == \
            ["A", "B", "tie"]
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert "## Reply A" in body["messages"][0]["content"]
    firsts = {(c.items[0], c.items[1]) for c in anthropic_fake.calls("judge")}
    for _p, _d, _o, _v, _w, _r, a, b in rows:
        assert (a, b) in firsts and (b, a) in firsts
    bias = position_bias(study_pair_answers(study, plan.spec.hash), B=500, seed=0)
    assert bias.first_share == 1.0 and (bias.first_low, bias.first_high) == (1.0, 1.0)
    assert bias.consistency == 0.0 and bias.n_complete == 36
    verdicts, order = combine_orders(study_pair_answers(study, plan.spec.hash), "tie")
    assert order.inconsistent == 36 and set(verdicts["winner"]) == {"tie"}
    # the cost ledger has every call, priced
    ledger = query(study, "SELECT call_kind, status, cost_usd FROM cost_ledger")
    assert len(ledger) == N_ANSWERS and {(k, s) for k, s, _ in ledger} == {("pairwise", "ok")}
    assert all(c == pytest.approx(1000 / 1e6 * 1.0 + 100 / 1e6 * 10.0) for *_, c in ledger)


def test_a_consistent_judge_has_no_position_bias(study, anthropic_fake, prices):
    anthropic_fake.pick = lambda first, second, dim: \
        "A" if MODELS[_model(first)] > MODELS[_model(second)] else "B"
    plan, _ = run(study, anthropic_fake, prices)
    ans = study_pair_answers(study, plan.spec.hash)
    bias = position_bias(ans, B=200, seed=0)
    assert bias.consistency == 1.0 and bias.first_share == 0.5
    verdicts, order = combine_orders(ans)
    assert order.consistent == 36
    assert all((w == "a") == (MODELS[ma] > MODELS[mb]) for w, ma, mb in
               zip(verdicts["winner"], verdicts["model_a"], verdicts["model_b"], strict=True))
    lines = judge_summary(study, plan.spec.hash, "tie", 200, 0)
    assert lines[0].startswith("Position bias: the reply shown first won 0.500")
    assert "both orders agreed on 36 of 36" in lines[1]


def test_resume_asks_only_what_is_missing(study, anthropic_fake, prices):
    anthropic_fake.script(Scripted(400, error_type="invalid_request_error",
                                   message="prompt is too long"),
                          when=lambda r: r.kind == "judge" and r.dims == ("safety",))
    plan, stats = run(study, anthropic_fake, prices, filters=PairFilters(limit=2))
    assert plan.total_keys == 12 and (stats.scored, stats.request_failed) == (11, 1)
    # the rest, and the failed request again (a prompt too long fails only its own call)
    plan, stats = run(study, anthropic_fake, prices)
    assert plan.done_keys == 11 and plan.redo == {"request failed before": 1}
    assert stats.calls == N_ANSWERS - 11 and stats.scored == N_ANSWERS - 11
    before = len(anthropic_fake.log)
    plan, stats = run(study, anthropic_fake, prices)
    assert plan.units == [] and len(anthropic_fake.log) == before  # not even a preflight


def test_a_malformed_answer_is_stored_unscored_with_its_reason(study, anthropic_fake,
                                                               prices):
    anthropic_fake.script(Scripted(answer={"winner": "C"}))
    plan, stats = run(study, anthropic_fake, prices, filters=PairFilters(pairs=(1,),
                                                                         dimensions=("empathy",)))
    assert stats.unscored == 1 and stats.scored == 1
    got = query(study, "SELECT outcome, unscored_reason, raw_reply FROM pair_judgment "
                       "WHERE verdict IS NULL")
    assert got == [("invalid_reply", 'malformed: winner "C" is not A, B or tie',
                    '{"winner": "C"}')]


def test_all_dimensions_in_one_call_per_order(study, anthropic_fake, prices):
    _, stats = run(study, anthropic_fake, prices, mode="pairwise-all", reason_first=True)
    assert stats.calls == 24 and stats.scored == N_ANSWERS
    body = anthropic_fake.calls("judge")[0].body
    assert body["tools"][0]["name"] == "prefer_all"
    assert query(study, "SELECT DISTINCT reasoning FROM pair_judgment WHERE dimension = "
                        "'safety'") == [("about safety",)]


def test_plain_text_answers_from_an_openai_compatible_server(study, openai_fake, prices):
    _, stats = run(study, openai_fake, prices, structured=False,
                   filters=PairFilters(limit=1))
    assert stats.scored == 6 and stats.unscored == 0
    assert {r for (r,) in query(study, "SELECT raw_reply FROM pair_judgment")} == {"Winner: A"}


def test_batches_submit_and_collect(study, anthropic_fake, prices):
    spec = spec_for(study)
    plan = plan_pairwise(study, spec, PairFilters(limit=3))
    prov = make_provider("anthropic", base_url=anthropic_fake.url, timeout=5.0)

    async def go():
        try:
            ids = await submit_pair_batches(study, plan, prov, prices, FAST)
            rep = await collect_batches(study, prov, prices, config_hash=spec.hash)
            return ids, rep
        finally:
            await prov.aclose()

    ids, rep = run_async(go())
    assert len(ids) == 1 and rep.scored == 18 and rep.failed == 0
    assert query(study, "SELECT COUNT(*), COUNT(DISTINCT batch_id) FROM pair_judgment") == \
        [(18, 1)]
    assert query(study, "SELECT DISTINCT batch FROM cost_ledger") == [(1,)]
    assert plan_pairwise(study, spec, PairFilters(limit=3)).units == []  # nothing to ask


def test_parse_reads_the_forms_judges_answer_in():
    d = load_default_rubric().dimension("empathy")
    cases = {'{"winner": "B"}': "second", "Reply B is warmer.\n\nWinner: tie": "tie",
             "A": "first", "**Better reply: B**": "second", '{"winner": "first"}': "first"}
    for text, want in cases.items():
        assert parse_preference(text, None, [d], all_mode=False)["empathy"].verdict == want
    assert parse_preference("both are fine", None, [d], all_mode=False)["empathy"].reason == \
        "malformed: no winner found in the reply"


def test_the_command(study, anthropic_fake, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_fake.url)
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."fake-*"]\ninput = 1.0\noutput = 10.0\n', encoding="utf-8")
    db = str(tmp_path / "study.db")
    res = CliRunner().invoke(app, ["judge", "pairwise", "--db", db, "--provider", "anthropic",
                                   "--model", "fake-judge", "--name", "pairs-v1",
                                   "--prices", str(prices), "--quiet", "--bootstrap", "200"])
    assert res.exit_code == 0, res.output
    assert "Pairwise judge 'pairs-v1'" in res.output and "each pair in both orders" in res.output
    assert "Position bias: the reply shown first won 1.000 [1.000, 1.000] of 72 decisive " \
           "answers" in res.output
    assert "both orders agreed on 0 of 36 pairs" in res.output
    assert "counted as ties in its ranking (--inconsistent tie)" in res.output
    res = CliRunner().invoke(app, ["judge", "run", "--db", db, "--config", "pairs-v1"])
    assert res.exit_code != 0 and "is a pairwise judge" in str(res.exception)
    res = CliRunner().invoke(app, ["judge", "configs", "--db", db])
    assert "pairs-v1" in res.output and "pairwise" in res.output
    res = CliRunner().invoke(app, ["judge", "cost", "--db", db])
    assert "pairwise judge" in res.output
    # humans on the same pairs: the judge's ranking beside theirs, with κ and τ
    lines = ["item_a,item_b,rater,dimension,winner"]
    for a, b in query(get_engine(db), "SELECT item_a, item_b FROM pair"):
        better = "a" if MODELS[_model(a)] > MODELS[_model(b)] else "b"
        lines += [f"{a},{b},Dr Lee,empathy,{better}", f"{a},{b},Dr Kim,empathy,{better}"]
    (tmp_path / "prefs.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["import", "preferences", str(tmp_path / "prefs.csv"),
                                   "--db", db, "--add-raters"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["arena", "--db", db, "--judge", "pairs-v1", "--json",
                                   "--bootstrap", "100"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["source"] == "judge pairs-v1" and doc["inconsistent"] == "tie"
    assert doc["position_bias"]["first_share"] == 1.0
    assert "disagreed on 36 of 36 pairs: counted as ties (--inconsistent tie)" in doc["ties"]
    (k,) = [x for x in doc["agreement"] if x["dimension"] == "empathy"]
    # the judge said "tie" to every pair the humans agree on: no agreement beyond chance
    assert k["judge_kappa"] == 0.0 and k["human_kappa"] == 1.0 and k["n_pairs"] == 12
    res = CliRunner().invoke(app, ["arena", "--db", db, "--judge", "pairs-v1"])
    assert "Position bias: the first-shown reply won 1.000 [1.000, 1.000] of 72" in res.output
    # the judge's ranking is headed by the judge's counts, not the humans' preferences (it
    # said "24 human preferences" of the judge: a user trial)
    head = res.output.splitlines()[0]
    assert head.startswith("Bradley–Terry rankings of the judge pairs-v1 (its answers on the "
                           "study's 12 pairs") and "human" not in head


def test_limit_samples_pairs_across_task_families_and_says_what_it_took(tmp_path):
    """Pairs are made item by item, so the first pairs in study order are all one task
    family's: `--limit 2` judged two dialogue pairs and no recollection pair (as `judge run
    --limit` once did). Now a seeded sample spread over families and model pairs."""
    items = [item(f"{t[:3]}{s}-{m}", task=t, scenario=f"{t[:3]}{s}", model=m)
             for t in ("dialogue", "recollection") for s in range(4) for m in MODELS]
    engine = make_study(tmp_path / "two.db", items)
    make_pairs(engine, seed=1)
    spec = spec_for(engine)
    first = plan_pairwise(engine, spec, PairFilters())
    in_order = [first.pairs[u.pair_id].task for u in first.units]
    assert set(in_order[:12]) == {"dialogue"}  # study order: every dialogue pair first
    plan = plan_pairwise(engine, spec, PairFilters(limit=2))
    assert sorted(p.task for p in plan.pairs.values()) == ["dialogue", "recollection"]
    assert plan.limited == ("--limit 2: 2 of 24 pairs, sampled across task families and model "
                            "pairs (seed 0): dialogue 1, recollection 1")
    # the same seed takes the same pairs; the sample is what is judged, nothing else
    again = plan_pairwise(engine, spec, PairFilters(limit=2))
    assert set(again.pairs) == set(plan.pairs)
    assert {u.pair_id for u in plan.units} == set(plan.pairs)
    assert plan_pairwise(engine, spec, PairFilters(limit=24)).limited.startswith(
        "--limit 24: 24 of 24 pairs")
    engine.dispose()
    _engine_for.cache_clear()
