"""`h2h generate`: companion responses with and without the Secure Attachment Persona."""

from __future__ import annotations

import json

import pytest

from data.errors import FormatError, H2HError
from judge.generate import GenSpec, build_generation_request, plan_generation, run_generation
from judge.prompts import load_generation_templates, load_sap
from judge.providers import make_provider
from judge.scenarios import Scenario, read_scenarios, study_scenarios

from .conftest import FAST, query
from .fakes import SAP_MARK, Scripted

TASKS = ("dialogue", "recollection", "itinerary")


def gen_spec(model: str = "fake-gen", **kw) -> GenSpec:
    return GenSpec("anthropic", model, load_generation_templates(), load_sap(), **kw)


def generate(engine, fake, prices, specs, scenarios=None, conditions=("sap", "baseline")):
    plan = plan_generation(engine, specs, scenarios or study_scenarios(engine), conditions)
    provider = make_provider(fake.kind, base_url=fake.url)
    return plan, run_generation(engine, plan, provider, prices=prices, options=FAST)


def test_responses_become_items_with_model_and_condition(study, anthropic_fake, prices):
    plan, stats = generate(study, anthropic_fake, prices, [gen_spec(), gen_spec("other-gen")])
    assert stats.scored == 16 and len(plan.units) == 16  # 4 scenarios x 2 models x 2
    items = query(study, "SELECT id, task, scenario, model, condition, response FROM item "
                         "WHERE id LIKE '%-gen-%' ORDER BY id")
    assert len(items) == 16
    assert ("d1-fake-gen-sap", "dialogue", "d1", "fake-gen", "sap",
            "[fake-gen|sap] I hear you.") in items
    assert ("i1-other-gen-baseline", "itinerary", "i1", "other-gen", "baseline",
            "[other-gen|baseline] I hear you.") in items
    meta = json.loads(query(study, "SELECT metadata FROM item WHERE id='d1-fake-gen-sap'")[0][0])
    assert meta["generated"]["model"] == "fake-gen"
    # each generated item carries its scenario's context, so it can be rated and judged
    ctx = query(study, "SELECT context FROM item WHERE id IN ('d1', 'd1-fake-gen-sap')")
    assert ctx[0] == ctx[1]


def test_the_sap_text_is_in_the_system_prompt_of_exactly_the_sap_requests(study,
                                                                          anthropic_fake,
                                                                          prices):
    generate(study, anthropic_fake, prices, [gen_spec()])
    sap = load_sap()
    calls = anthropic_fake.calls("generate")
    assert len(calls) == 8
    by_item = {r[0]: r[1] for r in query(study, "SELECT id, condition FROM item")}
    for c in calls:
        cond = "sap" if SAP_MARK in c.system else "baseline"
        assert (sap in c.system) == (cond == "sap")
        assert not any(sap in m["content"] for m in c.body["messages"])
    assert sum(SAP_MARK in c.system for c in calls) == 4
    assert sorted(v for k, v in by_item.items() if "fake-gen" in k) == ["baseline"] * 4 + \
        ["sap"] * 4
    # the family's template: the recollection prompt asks to use the memories
    rec = [c for c in calls if "remember" in c.system and "most recent fact" in c.system]
    assert len(rec) == 2


def test_generation_resumes_and_never_asks_twice(study, anthropic_fake, prices):
    anthropic_fake.script(*[Scripted(503)] * 4, when=lambda r: "hello from r1" in
                          json.dumps(r.body) and SAP_MARK not in r.system)
    _, stats = generate(study, anthropic_fake, prices, [gen_spec()])
    assert stats.scored == 7 and stats.request_failed == 1
    n = len(anthropic_fake.calls("generate"))
    plan, stats = generate(study, anthropic_fake, prices, [gen_spec()])
    assert [u.item_id for u in plan.units] == ["r1-fake-gen-baseline"] and stats.scored == 1
    assert len(anthropic_fake.calls("generate")) == n + 1
    plan, _ = generate(study, anthropic_fake, prices, [gen_spec()])
    assert plan.units == [] and plan.done == 8
    assert len(anthropic_fake.calls("generate")) == n + 1


def test_turns_become_alternating_messages(study, anthropic_fake, prices):
    sc = Scenario("s9", "dialogue", {"persona": "Kai", "memories": [], "turns": [
        {"role": "companion", "text": "Morning! How did you sleep?"},
        {"role": "user", "text": "Badly."}, {"role": "user", "text": "Again."},
        {"role": "companion", "text": "That sounds hard."}]}, {})
    req = build_generation_request(gen_spec(), sc, "baseline")
    assert [(m.role, m.text) for m in req.messages] == [
        ("user", "(The conversation starts.)"),
        ("assistant", "Morning! How did you sleep?"), ("user", "Badly.\n\nAgain."),
        ("assistant", "That sounds hard."),
        ("user", "(The user has not written anything new yet. Write your next message.)")]
    assert "Kai" in req.system and SAP_MARK not in req.system


def test_empty_replies_are_recorded_not_turned_into_items(study, anthropic_fake, prices):
    anthropic_fake.script(Scripted(text="   "))
    _, stats = generate(study, anthropic_fake, prices, [gen_spec()], conditions=("sap",))
    assert stats.unscored == 1 and stats.scored == 3
    rows = query(study, "SELECT outcome, item_id, reason FROM generation WHERE "
                        "outcome != 'generated'")
    assert rows == [("invalid_reply", None, "empty: the model returned no text")]


def test_an_existing_item_id_is_never_overwritten(study, anthropic_fake, prices):
    generate(study, anthropic_fake, prices, [gen_spec()])
    with pytest.raises(H2HError, match="'d1-fake-gen-sap' already exists and was not generated "
                                       "by this generator"):
        plan_generation(study, [gen_spec(temperature=1.0)], study_scenarios(study))
    plan = plan_generation(study, [gen_spec(temperature=1.0, name="fake-gen-hot")],
                           study_scenarios(study))
    assert plan.units[0].item_id == "d1-fake-gen-hot-sap"


def test_scenario_files_are_validated_whole(study, tmp_path):
    p = tmp_path / "scen.jsonl"
    good = {"id": "n1", "task": "dialogue", "context": {"turns": [{"role": "user",
                                                                   "text": "嗨"}]}}
    p.write_text(json.dumps(good, ensure_ascii=False) + "\n"
                 + json.dumps({**good, "id": "n2", "task": "poetry"}) + "\n"
                 + json.dumps({**good, "id": "n1"}) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as exc:
        read_scenarios(p, TASKS)
    msg = str(exc.value)
    assert "scen.jsonl:2: field 'task': unknown task 'poetry'" in msg
    assert "scen.jsonl:3: field 'id': duplicate scenario id 'n1'" in msg
    p.write_text(json.dumps(good, ensure_ascii=False) + "\n", encoding="utf-8")
    assert read_scenarios(p, TASKS)[0].context["turns"][0]["text"] == "嗨"


def test_openai_compatible_generation(study, openai_fake, prices):
    spec = GenSpec("openai", "llama3.1:8b", load_generation_templates(), load_sap())
    plan, stats = generate(study, openai_fake, prices, [spec], conditions=("baseline",))
    assert stats.scored == 4
    assert query(study, "SELECT COUNT(*) FROM item WHERE model='llama3.1:8b'") == [(4,)]
    assert plan.units[0].item_id == "d1-llama3.1-8b-baseline"
    system = openai_fake.calls("generate")[0].body["messages"][0]
    assert system["role"] == "system" and SAP_MARK not in system["content"]


def test_h2htalk_protocol_asks_for_the_benchmark_format_and_records_it(study, anthropic_fake,
                                                                      prices):
    """--protocol h2htalk: the templates state the format and show the outfit; items get
    their own ids, and their metadata the protocol and whether the reply kept to it."""
    sc = Scenario("z1", "dialogue", {"persona": "小暖", "memories": ["喜欢散步"],
                                     "schedule": "19:00 晚饭", "outfit": "米色风衣和白球鞋",
                                     "turns": [{"role": "user", "text": "今天好累"}]}, {})
    long_zh = "（摸摸头）" + "今天真的辛苦了" * 5
    anthropic_fake.script(Scripted(text=long_zh), when=lambda r: "hello from d1" in
                          json.dumps(r.body))
    anthropic_fake.script(Scripted(text="（笑）这件风衣好配你，早点吃晚饭吧。"),
                          when=lambda r: "今天好累" in json.dumps(r.body, ensure_ascii=False))
    spec = GenSpec("anthropic", "fake-gen", load_generation_templates(protocol="h2htalk"),
                   load_sap(), protocol="h2htalk")
    scs = [sc] + [s for s in study_scenarios(study) if s.id == "d1"]
    plan, stats = generate(study, anthropic_fake, prices, [spec], scs, ("baseline",))
    assert stats.scored == 2
    assert sorted(u.item_id for u in plan.units) == ["d1-fake-gen-baseline-h2htalk",
                                                     "z1-fake-gen-baseline-h2htalk"]
    system = next(c.system for c in anthropic_fake.calls("generate")
                  if "米色风衣" in c.system)
    assert "at most 30 Chinese characters" in system and "in parentheses" in system
    assert "What the user is wearing today: 米色风衣和白球鞋" in system
    d1 = next(c.system for c in anthropic_fake.calls("generate") if "米色风衣" not in c.system)
    assert "What the user is wearing today: (none)" in d1
    meta = dict(query(study, "SELECT id, metadata FROM item WHERE id LIKE '%-h2htalk'"))
    z1 = json.loads(meta["z1-fake-gen-baseline-h2htalk"])["generated"]
    assert z1["protocol"] == "h2htalk"
    # 笑 + 这件风衣好配你 + 早点吃晚饭吧: 1 + 7 + 6 Chinese characters, punctuation not counted
    assert z1["h2htalk_check"] == {"lang": "zh", "length": 14, "unit": "Chinese characters",
                                   "limit": 30, "within_length": True, "has_action": True}
    d1m = json.loads(meta["d1-fake-gen-baseline-h2htalk"])["generated"]["h2htalk_check"]
    assert d1m["length"] == 38 and d1m["within_length"] is False  # 3 + 7 x 5 characters
    # the same model under the default protocol is another generator with its own items
    plan, _ = generate(study, anthropic_fake, prices, [gen_spec()], scs[1:], ("baseline",))
    assert [u.item_id for u in plan.units] == ["d1-fake-gen-baseline"]
    m = json.loads(query(study, "SELECT metadata FROM item WHERE id='d1-fake-gen-baseline'"
                         )[0][0])["generated"]
    assert m["protocol"] == "default" and "h2htalk_check" not in m


def test_default_generators_keep_their_hash():
    """Adding protocols must not rename the generators of existing studies: the default
    protocol's hash is the payload it always had."""
    from judge.prompts import text_hash

    spec = gen_spec()
    old = text_hash({"provider": "anthropic", "model": "fake-gen",
                     "templates": {k: t.system for k, t in sorted(spec.templates.items())},
                     "sap": text_hash(spec.sap), "temperature": None, "max_tokens": 1024})
    assert spec.hash == old
    h2 = GenSpec("anthropic", "fake-gen", load_generation_templates(protocol="h2htalk"),
                 load_sap(), protocol="h2htalk")
    assert h2.hash != old
    with pytest.raises(H2HError, match="--protocol"):
        load_generation_templates(protocol="benchmark")
