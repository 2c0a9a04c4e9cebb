"""What a metric configuration is: the metric, the library and its version, the tokenizer per
language and the settings, named by a hash - the metric's counterpart of a judge
configuration.

Language is decided per item from the share of Chinese characters (:func:`language`): the
H2HTalk benchmark's references are Chinese, its users' studies may be English, Chinese or
mixed, and overlap metrics need Chinese text cut into characters or words first.

Examples
--------
>>> round(cjk_share("我今天去 Starbucks 买了咖啡"), 3)
0.889
>>> language("I met 小明 today", "See you at five")
('en', 0.4)
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Literal, Protocol

__all__ = ["Lang", "LANGS", "ZH_THRESHOLD", "cjk_share", "language", "MetricSpec", "Scorer",
           "ScoredText", "package_version"]

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")
ZH_THRESHOLD = 0.5

# CJK Unified Ideographs, extension A and the compatibility block: the Han characters that
# sacrebleu's "zh" tokenizer also splits one by one.
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_OTHER_WORD = re.compile(r"[^\W\d_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def cjk_share(text: str) -> float:
    """Han characters / (Han characters + words in other scripts).

    A Han character is counted like a word because Chinese writes a word in one or two
    characters; counting Latin *letters* instead would call "我今天去 Starbucks 买了咖啡"
    English. Digits and punctuation are not counted; a text with neither is 0.
    """
    han = len(_HAN.findall(text))
    other = len(_OTHER_WORD.findall(text))
    return han / (han + other) if han + other else 0.0


def language(response: str, reference: str) -> tuple[Lang, float]:
    """The language a response and its reference are treated as, and the CJK share it rests
    on: the larger share of the two texts, "zh" from :data:`ZH_THRESHOLD` on.

    The larger share is used because Chinese tokenization also handles Latin words, while
    English tokenization turns a Chinese sentence into one token: when either text is Chinese,
    the Chinese path is the safe one.
    """
    share = max(cjk_share(response), cjk_share(reference))
    return ("zh" if share >= ZH_THRESHOLD else "en"), round(share, 4)


def package_version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


@dataclass(frozen=True)
class MetricSpec:
    """A metric configuration. ``hash`` covers the metric, the library and its version, the
    tokenizer and the settings; ``name`` (what tables and figures show) is not part of it."""

    name: str
    metric: str
    library: str
    library_version: str
    tokenizer: dict[str, str]
    settings: dict = field(default_factory=dict)
    signature: str = ""
    scale: str = ""

    @property
    def hash(self) -> str:
        payload = {"metric": self.metric, "library": self.library,
                   "library_version": self.library_version, "tokenizer": self.tokenizer,
                   "settings": self.settings}
        canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False,
                               separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]

    def describe(self) -> str:
        """One line for the terminal and the report: library, settings, tokenization."""
        tok = "; ".join(f"{'English' if k == 'en' else 'Chinese'}: {v}"
                        for k, v in self.tokenizer.items())
        sets = ", ".join(f"{k} {v}" for k, v in self.settings.items())
        head = f"{self.library} {self.library_version}"
        if self.metric == "embedding" and self.signature:
            head += f", {self.signature}"
        return f"{head}; {sets}; tokenization — {tok}"


@dataclass(frozen=True)
class ScoredText:
    """One item's score (None when it cannot be scored, with the reason)."""

    score: float | None
    lang: Lang
    cjk_share: float
    reason: str | None = None


class Scorer(Protocol):
    """A configured metric: its spec, and scores for (response, reference) pairs."""

    spec: MetricSpec

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[ScoredText]: ...
