"""What running the judges for real showed (issue 32, part 6): a configuration fixes its
sampling temperature and sends it on every provider (stored configurations without one keep
their hash and their judgments); --limit samples across task families and models; `h2h judge
cost` gives the wall time as the union of the calls' intervals and $0 for a model served on
this machine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from data.engine import write_connection
from judge.reports import cost_summary, union_seconds
from judge.store import insert_ledger, ledger_row, save_config
from tests.helpers import item, jsonl

from .conftest import N_PAIRS, judge_spec, query
from .test_cli import h2h, run_args


def _bodies(fake) -> list[dict]:
    return [c.body for c in fake.calls("judge")]


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_a_new_configuration_scores_at_temperature_0_on_every_provider(
        monkeypatch, capsys, study, kind, request):
    fake = request.getfixturevalue(f"{kind}_fake")
    db = str(study.url.database)
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, fake, "--name", "j",
                                                        "--items", "d1"))
    assert code == 0, err
    assert "temperature 0," in out
    assert {b.get("temperature") for b in _bodies(fake)} == {0.0}
    (temp,) = query(study, "SELECT temperature FROM judge_config WHERE name = 'j'")[0]
    assert temp == 0.0
    # self-consistency asks for answers that may differ: 0.7 unless told
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, fake, "--name", "sc",
                                                        "--items", "d1", "--samples", "3"))
    assert code == 0, err
    assert "temperature 0.7" in out
    assert query(study, "SELECT temperature FROM judge_config WHERE name = 'sc'") == [(0.7,)]


def test_a_configuration_stored_without_a_temperature_keeps_its_hash_and_judgments(
        monkeypatch, capsys, study, openai_fake):
    """Before the fix a configuration stored no temperature (the provider's default): the
    same command must continue it - same hash, its judgments counted, still no temperature
    sent - not start another configuration beside it."""
    legacy = judge_spec(study, "openai", name="old")  # temperature None, as then
    save_config(study, legacy.row())
    db = str(study.url.database)
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--name", "old",
                                                        "--items", "d1"))
    assert code == 0, err
    assert "'old' was stored before h2htalk fixed the sampling temperature" in out
    assert query(study, "SELECT hash FROM judge_config") == [(legacy.hash,)]
    assert {"temperature" in b for b in _bodies(openai_fake)} == {False}
    n = len(openai_fake.log)
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--name", "old",
                                                      "--items", "d1"))
    assert code == 0 and "Nothing to ask" in out and len(openai_fake.log) == n
    # without --name too (its settings are the stored ones)
    code, out, _ = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--items", "d1"))
    assert code == 0 and "Nothing to ask" in out
    code, out, _ = h2h(monkeypatch, capsys, "judge", "configs", "--db", db)
    assert "provider's" in out  # its sampling: no temperature sent


MIXED = [item(f"{t[0]}{m}{i}", task=t, model=m) for t in ("dialogue", "recollection",
                                                          "itinerary")
         for m in ("a", "b", "c") for i in range(4)]


def test_limit_takes_a_seeded_sample_across_tasks_and_models(monkeypatch, capsys, tmp_path,
                                                            anthropic_fake):
    from data.engine import get_engine
    from data.importing import import_item_records
    from data.items import parse_items
    from data.study import init_study

    db = str(tmp_path / "mixed.db")
    engine = get_engine(db)
    init_study(engine)
    import_item_records(engine, parse_items(jsonl(*MIXED), "m.jsonl", (
        "dialogue", "recollection", "itinerary")), file="m.jsonl")

    def picked(*more):
        code, out, err = h2h(monkeypatch, capsys, *run_args(db, anthropic_fake, "--limit",
                                                            "9", "--dry-run", "--show", "0",
                                                            *more))
        assert code == 0, err
        return out

    out = picked()
    assert "--limit 9: 9 of 36 items, sampled across task families and models (seed 0): " \
           "dialogue 3, itinerary 3, recollection 3" in out
    from judge.judging import Filters, plan_judging
    spec = judge_spec(engine)
    items = set(plan_judging(engine, spec, Filters(limit=9)).items)
    assert {(i[0], i[1]) for i in items} == {(t, m) for t in "dri" for m in "abc"}
    assert set(plan_judging(engine, spec, Filters(limit=9)).items) == items  # seeded
    assert set(plan_judging(engine, spec, Filters(limit=9, seed=1)).items) != items
    assert "(seed 1)" in picked("--seed", "1")


def test_wall_time_is_the_union_of_the_call_intervals(study):
    spec = judge_spec(study, name="w")
    save_config(study, spec.row())
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    # two calls of 10 s in flight together, then one of 5 s after a pause: 15.5 s, not 25 s
    rows = []
    for end, secs in ((10.0, 10.0), (10.5, 10.0), (30.0, 5.0)):
        r = ledger_row(config_hash=spec.hash, item_id="d1", call_kind="judge",
                       provider="anthropic", model="fake-judge", status="ok", cost=0.0,
                       seconds=secs)
        rows.append({**r, "created_at": t0 + timedelta(seconds=end)})
    with write_connection(study) as conn:
        insert_ledger(conn, rows)
    (line,) = cost_summary(study)
    assert line.seconds == pytest.approx(15.5) and line.call_seconds == pytest.approx(25.0)
    assert union_seconds([(0, 1), (2, 3), (0.5, 2.5)]) == 3.0


def test_a_model_on_this_machine_costs_nothing_rather_than_unknown(monkeypatch, capsys,
                                                                   study, openai_fake):
    db = str(study.url.database)
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, openai_fake, "--name", "here"))
    assert code == 0, err
    assert "cost $0.0000" in out and "unpriced" not in out
    code, out, _ = h2h(monkeypatch, capsys, "judge", "cost", "--db", db)
    line = next(ln for ln in out.splitlines() if "here" in ln)
    assert "$0.0000" in line and "unpriced" not in out and "Total: $0.0000" in out
    assert "without a price" not in out
    assert query(study, "SELECT count(*) FROM cost_ledger WHERE cost_usd IS NULL") == [(0,)]
    assert query(study, "SELECT count(*) FROM judgment") == [(N_PAIRS,)]
