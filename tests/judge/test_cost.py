"""The cost ledger: every attempt recorded, cache tokens priced, totals per configuration."""

from __future__ import annotations

import pytest

from judge.generate import GenSpec, plan_generation, run_generation
from judge.prompts import load_generation_templates, load_sap
from judge.providers import make_provider
from judge.reports import cost_summary, export_judgments_csv
from judge.scenarios import study_scenarios

from .conftest import FAST, N_PAIRS, judge, query
from .fakes import Scripted

# per call: 1000 input x $1 + 100 output x $10 + 200 cache writes x $1.25 + 800 cache reads
# x $0.10, per million tokens
PER_CALL = (1000 * 1.0 + 100 * 10.0 + 200 * 1.25 + 800 * 0.1) / 1e6


def test_totals_per_configuration_with_cache_tokens_and_retries(study, anthropic_fake, prices):
    anthropic_fake.usage.update(cache_creation_input_tokens=200, cache_read_input_tokens=800)
    anthropic_fake.script(Scripted(429, headers={"retry-after": "0"}))
    plan, stats = judge(study, anthropic_fake, prices, name="j-a")
    assert stats.cost == pytest.approx(N_PAIRS * PER_CALL)
    judge(study, anthropic_fake, prices, name="j-b", mode="all")
    provider = make_provider("anthropic", base_url=anthropic_fake.url)
    gplan = plan_generation(study, [GenSpec("anthropic", "fake-gen", load_generation_templates(),
                                            load_sap())], study_scenarios(study), ("sap",))
    run_generation(study, gplan, provider, prices=prices, options=FAST)

    lines = {ln.name: ln for ln in cost_summary(study)}
    a, b = lines["j-a"], lines["j-b"]
    assert (a.calls, a.failed_attempts, a.batch_calls) == (N_PAIRS, 1, 0)
    assert (a.input_tokens, a.output_tokens) == (N_PAIRS * 1000, N_PAIRS * 100)
    assert (a.cache_write_tokens, a.cache_read_tokens) == (N_PAIRS * 200, N_PAIRS * 800)
    assert a.cost == pytest.approx(N_PAIRS * PER_CALL) and a.unpriced_calls == 0
    assert (b.calls, b.kind) == (4, "judge") and b.cost == pytest.approx(4 * PER_CALL)
    gen = [ln for ln in lines.values() if ln.kind == "generate"]
    assert len(gen) == 1 and gen[0].calls == 4 and gen[0].cost == pytest.approx(4 * PER_CALL)
    # the summary is the ledger, summed
    total = query(study, "SELECT SUM(cost_usd) FROM cost_ledger")[0][0]
    assert sum(ln.cost for ln in lines.values()) == pytest.approx(total)


def test_unpriced_models_are_counted_not_guessed(study, anthropic_fake, prices):
    _, stats = judge(study, anthropic_fake, prices, model="mystery-model")
    assert stats.unpriced and stats.cost == 0.0
    (line,) = cost_summary(study)
    assert line.unpriced_calls == N_PAIRS and line.cost == 0.0
    assert query(study, "SELECT COUNT(*) FROM cost_ledger WHERE cost_usd IS NULL") == \
        [(N_PAIRS,)]


def test_export_keeps_unscored_rows_with_their_reason(study, anthropic_fake, prices):
    anthropic_fake.script(Scripted(answer={"score": 9}), when=lambda r: r.item == "i1" and
                          r.dims == ("plan_quality",))
    judge(study, anthropic_fake, prices, name="j")
    text, n, unscored = export_judgments_csv(study)
    assert (n, unscored) == (N_PAIRS, 1)
    lines = text.splitlines()
    assert lines[0] == "item_id,judge,dimension,score,sample,config,outcome,unscored_reason"
    bad = [ln for ln in lines if ln.startswith("i1,j,plan_quality,")]
    assert len(bad) == 1 and ",,0," in bad[0] and "invalid_reply,off-scale: 9" in bad[0]
    by_hash, _, _ = export_judgments_csv(study, label="hash")
    assert by_hash.splitlines()[1].split(",")[1] == query(
        study, "SELECT hash FROM judge_config")[0][0]
