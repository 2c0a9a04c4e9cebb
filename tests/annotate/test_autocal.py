"""`h2h calibrate auto` (issue 32): a judge improved from the study's own ratings, proven on
items it never saw.

The judge is scripted: an OpenAI-compatible server on 127.0.0.1 (through the real ``openai``
SDK) that answers with the human score of the most similar exemplar in its prompt, and a
fixed, biased 5 when the prompt has none. The study has 40 scenarios, three replies each, whose
text carries its quality, and three humans who rate it (with noise). So exemplars help exactly
as far as they are real human scores of similar replies: the held-out QWK must rise - and any
exemplar that comes from the dev or test part is caught.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import annotate.services.autocal as autocal
from data.engine import _engine_for, get_engine
from data.importing import import_item_records, import_rating_records
from data.items import parse_items
from data.ratings import parse_ratings
from data.study import current_rubric, init_study
from tests.helpers import item, jsonl, run_h2h
from tests.judge.fakes import FakeServer

# what a reply of each quality says: distinct words, so a reply is most similar to the
# replies of its own quality
TEXT = {1: "whatever, stop whining about it and deal with it yourself, nobody cares much",
        2: "ok that sounds bad i guess, maybe just try to sleep more or something later",
        3: "that sounds hard. i hear that you are tired; rest a little before dinner tonight",
        4: "that sounds exhausting - a long week wears anyone down. could you take a short "
           "walk and ask your sister for help with the kids tomorrow?",
        5: "i can hear how drained you are after this week, and it makes sense. you were "
           "carrying the deadline and your mother's visit at once. what would help most "
           "tonight: an early night, or talking it through with me for a while?"}
TASKS = ("dialogue", "recollection", "itinerary")
RATERS = ("ann", "bo", "cy")
N_SCENARIOS = 40


def _quality(scenario: int, model: int) -> int:
    return (scenario * 7 + model * 2) % 5 + 1


def build(path) -> None:
    engine = get_engine(path)
    init_study(engine, name="autocal study")
    items, rows = [], ["item_id,rater,dimension,score"]
    rng = random.Random(11)
    rubric = current_rubric(engine)
    for s in range(N_SCENARIOS):
        task = TASKS[s % 3]
        for m, model in enumerate(("a", "b", "c")):
            iid = f"s{s:02d}-{model}"
            q = _quality(s, m)
            items.append(item(iid, task=task, scenario=f"s{s:02d}", model=model,
                              response=f"reply to {iid}\n{TEXT[q]}"))
            for r in RATERS:
                for d in rubric.dimensions_for(task):
                    score = min(5, max(1, q + rng.choice((-1, 0, 0, 0, 0, 1))))
                    rows.append(f"{iid},{r},{d.key},{score}")
    records = parse_items(jsonl(*items), "items.jsonl", TASKS)
    import_item_records(engine, records, file="items.jsonl")
    tasks = {i["id"]: i["task"] for i in items}
    import_rating_records(engine, parse_ratings("\n".join(rows) + "\n", "r.csv", rubric, tasks),
                          file="r.csv", add_raters=True)
    engine.dispose()
    _engine_for.cache_clear()


@pytest.fixture(scope="module")
def _template(tmp_path_factory):
    path = tmp_path_factory.mktemp("autocal") / "study.db"
    build(path)
    return path


@contextmanager
def _copy_of(study: Path, path: Path) -> Iterator[str]:
    """``study`` copied to ``path``; its engine disposed afterwards."""
    shutil.copyfile(study, path)
    try:
        yield str(path)
    finally:
        get_engine(path).dispose()
        _engine_for.cache_clear()


@pytest.fixture
def db(tmp_path, _template) -> Iterator[str]:
    with _copy_of(_template, tmp_path / "study.db") as path:
        yield path


_BLOCK = re.compile(r"^### Example \d+ .*?(?=^### Example |^## Now the reply to rate)", re.M | re.S)


def _exemplars(prompt: str) -> list[tuple[str, int]]:
    """(the exemplar's item, its human score) for each example in a prompt."""
    out = []
    for block in _BLOCK.findall(prompt):
        reply = block.split("The companion's reply:\n", 1)[1]
        iid = re.search(r"^> reply to (\S+)$", reply, re.M).group(1)
        score = int(re.search(r"^Human raters' score for [^:]+: (\d+)", block, re.M).group(1))
        out.append((iid, score))
    return out


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z']+", text.lower())) - {"reply", "to"}


def reader(prompt: str, item_id: str, dim: str) -> int:
    """The scripted judge: the score of the exemplar whose reply shares the most words with
    the reply to rate (Jaccard), else a fixed, biased 5."""
    examples = _exemplars(prompt)
    if not examples:
        return 5
    own = _words(prompt.split("## The companion's reply to rate", 1)[1].split("##", 1)[0])
    best, best_sim = 5, -1.0
    for block, (_iid, score) in zip(_BLOCK.findall(prompt), examples, strict=True):
        text = block.split("The companion's reply:\n", 1)[1]
        text = "\n".join(ln[2:] for ln in text.splitlines() if ln.startswith("> "))
        w = _words(text)
        sim = len(w & own) / max(1, len(w | own))
        if sim > best_sim:
            best, best_sim = score, sim
    return best


@contextmanager
def _judge_server() -> Iterator[FakeServer]:
    """The scripted judge (:func:`reader`) behind an OpenAI-compatible server."""
    f = FakeServer("openai", api_key=None)
    f.reader = reader
    try:
        yield f
    finally:
        f.close()


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with _judge_server() as f:
        yield f


def auto(db, fake, *more, check=True):
    return run_h2h("calibrate", "auto", "--db", db, "--provider", "openai", "--model",
                   "fake-judge", "--base-url", fake.url, "--seed", "3", "--bootstrap", "300",
                   "--concurrency", "8", "--yes", *more, check=check)


def _prompts(fake) -> list[str]:
    return [m["content"] for r in fake.calls("judge") for m in r.body["messages"]
            if m["role"] == "user"]


SEARCH = ("--shots", "0,4", "--reason-first", "off", "--samples", "1", "--json")


@pytest.fixture(scope="module")
def searched(_template, tmp_path_factory) -> dict:
    """One search (the base and k4) on a copy of the study, shared by the tests that read its
    result or start from it (each on its own copy of the study it left): the study file,
    the JSON, and the prompts the judge was sent."""
    with _copy_of(_template, tmp_path_factory.mktemp("searched") / "study.db") as path, \
            _judge_server() as f:
        doc = json.loads(auto(path, f, *SEARCH).stdout)
        return {"path": Path(path), "doc": doc, "prompts": _prompts(f)}


@pytest.fixture
def searched_db(tmp_path, searched) -> Iterator[str]:
    """A copy of the study the shared search left."""
    with _copy_of(searched["path"], tmp_path / "study.db") as path:
        yield path


def test_the_held_out_qwk_rises_and_no_exemplar_comes_from_dev_or_test(searched):
    doc = searched["doc"]
    assert list(doc) >= ["split", "candidates", "selected", "test"]
    split = doc["split"]
    # a scenario-level split: no scenario in two parts, every rated item in one
    scen = {p: {i.split("-")[0] for i in split[p]} for p in ("train", "dev", "test")}
    assert not (scen["train"] & scen["dev"] or scen["train"] & scen["test"]
                or scen["dev"] & scen["test"])
    assert sum(len(v) for v in scen.values()) == N_SCENARIOS
    assert sorted(split["train"] + split["dev"] + split["test"]) == sorted(
        f"s{s:02d}-{m}" for s in range(N_SCENARIOS) for m in "abc")
    # every prompt's exemplars come from train; dev and test items never appear
    shown = [iid for p in searched["prompts"] for iid, _ in _exemplars(p)]
    assert shown and set(shown) <= set(split["train"])
    assert not set(shown) & (set(split["dev"]) | set(split["test"]))
    # the exemplars' scores are the humans' medians (a reply of quality q has median q here
    # within one point: noise of ±1 on one rater in five draws)
    # ... and the choice is k4, which on test beats the biased base clearly
    assert doc["selected"] == "k4"
    t = doc["test"]
    assert list(t)[:4] == ["n_items", "base", "selected", "delta"]
    assert t["n_items"] == len(split["test"])
    assert set(t["base"]) == {"qwk", "low", "high"} and set(t["selected"]) == {"qwk", "low",
                                                                              "high"}
    assert t["selected"]["qwk"] > t["base"]["qwk"] + 0.3
    assert t["delta"]["low"] > 0 and t["delta"]["diff"] == pytest.approx(
        t["selected"]["qwk"] - t["base"]["qwk"])
    for d in t["dimensions"].values():  # Holm across dimensions
        assert d["delta"]["p_holm"] >= d["delta"]["p"]
    cands = {c["name"]: c for c in doc["candidates"]}
    assert set(cands) == {"base", "k4"}
    assert cands["k4"]["settings"] == {"shots": 4, "exemplars": "cover", "reason_first": False,
                                       "samples": 1, "temperature": 0.0}
    assert cands["k4"]["dev"]["mean_qwk"]["qwk"] > cands["base"]["dev"]["mean_qwk"]["qwk"]
    conf = doc["configuration"]
    assert conf["name"] == "fake-judge-" + cands["base"]["hash"][:8] + "-auto"
    assert set(conf["exemplar_items"]) <= set(split["train"])


def test_a_second_run_with_the_same_seed_sends_nothing_and_gives_the_same_split(searched,
                                                                              searched_db,
                                                                              fake):
    db, first = searched_db, searched["doc"]
    again = json.loads(auto(db, fake, *SEARCH).stdout)
    assert fake.log == []  # no request at all (not even the key check)
    assert again["split"] == first["split"] and again["test"] == first["test"]
    # another seed would be another split: the stored one is frozen
    res = run_h2h("calibrate", "auto", "--db", db, "--provider", "openai", "--model",
                  "fake-judge", "--base-url", fake.url, "--seed", "4", "--yes", check=False)
    assert res.returncode == 1 and "made with seed 3 and is frozen" in res.stderr


def test_exemplars_drawn_outside_train_are_refused_before_any_request(db, fake, monkeypatch):
    real = autocal._exemplar_pool

    def leaky(engine, ratings, train, nominal):  # the bug this guards against
        split = autocal.stored_split(engine)
        dev = [i for i in ratings["item_id"].unique()
               if split.parts.get(i.split("-")[0]) == "dev"]
        return real(engine, ratings, list(train) + dev, nominal)

    monkeypatch.setattr(autocal, "_exemplar_pool", leaky)
    res = auto(db, fake, "--shots", "0,8", "--reason-first", "off", "--samples", "1",
               check=False)
    assert res.returncode == 1 and "exemplars outside the train part" in res.stderr
    assert fake.calls("judge") == []


def test_too_few_scenarios_say_how_many_are_needed(tmp_path, fake):
    path = tmp_path / "small.db"
    engine = get_engine(path)
    init_study(engine)
    records = parse_items(jsonl(*(item(f"x{i}") for i in range(5))), "i.jsonl", TASKS)
    import_item_records(engine, records, file="i.jsonl")
    rows = "item_id,rater,dimension,score\n" + "".join(
        f"x{i},{r},empathy,3\n" for i in range(5) for r in RATERS)
    import_rating_records(engine, parse_ratings(rows, "r.csv", current_rubric(engine),
                                                {f"x{i}": "dialogue" for i in range(5)}),
                          file="r.csv", add_raters=True)
    res = run_h2h("calibrate", "auto", "--db", str(path), "--provider", "openai", "--model",
                  "fake-judge", "--base-url", fake.url, "--yes", check=False)
    assert res.returncode == 1
    assert "needs at least 30 scenarios" in res.stderr and "this study has 5" in res.stderr
    assert "25 more scenarios" in res.stderr and fake.log == []


def _q(db, sql, **p):
    import sqlalchemy as sa
    with get_engine(db).connect() as c:
        return c.execute(sa.text(sql), p).all()


def test_the_result_needs_a_name_of_its_own(searched, searched_db, fake):
    base = searched["doc"]["candidates"][0]["config"]
    res = auto(searched_db, fake, "--name", base, "--shots", "0,2", check=False)
    assert res.returncode == 1 and "is the base configuration's name" in res.stderr
    assert fake.log == []


def test_the_dry_run_prices_the_whole_search_and_stores_nothing(db, fake):
    res = auto(db, fake, "--dry-run")
    assert "16 candidates on 30 dev items" in res.stdout
    assert "calls still to make" in res.stdout and "Dry run: nothing was sent" in res.stdout
    assert fake.log == []
    assert _q(db, "SELECT count(*) FROM calibration_split") == [(0,)]
    assert _q(db, "SELECT count(*) FROM judge_config") == [(0,)]


def test_the_dry_run_in_json_and_a_budget_that_is_no_amount(db, fake):
    """--json with --dry-run printed the estimate on stderr and nothing on stdout, and
    --budget -5 ran the search (a user trial)."""
    res = auto(db, fake, "--dry-run", "--json")
    doc = json.loads(res.stdout)  # stdout is the document alone; the text went to stderr
    assert doc["dry_run"] is True and len(doc["candidates"]) == 16
    assert len(doc["split"]["dev"]) == 30 and doc["seed"] == 3
    assert doc["calls"] > 0 and doc["input_tokens"] > 0 and doc["output_tokens_max"] > 0
    assert doc["cost_max_usd"] is None or doc["cost_max_usd"] >= 0
    assert fake.log == [] and _q(db, "SELECT count(*) FROM judge_config") == [(0,)]
    for bad in ("-5", "0", "nan"):
        res = auto(db, fake, "--budget", bad, check=False)
        assert res.returncode == 1 and "--budget:" in res.stderr and "above 0" in res.stderr
        assert "Traceback" not in res.stderr and fake.log == []


def test_the_result_is_a_configuration_like_any_other(db, fake):
    """Listed with its provenance, run on the rest of the study, and held against the humans
    everywhere without its exemplar items - saying how many."""
    doc = json.loads(auto(db, fake, "--shots", "0,4", "--reason-first", "off", "--samples",
                          "1", "--name", "tuned", "--json").stdout)
    ex = set(doc["configuration"]["exemplar_items"])
    out = run_h2h("judge", "configs", "--db", db).stdout
    assert "tuned: made by `h2h calibrate auto`" in out and "split seed 3" in out
    assert all(i in out for i in ex) and "held out on 30 test items" in out
    assert "Candidates of a search" not in out  # the base and k4 only, both kept
    run_h2h("judge", "run", "--db", db, "--config", "tuned", "--base-url", fake.url,
            "--quiet")
    judged = {r[0] for r in _q(db, "SELECT DISTINCT j.item_id FROM judgment j JOIN "
                                   "judge_config c ON c.hash = j.config_hash WHERE c.name = "
                                   "'tuned'")}
    assert ex <= judged and len(judged) == 3 * N_SCENARIOS
    res = json.loads(run_h2h("analyze", "--db", db, "--bootstrap", "50", "--json").stdout)
    block = res["judges"]["tuned"]["empathy"]
    # every item is rated on empathy: each exemplar item is one left out there
    note = f"{len(ex)} items left out: they were exemplars in this judge's prompt"
    assert any(n.startswith(note) for n in block["notes"]), block["notes"]
    assert block["n_scored_items"] == 3 * N_SCENARIOS - len(ex)
    cal = run_h2h("calibrate", "--db", db, "--configs",
                  f"tuned,{doc['candidates'][0]['config']}", "--bootstrap", "50").stdout
    assert f"tuned: {len(ex)} items left out" in cal
    from data.calibration import held_against_items
    kept, left = held_against_items(get_engine(db), doc["configuration"]["hash"],
                                    sorted(judged))
    assert left == len(ex) and not set(kept) & ex
    # the leaderboard (PPI) leaves the judge's scores of its exemplars out too, and says so
    board = json.loads(run_h2h("leaderboard", "--db", db, "--judge", "tuned", "--bootstrap",
                               "50", "--json").stdout)
    assert board["meta"]["judge"]["items_set_aside"] == len(ex)
    said = f"The judge's scores of {len(ex)} items are left out (exemplars in the judge's prompt"
    assert said in board["meta"]["method_sentence"]
    for m in "abc":  # every item is judged and rated; a model's exemplars have no judge value
        row = next(r for r in board["rows"] if r["model"] == m and r["task"] is None
                   and r["dimension"] == "empathy")
        mine = {f"s{s:02d}-{m}" for s in range(N_SCENARIOS)}
        assert (row["n_human"], row["n_judge"]) == (N_SCENARIOS, N_SCENARIOS - len(mine & ex))
    assert said in run_h2h("leaderboard", "--db", db, "--judge", "tuned", "--bootstrap",
                           "50").stdout
    # the report's judge part: the held-out result, and which items were exemplars
    out_dir = Path(db).parent / "report"
    run_h2h("report", "--db", db, "--out", str(out_dir), "--bootstrap", "50", "--no-figures")
    md = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "Judges calibrated on held-out items" in md
    assert f"on {doc['test']['n_items']} held-out test items its mean QWK is" in md
    assert all(i in md for i in ex)
    import csv
    rows = list(csv.DictReader((out_dir / "tables" / "held_out.csv").open(encoding="utf-8")))
    assert {r["configuration"] for r in rows} == {"tuned"}
    assert set(rows[0]["exemplar_items"].split()) == ex


def test_the_budget_stops_the_search_and_the_next_run_pays_nothing_twice(db, fake, tmp_path):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."fake-*"]\ninput = 1.0\noutput = 10.0\n', encoding="utf-8")
    # each call: 1000 input and 100 output tokens at $1 / $10 per million = $0.002
    res = auto(db, fake, "--shots", "0,4", "--reason-first", "off", "--samples", "1",
               "--prices", str(prices), "--budget", "0.05", "--concurrency", "1",
               check=False)
    assert res.returncode == 1 and "stopped at the budget: $0.05" in res.stderr
    paid = _q(db, "SELECT count(*) FROM cost_ledger WHERE status = 'ok'")[0][0]
    assert 25 <= paid <= 26  # $0.05 / $0.002, and the call in flight when it was reached
    doc = json.loads(auto(db, fake, "--shots", "0,4", "--reason-first", "off", "--samples",
                          "1", "--prices", str(prices), "--json").stdout)
    assert doc["selected"] == "k4"
    # every judgment paid for once, across the stop
    assert _q(db, "SELECT count(*) FROM cost_ledger WHERE status = 'ok'") == \
        _q(db, "SELECT count(*) FROM judgment")


def test_killed_with_sigkill_the_search_resumes_without_paying_twice(db, fake):
    import signal
    import subprocess
    import sys
    import time

    from tests.helpers import h2h_env

    fake.delay = 0.02
    cmd = [sys.executable, "-m", "annotate.cli", "calibrate", "auto", "--db", db,
           "--provider", "openai", "--model", "fake-judge", "--base-url", fake.url, "--seed",
           "3", "--shots", "0,4", "--reason-first", "off", "--samples", "1", "--yes",
           "--bootstrap", "100"]
    proc = subprocess.Popen(cmd, env=h2h_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while _q(db, "SELECT count(*) FROM judgment")[0][0] < 60:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = _q(db, "SELECT count(*) FROM judgment")[0][0]
    fake.delay = 0.0
    doc = json.loads(auto(db, fake, "--shots", "0,4", "--reason-first", "off", "--samples",
                          "1", "--bootstrap", "100", "--json").stdout)
    assert doc["selected"] == "k4"
    n = _q(db, "SELECT count(*) FROM judgment")[0][0]
    assert n > before
    assert _q(db, "SELECT count(*) FROM cost_ledger WHERE status = 'ok'") == [(n,)]
    assert _q(db, "SELECT count(*) FROM (SELECT config_hash, item_id, dimension, sample "
                  "FROM judgment GROUP BY 1, 2, 3, 4 HAVING count(*) > 1) x") == [(0,)]


def test_anthropic_message_batches_carry_the_whole_search(db, monkeypatch):
    fake = FakeServer("anthropic")
    fake.reader = reader
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key)
    try:
        args = ("calibrate", "auto", "--db", db, "--provider", "anthropic", "--model",
                "fake-judge", "--base-url", fake.url, "--seed", "3", "--shots", "0,4",
                "--reason-first", "off", "--samples", "1", "--bootstrap", "200", "--yes",
                "--batch")
        first = run_h2h(*args)
        assert "Submitted" in first.stdout and "run the same command again" in first.stdout
        direct = run_h2h(*args[:-1], check=False)  # without --batch: nothing asked twice
        assert direct.returncode == 1 and "wait in Message Batches" in direct.stderr
        assert not [r for r in fake.log if r.path.endswith("/v1/messages")]
        doc = json.loads(run_h2h(*args, "--wait", "--poll", "0", "--json").stdout)
    finally:
        fake.close()
    assert doc["selected"] == "k4" and doc["test"]["delta"]["low"] > 0
    assert fake.batches and not [r for r in fake.log if r.path.endswith("/v1/messages")]
    assert _q(db, "SELECT count(*) FROM cost_ledger WHERE batch = 0 AND status = 'ok'") == \
        [(0,)]


def test_a_simulated_judge_cannot_be_the_base_or_checked_for_drift(tmp_path, demo_template):
    demo = str(demo_template.copy_to(tmp_path))
    res = run_h2h("calibrate", "auto", "--db", demo, "--base", "sim-judge-plain", "--yes",
                  check=False)
    assert res.returncode == 1 and "is a simulated demo judge, with no model to ask" in \
        res.stderr
    res = run_h2h("calibrate", "drift", "--db", demo, "--config", "sim-judge-plain",
                  check=False)
    assert res.returncode == 1 and "is a simulated configuration: there is no model" in \
        res.stderr
