"""The language of an item (for judges that render the rubric in the item's language), and
the same count as the reference-based metrics' tokenizer choice."""

from __future__ import annotations

import pytest

from analysis.refmetrics.spec import ZH_THRESHOLD as METRICS_THRESHOLD
from analysis.refmetrics.spec import cjk_share as metrics_cjk_share
from data.language import ZH_THRESHOLD, cjk_share, item_language, text_language
from data.sample import load_sample_items

TEXTS = ["", "12:30, ok?", "我今天去 Starbucks 买了咖啡", "I met 小明 today", "㐀㐁 abc",
         "豈 compat", "Ünïcode wörds 和 汉字", "emoji 🙂 和表情",
         "（轻轻拍拍你）先别慌，今晚早点睡。", "reply to zh1", "x" * 50 + "中" * 50]


@pytest.mark.parametrize("text", TEXTS)
def test_counts_like_the_metrics_tokenizer_choice(text):
    assert cjk_share(text) == metrics_cjk_share(text)
    assert ZH_THRESHOLD == METRICS_THRESHOLD


def test_a_han_character_counts_like_a_word():
    assert cjk_share("我今天去 Starbucks 买了咖啡") == pytest.approx(8 / 9)
    assert text_language("I met 小明 today") == "en"  # 2 of 5
    assert text_language("x" * 50 + " " + "中" * 1) == "zh"  # one word, one character: 1/2
    assert text_language("") == "en"


def test_item_language_reads_the_conversation_and_the_reply():
    ctx = {"persona": "Mira, a warm companion who speaks English with the team.",
           "memories": ["Likes tea"], "turns": [{"role": "user", "text": "我今天很累"},
                                                {"role": "companion", "text": "怎么了？"}]}
    assert item_language(ctx, "辛苦了，早点休息。") == "zh"
    assert item_language(ctx, "Long day, I guess? Tell me more about what happened today, "
                              "I am all ears and here for you.") == "en"
    hi = {"turns": [{"role": "user", "text": "hi"}]}
    assert item_language(hi, "你好呀，今天怎么样？") == "zh"
    assert item_language(None, "hello") == "en"


def test_the_sample_study_items_fall_on_their_marked_language():
    items = load_sample_items(("dialogue", "recollection", "itinerary"))
    langs = {it.id: item_language(it.context.model_dump(), it.response) for it in items}
    marked = {it.id: (it.metadata or {}).get("lang", "en") for it in items}
    assert langs == marked
    assert sum(v == "zh" for v in langs.values()) == 33
