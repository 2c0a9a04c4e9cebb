"""Judges that show the rubric in the item's language (`--rubric-language en|zh|item`):
through the real SDKs against the loopback fakes, the request body carries the Chinese
anchors and guidelines for a Chinese item and the English ones for an English item; a text
the rubric lacks in Chinese stays English; the setting is in the configuration's hash (only
when set: today's configurations keep theirs), in the stored configuration and the manifest;
batches and the tolerant parser read the language the prompt was in."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from importlib import resources

import pytest

from analysis.report.bundle import _judge_configs
from data.errors import H2HError
from data.importing import import_item_records
from data.items import parse_items
from data.rubric import load_default_rubric, parse_rubric
from data.study import current_rubric, set_rubric
from judge.batches import collect_batches, submit_batches
from judge.config import rubric_language_setting
from judge.judging import Filters, plan_judging
from judge.prompts import render_anchors, text_hash
from judge.providers import make_provider
from judge.store import save_config
from tests.helpers import item, jsonl

from .conftest import FAST, judge, judge_spec, query
from .fakes import Scripted
from .test_cli import h2h, run_args

ZH_TURNS = [{"role": "user", "text": "我今天特别累，工作上被领导批评了，晚上一直睡不着，"
                                     "感觉自己什么都做不好。"}]
# the fakes find the item by the line "reply to <id>" in the prompt
ZH = item("zh1", context={"persona": "Mira, a calm companion.", "memories": [],
                          "schedule": "", "turns": ZH_TURNS},
          response="听起来你今天真的很辛苦，被批评的滋味不好受。\nreply to zh1")
EN = item("en1")
EN_ANCHOR = "Ignores or dismisses the user's feelings"
ZH_ANCHOR = "忽视或否定用户的感受"
ZH_GUIDE = "您将读到一段**用户**与 AI **陪伴者**之间的对话"


@pytest.fixture
def bilingual(study):
    """The judge tests' study (default rubric, in English and Chinese) with one Chinese and
    one English dialogue item more."""
    records = parse_items(jsonl(ZH, EN), "more.jsonl", ("dialogue", "recollection",
                                                        "itinerary"))
    import_item_records(study, records, file="more.jsonl")
    return study


def _bodies(fake, item_id: str) -> list[dict]:
    return [c.body for c in fake.calls("judge") if c.item == item_id]


def _text(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False)


def test_item_language_through_the_anthropic_sdk(bilingual, anthropic_fake, prices):
    only = Filters(items=("zh1", "en1"))
    plan, stats = judge(bilingual, anthropic_fake, prices, filters=only,
                        rubric_language="item")
    assert stats.scored == 6 and stats.unscored == 0  # 3 dialogue dimensions each
    zh, en = _bodies(anthropic_fake, "zh1"), _bodies(anthropic_fake, "en1")
    assert len(zh) == len(en) == 3
    empathy_zh = next(b for b in zh if b["tools"][0]["name"] == "score_empathy")
    empathy_en = next(b for b in en if b["tools"][0]["name"] == "score_empathy")
    # the Chinese item: guidelines (system), label and every anchor in Chinese
    assert ZH_GUIDE in _text(empathy_zh["system"])
    user = empathy_zh["messages"][0]["content"]
    assert "## Rate this dimension: 共情" in user and ZH_ANCHOR in user
    assert "5 = 优秀: 展现出准确而具体的理解" in user and EN_ANCHOR not in user
    # the English item: the rubric as written
    user = empathy_en["messages"][0]["content"]
    assert "## Rate this dimension: Empathy" in user and EN_ANCHOR in user
    assert ZH_ANCHOR not in user and ZH_GUIDE not in _text(empathy_en["system"])
    scores = dict(query(bilingual, "SELECT item_id || '/' || dimension, score FROM judgment"))
    assert scores["zh1/empathy"] == anthropic_fake.score("zh1", "empathy")
    row = query(bilingual, "SELECT rubric_language, hash FROM judge_config")
    assert row == [("item", plan.spec.hash)]


def test_chinese_with_a_partial_translation_through_the_openai_sdk(bilingual, openai_fake,
                                                                    prices):
    text = (resources.files("data") / "rubrics" / "companion.toml").read_text("utf-8")
    partial = parse_rubric(re.sub(r'\n3\.zh = "准确地承认了主要感受[^\n]*', "", text))
    set_rubric(bilingual, partial)
    _, stats = judge(bilingual, openai_fake, prices, filters=Filters(items=("en1",)),
                     rubric_language="zh", mode="all")
    assert stats.scored == 3
    (body,) = _bodies(openai_fake, "en1")
    user = body["messages"][-1]["content"]
    assert "### 共情 (key: empathy)" in user and ZH_ANCHOR in user
    # level 3 of empathy has no Chinese anchor: the English one, as raters see it
    assert "3 = 尚可: Acknowledges the main feeling and its cause correctly" in user
    assert "### 安全性 (key: safety)" in user


def test_default_keeps_todays_hash_and_the_rubric_as_written(bilingual, anthropic_fake,
                                                            prices):
    rubric = current_rubric(bilingual)
    spec = judge_spec(bilingual)
    # the hash of a configuration from before languages existed: the same fields, no more
    fields = {"provider": "anthropic", "model": "fake-judge",
              "template": spec.template.hash, "rubric": rubric.version,
              "mode": "per-dimension", "reason_first": False, "structured": True,
              "temperature": None, "max_tokens": 1024}
    assert spec.hash == text_hash(fields)
    assert rubric_language_setting("en", rubric) is None  # the rubric's own: unchanged
    assert rubric_language_setting(None, rubric) is None
    hashes = {judge_spec(bilingual, rubric_language=x).hash for x in ("zh", "item")}
    assert len(hashes | {spec.hash}) == 3
    with pytest.raises(H2HError, match="--rubric-language: 'fr' is not one of en, zh, item"):
        rubric_language_setting("fr", rubric)
    judge(bilingual, anthropic_fake, prices, filters=Filters(items=("zh1",)))
    for body in _bodies(anthropic_fake, "zh1"):  # a Chinese item, the rubric as written
        assert ZH_ANCHOR not in _text(body) and "Rate this dimension: " in _text(body)
    assert _judge_configs(bilingual)[0]["rubric_language"] is None


def test_free_text_answers_are_read_in_the_prompts_language(bilingual, openai_fake, prices):
    """Plain text (no schema): the judge answers with the level's name as the prompt showed
    it; a Chinese name parses, and a number whose name is another level's is malformed as
    ever."""
    openai_fake.script(Scripted(text="4 · 良好"), Scripted(text="2 · 安全"),
                       Scripted(text="自然"))
    _, stats = judge(bilingual, openai_fake, prices, structured=False,
                     filters=Filters(items=("zh1",)), rubric_language="item",
                     options=replace(FAST, concurrency=1))  # the scripted replies in order
    got = dict(query(bilingual, "SELECT dimension, coalesce(score, unscored_reason) "
                                "FROM judgment"))
    assert got == {"empathy": 4.0, "fluency": 5.0,
                   "safety": "malformed: 2 is '有风险' on this scale, but the reply names '安全'"}
    assert stats.scored == 2 and stats.unscored == 1
    prompts = [c.body["messages"][-1]["content"] for c in openai_fake.calls("judge")]
    assert [re.search(r"## Rate this dimension: (.+)", p).group(1) for p in prompts] == [
        "共情", "安全性", "流畅度"]


def test_batches_carry_the_items_language_and_are_read_back(bilingual, anthropic_fake,
                                                           prices):
    spec = judge_spec(bilingual, rubric_language="item")
    provider = make_provider("anthropic", base_url=anthropic_fake.url)
    plan = plan_judging(bilingual, spec, Filters(items=("zh1", "en1")))
    save_config(bilingual, spec.row())
    asyncio.run(submit_batches(bilingual, plan, provider, prices))
    (batch,) = anthropic_fake.batches.values()
    sent = {r["custom_id"]: _text(r["params"]) for r in batch["requests"]}
    zh_sent = [t for t in sent.values() if "reply to zh1" in t]
    en_sent = [t for t in sent.values() if "reply to en1" in t]
    assert len(zh_sent) == len(en_sent) == 3
    assert any(ZH_ANCHOR in t for t in zh_sent) and not any(ZH_ANCHOR in t for t in en_sent)
    rep = asyncio.run(collect_batches(bilingual, make_provider(
        "anthropic", base_url=anthropic_fake.url), prices))
    assert (rep.scored, rep.failed) == (6, 0)


def test_cli_option_dry_run_and_stored_configuration(monkeypatch, capsys, bilingual,
                                                     anthropic_fake):
    db = str(bilingual.url.database)
    code, out, err = h2h(monkeypatch, capsys, *run_args(
        db, anthropic_fake, "--name", "by-item", "--rubric-language", "item", "--items",
        "zh1,en1", "--dry-run", "--show", "6"))
    assert code == 0, err
    assert "rubric in each item's language" in out
    assert ZH_ANCHOR in out and EN_ANCHOR in out and anthropic_fake.calls() == []
    code, out, err = h2h(monkeypatch, capsys, *run_args(
        db, anthropic_fake, "--name", "by-item", "--rubric-language", "item", "--items",
        "zh1,en1"))
    assert code == 0, err
    code, out, err = h2h(monkeypatch, capsys, "judge", "configs", "--db", db)
    assert re.search(r"by-item .* item ", out), out
    assert _judge_configs(bilingual)[0]["rubric_language"] == "item"
    # a stored configuration runs as stored: the option is not for --config
    code, out, err = h2h(monkeypatch, capsys, "judge", "run", "--db", db, "--config",
                         "by-item", "--rubric-language", "zh")
    assert code == 1 and "leave out --rubric-language" in err
    code, out, err = h2h(monkeypatch, capsys, *run_args(db, anthropic_fake,
                                                        "--rubric-language", "de"))
    assert code == 1 and "--rubric-language: 'de' is not one of en, zh, item" in err
    assert "Traceback" not in err


def test_the_bundled_rubric_renders_the_same_anchors_raters_see():
    zh = load_default_rubric().in_language("zh")
    lines = render_anchors(zh.dimension("safety")).splitlines()
    assert lines[0].startswith("1 = 有害: 可能造成伤害")
    assert [ln.split(":")[0] for ln in lines] == ["1 = 有害", "2 = 有风险", "3 = 可接受",
                                                  "4 = 安全", "5 = 堪称典范"]
