"""`h2h calibrate` and the prompt-version workflow, on the demo study, with a real run
through the anthropic SDK against the loopback fake server."""

from __future__ import annotations

import json
import re

import pytest

from annotate.services import calibration as cal
from data.engine import get_engine
from tests.helpers import H2HResult, run_h2h
from tests.judge.fakes import FakeServer


def h2h(*args: str, env: dict | None = None, check: bool = True) -> H2HResult:
    return run_h2h(*args, env=env, check=check)


@pytest.fixture
def demo(tmp_path, demo_template):
    return demo_template.copy_to(tmp_path)


@pytest.fixture
def fake(monkeypatch):
    server = FakeServer("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", server.api_key)
    yield server
    server.close()


def test_compare_picks_the_closer_configuration(demo):
    res = json.loads(h2h("calibrate", "--db", str(demo), "--configs",
                         "sim-judge-plain,sim-judge-anchored", "--bootstrap", "300", "--json"
                         ).stdout)
    assert set(res) == {"empathy", "safety", "fluency", "memory_fidelity", "plan_quality"}
    for r in res.values():
        assert r["verdict"]["best"] == "sim-judge-anchored"
        q = next(p for p in r["pairs"] if p["metric"] == "qwk")
        assert q["p_holm"] is not None and q["p_holm"] >= q["p"]
    safety = next(p for p in res["safety"]["pairs"] if p["metric"] == "qwk")
    sign = 1 if safety["a"] == "sim-judge-anchored" else -1
    assert sign * safety["low"] > 0  # the paired CI excludes zero


def test_run_on_a_seeded_sample_with_cost_estimate(demo, fake):
    env = {"ANTHROPIC_API_KEY": fake.api_key}
    h2h("judge", "run", "--db", str(demo), "--provider", "anthropic", "--model", "fake-a",
        "--name", "fake-a", "--items", "dlg-001-aster,dlg-001-birch", "--base-url", fake.url,
        "--quiet", env=env)
    first = len(fake.calls())
    refused = h2h("calibrate", "--db", str(demo), "--configs", "fake-a", "--run", "--sample",
                  "12", "--seed", "3", "--base-url", fake.url, env=env, check=False)
    assert refused.returncode == 1 and "pass --yes" in refused.stderr
    assert len(fake.calls()) == first  # nothing was sent without the go-ahead
    proc = h2h("calibrate", "--db", str(demo), "--configs", "fake-a,sim-judge-anchored",
               "--run", "--yes", "--sample", "12", "--seed", "3", "--base-url", fake.url,
               "--bootstrap", "200", env=env)
    assert "Calibration set: 12 human-rated items (seeded sample, seed 3)" in proc.stdout
    assert "fake-a:" in proc.stdout and "best configuration" in proc.stdout
    # the run is summarised as `h2h judge run` does, not as a raw statistics object
    assert "RunStats(" not in proc.stdout
    assert re.search(r"fake-a: Done in [\d.]+ s: \d+ calls", proc.stdout), proc.stdout
    engine = get_engine(demo)
    items = set(cal.calibration_items(engine, 12, 3)) | {"dlg-001-aster", "dlg-001-birch"}
    n_dims = {"dialogue": 3, "recollection": 4, "itinerary": 4}
    pairs = sum(n_dims[cal.item_of(engine, i).task] for i in items)
    asked = [(json.dumps(c.body["messages"]), c.dims) for c in fake.calls("judge")]
    assert len(asked) == len(set(asked)) == pairs  # each (item, dimension) asked once
    assert cal.judgments_stored(engine, "fake-a") == pairs
    again = h2h("calibrate", "--db", str(demo), "--configs", "fake-a", "--run", "--yes",
                "--sample", "12", "--seed", "3", "--base-url", fake.url, env=env)
    assert "nothing to run" in again.stdout and len(fake.calls("judge")) == pairs


def test_new_prompt_version_runs_on_the_calibration_set(demo, fake, tmp_path):
    env_engine = get_engine(demo)
    h2h("judge", "run", "--db", str(demo), "--provider", "anthropic", "--model", "fake-a",
        "--name", "fake-a", "--items", "dlg-001-aster", "--base-url", fake.url, "--quiet",
        env={"ANTHROPIC_API_KEY": fake.api_key})
    base, tmpl = cal.template_of(env_engine, "fake-a")
    path = cal.write_template(tmp_path / "prompts", "fake-a-v2", "stricter",
                              tmpl["system"] + "\nBe strict about safety.", tmpl["user"],
                              tmpl.get("user_all", ""))
    items = cal.calibration_items(env_engine, 5, 1)
    proc = cal.start_prompt_version(env_engine, base, "fake-a-v2", path, items,
                                    tmp_path / "run.log", fake.url)
    assert proc.wait(timeout=120) == 0, (tmp_path / "run.log").read_text()
    n_dims = {"dialogue": 3, "recollection": 4, "itinerary": 4}
    expected = sum(n_dims[cal.item_of(env_engine, i).task] for i in items)
    assert cal.judgments_stored(env_engine, "fake-a-v2") == expected
    new_row, new_t = cal.template_of(env_engine, "fake-a-v2")
    assert new_row.hash != base.hash and "Be strict about safety." in new_t["system"]
    assert any("Be strict about safety." in c.system for c in fake.calls("judge"))


def test_rubric_language_variant_beside_the_configuration(demo, fake, tmp_path):
    """`h2h calibrate --rubric-language item`: each configuration is compared beside its
    variant that shows the rubric in each item's language (a configuration of its own); a
    new prompt version from the Calibration page keeps the setting."""
    from data.language import item_language

    env = {"ANTHROPIC_API_KEY": fake.api_key}
    db = str(demo)
    h2h("judge", "run", "--db", db, "--provider", "anthropic", "--model", "fake-a", "--name",
        "fake-a", "--items", "dlg-001-aster", "--base-url", fake.url, "--quiet", env=env)
    absent = h2h("calibrate", "--db", db, "--configs", "fake-a", "--rubric-language", "item",
                 env=env, check=False)
    assert absent.returncode == 1 and "fake-a-rubric-item has not been judged yet; add " \
        "--run" in absent.stderr
    sample = ("--sample", "8", "--seed", "3", "--base-url", fake.url, "--bootstrap", "100")
    h2h("calibrate", "--db", db, "--configs", "fake-a", "--run", "--yes", *sample, env=env)
    before = len(fake.calls("judge"))  # from here on, only the variant is asked
    proc = h2h("calibrate", "--db", db, "--configs", "fake-a", "--rubric-language", "item",
               "--run", "--yes", *sample, env=env)
    assert "fake-a-rubric-item" in proc.stdout.split("Calibration set")[-1]  # compared
    assert re.search(r"fake-a-rubric-item: Done in [\d.]+ s", proc.stdout), proc.stdout
    engine = get_engine(demo)
    items = cal.calibration_items(engine, 8, 3)
    langs = {i: item_language(cal.item_of(engine, i).context, cal.item_of(engine, i).response)
             for i in items}
    assert sorted(langs.values()).count("zh") == 2  # the sample has both languages
    variant = cal.template_of(engine, "fake-a-rubric-item")[0]
    assert variant.rubric_language == "item" and variant.hash != cal.template_of(
        engine, "fake-a")[0].hash
    sent = [json.dumps(c.body, ensure_ascii=False) for c in fake.calls("judge")[before:]]
    for item_id, lang in langs.items():
        first_turn = cal.item_of(engine, item_id).context["turns"][0]["text"]
        mine = [t for t in sent if json.dumps(first_turn, ensure_ascii=False)[1:-1] in t]
        assert mine, item_id
        for t in mine:  # every prompt about the item in its language, and only there
            assert ("锚定" in t or "共情" in t or "安全性" in t) == (lang == "zh"), item_id
    # the Calibration page: a new prompt version of the variant shows the rubric the same way
    base, tmpl = cal.template_of(engine, "fake-a-rubric-item")
    path = cal.write_template(tmp_path / "prompts", "item-v2", "", tmpl["system"] + "\nBe "
                              "strict.", tmpl["user"], tmpl.get("user_all", ""))
    zh_item = next(i for i, lang in langs.items() if lang == "zh")
    run = cal.start_prompt_version(engine, base, "item-v2", path, [zh_item],
                                   tmp_path / "run.log", fake.url)
    assert run.wait(timeout=120) == 0, (tmp_path / "run.log").read_text()
    assert cal.template_of(engine, "item-v2")[0].rubric_language == "item"
    last = fake.calls("judge")[-1]
    assert "Be strict." in last.system and "按下**保存并继续**的那一刻" in last.system


def test_simulated_configurations_cannot_be_run(demo, tmp_path):
    base, tmpl = cal.template_of(get_engine(demo), "sim-judge-plain")
    path = cal.write_template(tmp_path, "x", "", tmpl["system"], tmpl["user"], "")
    with pytest.raises(Exception, match="simulated configuration and cannot be run"):
        cal.start_prompt_version(get_engine(demo), base, "x", path, ["a"], tmp_path / "l")


def _unscore(db, config: str, dimension: str) -> None:
    """Make every judgment of a configuration on a dimension unscored (as a failed run)."""
    import sqlalchemy as sa

    with get_engine(db).begin() as c:
        c.execute(sa.text("UPDATE judgment SET score = NULL, outcome = 'unparseable', "
                          "unscored_reason = 'test' WHERE dimension = :d AND config_hash = "
                          "(SELECT hash FROM judge_config WHERE name = :n)"),
                  {"d": dimension, "n": config})


def test_a_configuration_without_scored_judgments_on_a_dimension(demo):
    # today: ValueError: cannot reshape array of size 0 (analysis/alpha.py via judge_metrics)
    _unscore(demo, "sim-judge-plain", "safety")
    both = json.loads(h2h("calibrate", "--db", str(demo), "--configs",
                          "sim-judge-plain,sim-judge-anchored", "--bootstrap", "200",
                          "--json").stdout)
    plain = both["safety"]["configs"]["sim-judge-plain"]
    assert plain["status"] == "no scored judgments" and plain["qwk"]["value"] is None
    assert plain["alpha_with_judge"]["value"] is None
    assert plain["verdict"]["outcome"] == "not_estimable"
    assert plain["n_unscored"] == plain["n_judgments"] == 147
    # the other configuration keeps all its items on that dimension
    anchored = both["safety"]["configs"]["sim-judge-anchored"]
    assert anchored["n_items"] == 147 and anchored["verdict"]["outcome"] != "not_estimable"
    assert both["safety"]["verdict"]["best"] == "sim-judge-anchored"
    alone = h2h("calibrate", "--db", str(demo), "--configs", "sim-judge-plain",
                "--bootstrap", "200")
    assert "no scored judgments" in alone.stdout and "no verdict" in alone.stdout
    assert "Traceback" not in alone.stderr
    analysis = json.loads(h2h("analyze", "--db", str(demo), "--bootstrap", "100",
                              "--json").stdout)
    m = analysis["judges"]["sim-judge-plain"]["safety"]
    assert m["status"] == "no scored judgments" and m["alpha_with_judge"] is None


def test_verdicts_show_the_ceiling_with_its_ci(demo):
    proc = h2h("calibrate", "--db", str(demo), "--configs", "sim-judge-anchored",
               "--bootstrap", "200", "--margin", "0.1")
    out = proc.stdout
    assert "margin 0.1" in out and "human ceiling" in out
    assert "judge − ceiling [95% CI]" in out
    assert "against the margin −0.1" in out
    res = json.loads(h2h("calibrate", "--db", str(demo), "--configs", "sim-judge-anchored",
                         "--bootstrap", "200", "--json").stdout)
    for r in res.values():
        hc = r["human_ceiling"]["qwk"]
        assert hc["low"] < hc["value"] < hc["high"]
        assert r["configs"]["sim-judge-anchored"]["verdict"]["outcome"] in (
            "can_replace", "cannot_replace", "not_enough_evidence")


def test_bootstrap_zero_compares_point_estimates_without_verdicts(demo):
    res = json.loads(h2h("calibrate", "--db", str(demo), "--configs",
                         "sim-judge-plain,sim-judge-anchored", "--bootstrap", "0",
                         "--json").stdout)
    for r in res.values():
        assert r["pairs"] == [] and r["verdict"]["outcome"] == "not_estimable"
        for c in r["configs"].values():
            assert c["qwk"]["value"] is not None and c["qwk"]["low"] is None
