"""Which language a text is in, from its share of Chinese characters (pure: stdlib only).

A judge run with ``--rubric-language item`` renders each item's rubric text in the item's
language: Chinese when Han characters make up at least half of its conversation and reply
(:data:`ZH_THRESHOLD`), counted as :func:`cjk_share` does, else English.

The reference-based metrics (``analysis.refmetrics.spec``) decide a text's tokenizer by the
same count and threshold. The statistics core imports nothing of ours, so it keeps its own
copy; ``tests/data/test_text_language.py`` holds the two to the same results.

Examples
--------
>>> round(cjk_share("我今天去 Starbucks 买了咖啡"), 3)
0.889
>>> item_language({"turns": [{"role": "user", "text": "我今天很累"}]}, "辛苦了，早点休息。")
'zh'
>>> item_language({"turns": [{"role": "user", "text": "I met 小明 today"}]}, "Nice!")
'en'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["Lang", "ZH_THRESHOLD", "cjk_share", "text_language", "item_language"]

Lang = Literal["en", "zh"]
ZH_THRESHOLD = 0.5

# CJK Unified Ideographs, extension A and the compatibility block
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_OTHER_WORD = re.compile(r"[^\W\d_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def cjk_share(text: str) -> float:
    """Han characters / (Han characters + words in other scripts); 0 for a text with
    neither (digits and punctuation do not count).

    A Han character counts like a word, because Chinese writes a word in one or two
    characters: counting Latin letters instead would call "我今天去 Starbucks 买了咖啡"
    English."""
    han = len(_HAN.findall(text))
    other = len(_OTHER_WORD.findall(text))
    return han / (han + other) if han + other else 0.0


def text_language(text: str) -> Lang:
    """``"zh"`` from :data:`ZH_THRESHOLD` on, else ``"en"``."""
    return "zh" if cjk_share(text) >= ZH_THRESHOLD else "en"


def item_language(context: Mapping[str, Any] | None, response: str) -> Lang:
    """The language of an item: of its conversation's turns and the reply to rate, together
    (persona, memories and schedule are the study's setting, often written by the team in
    another language than the conversation)."""
    turns = (context or {}).get("turns") or []
    text = "\n".join(str(t.get("text", "")) for t in turns if isinstance(t, Mapping))
    return text_language(f"{text}\n{response}")
