"""Overlap metrics of a response with its reference: sentence BLEU, chrF and ROUGE-L F1.

The libraries do the scoring; this module only chooses their settings per language and
records them:

* **BLEU** (Papineni et al. 2002) - ``sacrebleu``'s sentence BLEU, 0-100: the geometric mean of
  modified n-gram precisions (n = 1..4) times a brevity penalty. One sentence often has no
  matching 4-gram, so sentence BLEU needs smoothing: ``exp`` smoothing (Chen & Cherry 2014,
  method 3: the k-th n-gram order without a match counts 1 / 2^k) with the effective order
  (orders longer than the sentence are left out). Tokenizer ``13a`` for English, ``zh``
  (each Chinese character a token, other text as ``13a``) for Chinese.
* **chrF** (Popović 2015) - ``sacrebleu``'s character n-gram F-score, 0-100: character
  n-grams up to 6, whitespace removed, recall weighted twice as much as precision (beta 2).
  It needs no word segmentation, in any language.
* **ROUGE-L** (Lin 2004) - ``rouge-score``'s F1 of the longest common subsequence of tokens,
  0-1. Its tokenizer keeps only ``[a-z0-9]`` runs, which deletes Chinese text entirely, so
  Chinese is segmented first: by character (default) or into words with ``jieba``; Latin words
  and digits stay words. No stemming.

References
----------
Papineni, K., Roukos, S., Ward, T., & Zhu, W.-J. (2002). BLEU: a method for automatic
evaluation of machine translation. ACL.
Chen, B., & Cherry, C. (2014). A systematic comparison of smoothing techniques for
sentence-level BLEU. WMT.
Popović, M. (2015). chrF: character n-gram F-score for automatic MT evaluation. WMT.
Lin, C.-Y. (2004). ROUGE: a package for automatic evaluation of summaries. ACL Workshop.
Post, M. (2018). A call for clarity in reporting BLEU scores. WMT.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from .spec import MetricSpec, ScoredText, language, package_version

__all__ = ["Segmenter", "SEGMENTERS", "BleuScorer", "ChrfScorer", "RougeLScorer",
           "segment_chinese"]

Segmenter = Literal["char", "jieba"]
SEGMENTERS: tuple[Segmenter, ...] = ("char", "jieba")

_HAN_OR_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[a-z0-9]+")
_KEEP = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaffa-z0-9]")


def segment_chinese(text: str, segmenter: Segmenter) -> list[str]:
    """Lower-cased tokens of a (mostly) Chinese text for ROUGE: each Han character, or each
    ``jieba`` word, plus Latin words and numbers; punctuation and spaces are dropped, as the
    English tokenizer of ``rouge-score`` drops them.

    >>> segment_chinese("今天(笑) OK 吗？", "char")
    ['今', '天', '笑', 'ok', '吗']
    """
    text = text.lower()
    if segmenter == "char":
        return _HAN_OR_WORD.findall(text)
    import jieba

    return [w for w in (t.strip() for t in jieba.lcut(text)) if w and _KEEP.search(w)]


def _pairs_langs(pairs: Sequence[tuple[str, str]]):
    return [language(resp, ref) for resp, ref in pairs]


class BleuScorer:
    """Sentence BLEU (sacrebleu), per-language tokenizer; see the module."""

    def __init__(self, name: str = "bleu"):
        from sacrebleu.metrics import BLEU

        self._bleu = {"en": BLEU(tokenize="13a", smooth_method="exp", effective_order=True),
                      "zh": BLEU(tokenize="zh", smooth_method="exp", effective_order=True)}
        # sacrebleu builds its signature once a score exists: one score on a fixed pair
        sig = {}
        for lang, b in self._bleu.items():
            b.sentence_score("a b", ["a b"])
            sig[lang] = b.get_signature().format(short=True)
        self.spec = MetricSpec(
            name=name, metric="bleu", library="sacrebleu",
            library_version=package_version("sacrebleu"),
            tokenizer={"en": "13a", "zh": "zh (one token per Chinese character)"},
            settings={"level": "sentence", "max_ngram_order": 4, "smooth": "exp",
                      "effective_order": True, "lowercase": False},
            signature=f"English {sig['en']}; Chinese {sig['zh']}", scale="0-100")

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[ScoredText]:
        out = []
        for (resp, ref), (lang, share) in zip(pairs, _pairs_langs(pairs), strict=True):
            out.append(ScoredText(float(self._bleu[lang].sentence_score(resp, [ref]).score),
                                  lang, share))
        return out


class ChrfScorer:
    """Sentence chrF (sacrebleu): character 6-grams, beta 2; the same for every language."""

    def __init__(self, name: str = "chrf"):
        from sacrebleu.metrics import CHRF

        self._chrf = CHRF(char_order=6, word_order=0, beta=2)
        self._chrf.sentence_score("a b", ["a b"])
        tok = "none: character n-grams, whitespace removed"
        self.spec = MetricSpec(
            name=name, metric="chrf", library="sacrebleu",
            library_version=package_version("sacrebleu"), tokenizer={"en": tok, "zh": tok},
            settings={"level": "sentence", "char_order": 6, "word_order": 0, "beta": 2},
            signature=self._chrf.get_signature().format(short=True), scale="0-100")

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[ScoredText]:
        return [ScoredText(float(self._chrf.sentence_score(resp, [ref]).score), lang, share)
                for (resp, ref), (lang, share) in zip(pairs, _pairs_langs(pairs), strict=True)]


class _ChineseTokenizer:
    """A ``rouge_score`` tokenizer (it calls ``tokenize``) for Chinese text."""

    def __init__(self, segmenter: Segmenter):
        self.segmenter = segmenter

    def tokenize(self, text: str) -> list[str]:
        return segment_chinese(text, self.segmenter)


class RougeLScorer:
    """ROUGE-L F1 (rouge-score); Chinese segmented by character or with jieba first."""

    def __init__(self, name: str = "rougeL", segmenter: Segmenter = "char"):
        if segmenter not in SEGMENTERS:
            raise ValueError(f"segmenter must be one of {', '.join(SEGMENTERS)}; "
                             f"got {segmenter!r}")
        from rouge_score import rouge_scorer

        self._en = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
        self._zh = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_ChineseTokenizer(segmenter))
        zh = ("one token per Chinese character" if segmenter == "char" else
              f"jieba {package_version('jieba')} words (default dictionary, accurate mode)")
        self.spec = MetricSpec(
            name=name, metric="rougeL", library="rouge-score",
            library_version=package_version("rouge-score"),
            tokenizer={"en": "rouge-score default (lower-cased [a-z0-9] runs)",
                       "zh": zh + "; Latin words and numbers kept, punctuation dropped"},
            settings={"measure": "F1", "stemmer": False, "zh_segmenter": segmenter},
            scale="0-1")
        if segmenter == "jieba":
            import logging

            import jieba

            jieba.setLogLevel(logging.WARNING)  # its dictionary banner is not our output

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[ScoredText]:
        out = []
        for (resp, ref), (lang, share) in zip(pairs, _pairs_langs(pairs), strict=True):
            scorer = self._zh if lang == "zh" else self._en
            # rouge-score's order is (target, prediction): the reference first
            out.append(ScoredText(float(scorer.score(ref, resp)["rougeL"].fmeasure), lang,
                                  share))
        return out
