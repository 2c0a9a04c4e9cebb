"""`h2h arena`: imported human preferences for 8 models give choix's log-strengths, the JSON
contract is kept exactly, ties are taken and said, and models that cannot be ranked against
each other get no number."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import choix  # noqa: E402  (the dev extra's reference; `make test` installs it)
import numpy as np
import pytest
from typer.testing import CliRunner

from annotate.cli import app
from data.engine import _engine_for, get_engine
from data.importing import import_item_records
from data.items import parse_items
from data.study import init_study
from tests.helpers import item, jsonl

MODELS = [f"m{k}" for k in range(8)]
STRENGTH = np.linspace(-1.2, 1.4, 8)
N_SCEN = 40


@pytest.fixture(scope="module")
def _template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("arena") / "study.db"
    engine = get_engine(path)
    init_study(engine, name="arena")
    recs = [item(f"s{s}-{m}", scenario=f"s{s}", model=m) for s in range(N_SCEN)
            for m in MODELS]
    import_item_records(engine, parse_items(jsonl(*recs), "items.jsonl",
                                            ("dialogue", "recollection", "itinerary")),
                        file="items.jsonl")
    engine.dispose()
    _engine_for.cache_clear()
    return path


@pytest.fixture
def db(tmp_path, _template) -> str:
    path = tmp_path / "study.db"
    shutil.copyfile(_template, path)
    yield str(path)
    _engine_for.cache_clear()


def _prefs(seed: int = 1, ties: float = 0.0) -> tuple[str, list[tuple[int, int, str]]]:
    """A preferences CSV: in each scenario 7 random model pairs, 2 raters each, winners from
    Bradley-Terry (a share of ties when asked); and the comparisons for choix."""
    rng = np.random.default_rng(seed)
    lines = ["item_a,item_b,rater,dimension,winner"]
    comps = []
    for s in range(N_SCEN):
        for _ in range(7):
            i, j = rng.choice(8, 2, replace=False)
            for r in ("Dr Lee", "Dr Kim"):
                if rng.random() < ties:
                    w = "tie"
                else:
                    w = "a" if rng.random() < 1 / (1 + np.exp(STRENGTH[j] - STRENGTH[i])) \
                        else "b"
                lines.append(f"s{s}-{MODELS[i]},s{s}-{MODELS[j]},{r},empathy,{w}")
                comps.append((int(i), int(j), w))
    # one rater compared each pair once: dedupe repeated draws of a pair in a scenario
    seen, kept, kept_comps = set(), [lines[0]], []
    for line, c in zip(lines[1:], comps, strict=True):
        a, b, r = line.split(",")[:3]
        key = (frozenset((a, b)), r)
        if key not in seen:
            seen.add(key)
            kept.append(line)
            kept_comps.append(c)
    return "\n".join(kept) + "\n", kept_comps


def _run(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output + repr(res.exception)
    return res.output


def test_imported_preferences_for_8_models_give_choix_log_strengths(db, tmp_path):
    text, comps = _prefs()
    f = tmp_path / "prefs.csv"
    f.write_text(text, encoding="utf-8")
    _run("import", "preferences", str(f), "--db", db, "--add-raters")
    doc = json.loads(_run("arena", "--db", db, "--json", "--bootstrap", "200", "--seed", "3"))
    # the contract: rows with exactly these keys, and how ties were treated
    assert set(doc) >= {"rows", "ties"}
    assert all(list(r) == ["model", "dimension", "log_strength", "low", "high", "rank",
                           "n_comparisons"] for r in doc["rows"])
    rows = {r["model"]: r for r in doc["rows"]}
    assert sorted(rows) == MODELS
    data = [(i, j) if w == "a" else (j, i) for i, j, w in comps]
    ref = choix.opt_pairwise(8, data, alpha=0.0, tol=1e-12)
    got = np.array([rows[m]["log_strength"] for m in MODELS])
    np.testing.assert_allclose(got, ref, atol=1e-6)
    assert [rows[m]["rank"] for m in MODELS] == list(8 - np.argsort(np.argsort(ref)))
    assert all(r["low"] < r["log_strength"] < r["high"] for r in doc["rows"])
    assert sum(r["n_comparisons"] for r in doc["rows"]) == 2 * len(comps)
    assert doc["ties"].startswith("Davidson (1970)") and "empathy: none" in doc["ties"]
    assert doc["bootstrap"] == {"B": 200, "seed": 3, "resampling": "scenarios", "ci": 0.95,
                                "interval": "percentile"}
    # the same numbers in the table, with the Elo-like scale and the win rates
    table = _run("arena", "--db", db, "--bootstrap", "0", "--elo", "--matrix")
    best = max(rows, key=lambda m: rows[m]["log_strength"])
    assert f"{rows[best]['log_strength']:+.3f}" in table and "Elo-like" in table
    assert "win rates (a tie counts half)" in table


def test_ties_are_taken_and_said(db, tmp_path):
    text, comps = _prefs(seed=2, ties=0.2)
    f = tmp_path / "prefs.csv"
    f.write_text(text, encoding="utf-8")
    _run("import", "preferences", str(f), "--db", db, "--add-raters")
    doc = json.loads(_run("arena", "--db", db, "--json", "--bootstrap", "50"))
    n_ties = sum(w == "tie" for _, _, w in comps)
    info = doc["dimensions"]["empathy"]
    assert info["n_ties"] == n_ties > 0 and info["nu"] > 0
    assert f"empathy: {n_ties} of {len(comps)}, ν = {info['nu']:.3f}" in doc["ties"]


def test_models_that_cannot_be_ranked_get_no_number(db, tmp_path):
    # m0 beat m1 in every comparison; m2 and m3 split theirs; the two groups never met
    lines = ["item_a,item_b,rater,dimension,winner"]
    for s in range(6):
        lines.append(f"s{s}-m0,s{s}-m1,Dr Lee,empathy,a")
        lines.append(f"s{s}-m2,s{s}-m3,Dr Lee,empathy,{'a' if s % 3 else 'b'}")
    f = tmp_path / "prefs.csv"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _run("import", "preferences", str(f), "--db", db, "--add-raters")
    doc = json.loads(_run("arena", "--db", db, "--json", "--bootstrap", "50"))
    rows = {r["model"]: r for r in doc["rows"]}
    for m in ("m0", "m1"):
        assert (rows[m]["log_strength"], rows[m]["low"], rows[m]["high"], rows[m]["rank"]) == \
            (None, None, None, None)
    assert rows["m2"]["log_strength"] == pytest.approx(np.log(2) / 2, abs=1e-6)
    reasons = [x["reason"] for x in doc["dimensions"]["empathy"]["cannot_rank"]]
    assert "m0 never lost to m1: their difference in strength is infinite (no finite " \
           "estimate)" in reasons
    assert any("were never compared" in r for r in reasons)
    table = _run("arena", "--db", db, "--bootstrap", "0")
    assert "not estimable" in table and "Cannot be ranked against each other: m0 never lost" \
        in table


def test_errors_are_one_clear_message(db):
    res = CliRunner().invoke(app, ["arena", "--db", db])
    assert res.exit_code != 0 and "no pairs in this study yet" in str(res.exception)
    res = CliRunner().invoke(app, ["arena", "--db", db, "--by", "vendor"])
    assert "--by: 'vendor' is not one of model, condition, model+condition" in \
        str(res.exception)


def test_a_model_that_never_lost_in_many_resamples_gets_no_interval(db, tmp_path):
    """m0 beat m1 in 9 of 10 scenarios: a resample without that one loss has m0 infinitely
    strong (about a third of them). The interval was taken over the others alone and read as
    a 95% CI (+4.5 [3.3, 4.9] on the demo, a user trial); now a bound they decide is not
    given, and the table says so. Without a bootstrap, the heading says there are no
    intervals (it said "from 0 scenario resamples")."""
    lines = ["item_a,item_b,rater,dimension,winner"]
    lines += [f"s{s}-m0,s{s}-m1,Dr Lee,empathy,{'b' if s == 0 else 'a'}" for s in range(10)]
    f = tmp_path / "prefs.csv"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _run("import", "preferences", str(f), "--db", db, "--add-raters")
    doc = json.loads(_run("arena", "--db", db, "--json", "--bootstrap", "400", "--seed", "2"))
    info = doc["dimensions"]["empathy"]
    assert 0.2 < 1 - info["n_boot_valid"] / 400 < 0.5  # (9/10)^10 = 0.35 of the resamples
    rows = {r["model"]: r for r in doc["rows"]}
    assert rows["m0"]["log_strength"] == pytest.approx(np.log(9) / 2, abs=1e-6)
    assert (rows["m0"]["low"], rows["m0"]["high"]) == (None, None)
    assert any("each interval counts them beyond its bounds" in n for n in info["notes"])
    table = _run("arena", "--db", db, "--bootstrap", "400")
    assert f"{np.log(9) / 2:+.3f} [no interval: see the notes]" in table
    table = _run("arena", "--db", db, "--bootstrap", "0")
    assert "no intervals (--bootstrap 0)" in table.splitlines()[0]
    assert "no interval: see the notes" not in table and "0 scenario resamples" not in table
