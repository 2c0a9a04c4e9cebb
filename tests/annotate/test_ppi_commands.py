"""`h2h judge import` (strict, idempotent) and `h2h leaderboard` on a study: a judge made
elsewhere, humans on a fifth of the items."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from annotate.cli import app
from annotate.judge_import import imported_hash
from data.engine import _engine_for, get_engine
from data.errors import H2HError
from data.importing import import_item_records, import_rating_records
from data.items import parse_items
from data.ratings import parse_ratings
from data.study import current_rubric, init_study
from tests.helpers import item, jsonl, snapshot

MODELS = ("alpha", "beta", "gamma")
TASKS = ("dialogue", "recollection", "itinerary")
PER_MODEL = 60


def _values(seed: int = 0):
    rng = np.random.default_rng(seed)
    out = {}
    for k, m in enumerate(MODELS):
        q = 2.5 + 0.6 * k + rng.normal(0, 0.9, PER_MODEL)
        out[m] = (np.clip(np.rint(q + rng.normal(0, 0.4, PER_MODEL)), 1, 5),
                  np.clip(np.rint(q + (0.9 if m == "alpha" else 0.0)
                                  + rng.normal(0, 0.4, PER_MODEL)), 1, 5))
    return out


@pytest.fixture(scope="module")
def _template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ppi") / "study.db"
    engine = get_engine(path)
    init_study(engine, name="ppi study")
    recs = [item(f"{m}-{i}", task=TASKS[i % 3], scenario=f"s{i // 2}", model=m,
                 condition=("sap", "baseline")[i % 2])
            for m in MODELS for i in range(PER_MODEL)]
    import_item_records(engine, parse_items(jsonl(*recs), "items.jsonl", TASKS),
                        file="items.jsonl")
    vals = _values()
    lines = ["item_id,rater,dimension,score"]
    for m in MODELS:
        for i in range(0, PER_MODEL, 5):  # a fifth of the items, one human each
            lines.append(f"{m}-{i},ann,empathy,{vals[m][0][i]:g}")
    rubric = current_rubric(engine)
    tasks = {f"{m}-{i}": TASKS[i % 3] for m in MODELS for i in range(PER_MODEL)}
    import_rating_records(engine, parse_ratings("\n".join(lines) + "\n", "r.csv", rubric,
                                                tasks), file="r.csv", add_raters=True)
    engine.dispose()
    _engine_for.cache_clear()
    return path


@pytest.fixture
def db(tmp_path, _template) -> str:
    path = tmp_path / "study.db"
    shutil.copyfile(_template, path)
    yield str(path)
    _engine_for.cache_clear()


def _judges_csv(path: Path, *, change: bool = False) -> Path:
    vals = _values()
    rows = ["item_id,judge,dimension,score,sample"]
    for m in MODELS:
        for i in range(PER_MODEL):
            s = vals[m][1][i]
            if change and (m, i) == ("beta", 3):
                s = 1.0 if s != 1 else 5.0
            rows.append(f"{m}-{i},inspect-judge,empathy,{s:g},0")
    rows.append("alpha-1,inspect-judge,safety,,0")  # a judgment without a score
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def fails(*args: str) -> str:
    """A user error: what `h2h` prints after "Error:" (main() turns it into exit 1)."""
    res = CliRunner().invoke(app, list(args))
    assert isinstance(res.exception, H2HError), res.output
    return str(res.exception)


def run(*args: str) -> str:
    res = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def test_judge_import_is_stored_as_a_configuration_and_idempotent(db, tmp_path):
    f = _judges_csv(tmp_path / "judges.csv")
    out = run("judge", "import", str(f), "--db", db)
    assert "Judge 'inspect-judge'" in out and "181 judgments added" in out
    assert "1 without a score" in out
    engine = get_engine(db)
    before = snapshot(engine)
    out = run("judge", "import", str(f), "--db", db)
    assert "0 judgments added, 181 unchanged, 0 replaced" in out
    assert snapshot(engine) == before
    listed = run("judge", "configs", "--db", db)
    assert "inspect-judge" in listed and "imported" in listed
    # scored elsewhere: no mode, output form or sampling of ours (it said "per-dimension",
    # "text" and "provider's × 1"; a user trial)
    row = next(ln for ln in listed.splitlines() if "inspect-judge" in ln)
    assert "per-dimension" not in row and "text" not in row and "provider's" not in row
    from analysis.study import study_judges

    j = study_judges(engine)
    assert set(j["judge"]) == {"inspect-judge"} and len(j) == 181
    assert j["score"].isna().sum() == 1


def test_a_changed_score_is_refused_unless_update(db, tmp_path):
    run("judge", "import", str(_judges_csv(tmp_path / "a.csv")), "--db", db)
    engine = get_engine(db)
    before = snapshot(engine)
    changed = _judges_csv(tmp_path / "b.csv", change=True)
    msg = fails("judge", "import", str(changed), "--db", db)
    # beta-3 is on line 1 + 60 + 3 + 1 = 65
    assert "b.csv:65: field 'score': judge 'inspect-judge' already has score" in msg
    assert "--update" in msg and snapshot(engine) == before
    out = run("judge", "import", str(changed), "--db", db, "--update")
    assert "0 judgments added, 180 unchanged, 1 replaced" in out


def test_a_bad_file_is_rejected_whole_with_file_line_and_field(db, tmp_path):
    run("judge", "import", str(_judges_csv(tmp_path / "ok.csv")), "--db", db)
    engine = get_engine(db)
    before = snapshot(engine)
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,judge,dimension,score,sample\n"
                   "alpha-0,other,empathy,4,0\n"       # fine on its own
                   "nope,other,empathy,4,0\n"          # no such item
                   "alpha-0,other,feelings,4,0\n"      # no such dimension
                   "alpha-0,other,memory_fidelity,4,0\n"  # not rated on dialogue items
                   "alpha-1,other,empathy,9,0\n"       # off the scale
                   "alpha-2,other,empathy,4,x\n",      # not a sample number
                   encoding="utf-8")
    msg = fails("judge", "import", str(bad), "--db", db)
    for want in ("bad.csv:3: field 'item_id': no item 'nope'",
                 "bad.csv:4: field 'dimension': 'feelings' is not a dimension",
                 "bad.csv:5: field 'dimension': 'memory_fidelity' is not rated on dialogue",
                 "bad.csv:6: field 'score':", "bad.csv:7: field 'sample': 'x'"):
        assert want in msg, msg
    assert "nothing was imported" in msg and snapshot(engine) == before


def test_a_short_row_or_a_stray_quote_hides_no_other_problem(db, tmp_path):
    """Issue 34: the file's structure and its fields are reported in one attempt."""
    engine = get_engine(db)
    before = snapshot(engine)
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,judge,dimension,score,sample\n"
                   "alpha-1,other,empathy,9,0\n"       # 2: off the scale
                   "alpha-2,other\n"                   # 3: short row
                   "alpha-0,other,kindness,4,0\n"      # 4: no such dimension
                   'alpha-3,other,"empathy,4,0\n'      # 5: a stray quote, never closed
                   "nope,other,empathy,4,0\n"          # 6: no such item
                   "alpha-4,other,empathy,three,0\n",  # 7: not a number
                   encoding="utf-8")
    res = CliRunner().invoke(app, ["judge", "import", str(bad), "--db", db])
    assert res.exit_code == 1 and isinstance(res.exception, H2HError)
    assert [(p.line, p.field) for p in res.exception.problems] == [
        (2, "score"), (3, None), (4, "dimension"), (5, None), (6, "item_id"), (7, "score")]
    assert "bad.csv:3: 2 cells, fewer than the header's 5 columns" in str(res.exception)
    assert snapshot(engine) == before


def test_an_imported_judge_cannot_be_run(db, tmp_path):
    run("judge", "import", str(_judges_csv(tmp_path / "j.csv")), "--db", db)
    assert "was imported from a file" in fails("judge", "run", "--db", db, "--config",
                                               "inspect-judge")


def test_leaderboard_json_from_a_stored_imported_judge(db, tmp_path):
    run("judge", "import", str(_judges_csv(tmp_path / "j.csv")), "--db", db)
    res = json.loads(run("leaderboard", "--db", db, "--judge", "inspect-judge", "--json",
                         "--bootstrap", "200", "--seed", "3"))
    assert set(res) == {"rows", "meta"}
    meta = res["meta"]
    assert meta["judge"]["name"] == "inspect-judge" and meta["judge"]["provider"] == "imported"
    assert meta["B"] == 200 and meta["seed"] == 3
    assert meta["human_value"] == "the mean of the item's human ratings"
    rows = {r["model"]: r for r in res["rows"]
            if r["dimension"] == "empathy" and r["task"] is None}
    assert set(rows) == set(MODELS)
    a = rows["alpha"]
    assert a["n_human"] == 12 and a["n_judge"] == 60 and a["method"] == "ppi++"
    # the flattered model: the judge alone sits well above the humans; the combined value
    # is pulled back to the humans'
    assert a["judge_only"]["estimate"] - a["human_only"]["estimate"] > 0.5
    assert abs(a["estimate"] - a["human_only"]["estimate"]) < \
        abs(a["judge_only"]["estimate"] - a["human_only"]["estimate"])
    # safety: one judgment without a score, no human: no row is possible, and no crash
    assert not any(r["dimension"] == "safety" and r["estimate"] is not None
                   for r in res["rows"])
    text = run("leaderboard", "--db", db, "--judge", "inspect-judge", "--bootstrap", "0")
    assert "judge only (uncalibrated)" in text and "PPI++" in text


def test_leaderboard_from_a_judges_csv_and_with_fair_scores(db, tmp_path):
    f = _judges_csv(tmp_path / "judges.csv")
    res = json.loads(run("leaderboard", "--db", db, "--judges", str(f), "--json",
                         "--bootstrap", "0", "--human-value", "fair"))
    assert res["meta"]["judge"] == {"name": "inspect-judge", "source": "judges.csv"}
    assert "fair score" in res["meta"]["human_value"]
    assert "--judge NAME" in fails("leaderboard", "--db", db)
    assert "ppi++, ppi, human or judge" in fails("leaderboard", "--db", db, "--judges", str(f),
                                                 "--estimator", "best")


def test_active_draw_deals_the_picked_items_and_the_leaderboard_reweights_them(db, tmp_path):
    from sqlmodel import select

    from data.draws import load_draws
    from data.models import Assignment
    from data.raters import add_rater

    run("judge", "import", str(_judges_csv(tmp_path / "j.csv")), "--db", db)
    engine = get_engine(db)
    add_rater(engine, "dr-lee", "rater")
    out = run("assign", "--db", db, "--to-shrink", "inspect-judge", "--budget", "30",
              "--k", "1", "--seed", "4")
    assert "30 items picked of a budget of 30" in out
    assert "sum of the models' standard errors" in out and "spread 0.00: " in out
    # how many more for ±0.1 on every model: 60 items a model cannot give it here
    assert "±0.1 is not reachable even with every item rated: alpha, beta, gamma." in out
    from annotate.services.active import describe_plan, plan_for

    plan, _ = plan_for(engine, "inspect-judge", budget=30, seed=4, halfwidth=0.3)
    more = {n["model"]: n["more"] for n in plan.needed}
    assert all(v is not None for v in more.values())
    assert (f"For ±0.3 on every model and dimension: about {sum(more.values())} more "
            "human-rated items") in describe_plan(plan, "inspect-judge")
    draws = load_draws(engine, imported_hash("inspect-judge"))
    assert len(draws) == 1 and len(draws[0].picked) == 30 and draws[0].seed == 4
    # every item has its probability; the picked ones were not rated before
    assert len(draws[0].probability) == 3 * PER_MODEL
    assert draws[0].rated_before == {m: 0.2 for m in MODELS}
    with engine.connect() as c:
        dealt = {r[0] for r in c.execute(select(Assignment.item_id)).all()}
    assert dealt == set(draws[0].picked)
    # before the picked items are rated: no combined value, said
    res = json.loads(run("leaderboard", "--db", db, "--judge", "inspect-judge", "--json",
                         "--bootstrap", "0"))
    assert res["meta"]["design"].startswith("active draws")
    assert res["meta"]["active_draws"][0]["picked"] == 30
    notes = [n["note"] for n in res["meta"]["notes"] if n["task"] is None]
    assert any("picked by an active draw are not rated yet" in n for n in notes)
    # rate them: the estimate is the inverse-probability-weighted one
    vals = _values()
    lines = ["item_id,rater,dimension,score"]
    for i in sorted(draws[0].picked):
        m, k = i.rsplit("-", 1)
        lines.append(f"{i},dr-lee,empathy,{vals[m][0][int(k)]:g}")
    (tmp_path / "more.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run("import", "ratings", str(tmp_path / "more.csv"), "--db", db)
    res = json.loads(run("leaderboard", "--db", db, "--judge", "inspect-judge", "--json",
                         "--bootstrap", "0"))
    rows = {r["model"]: r for r in res["rows"]
            if r["dimension"] == "empathy" and r["task"] is None}
    assert all(r["method"] == "active ppi++" and r["estimate"] is not None
               for r in rows.values())
    assert sum(r["n_human"] for r in rows.values()) == 36 + 30


def test_a_pairwise_judge_is_refused_with_where_its_ranking_is(db):
    from data.models import JudgeConfigRow, utcnow

    engine = get_engine(db)
    with engine.begin() as c:
        c.execute(JudgeConfigRow.__table__.insert().values(
            hash="p" * 16, name="pw-judge", provider="anthropic", model="m", template_name="t",
            template_hash="t", template={}, rubric_version="v", mode="pairwise",
            reason_first=False, structured=True, max_tokens=10, samples=1,
            created_at=utcnow()))
    for args in (("leaderboard", "--db", db, "--judge", "pw-judge"),
                 ("assign", "--db", db, "--to-shrink", "pw-judge", "--budget", "5")):
        msg = fails(*args)
        assert "'pw-judge' is a pairwise judge" in msg and "h2h arena --judge pw-judge" in msg
    assert "run them separately" in fails("assign", "--db", db, "--to-shrink", "pw-judge",
                                          "--budget", "5", "--pairs")


def test_the_plan_tells_its_spread_steps_apart():
    """Two steps at spreads 0.4714 and 0.4743 read "spread 0.47: 0.43, spread 0.47: 0.51"
    (a user trial): as many decimals as tell them apart, two when two do."""
    from annotate.services.active import _distinct

    assert _distinct([(0.0, 0.39), (0.8, 0.53)]) == [("0.00", 0.39), ("0.80", 0.53)]
    assert [u for u, _ in _distinct([(0.0, 0.3), (0.4714, 0.43), (0.4743, 0.51)])] == [
        "0.000", "0.471", "0.474"]
