"""BLEU, chrF and ROUGE-L on fixed English and Chinese strings: the libraries' own values with
the stated settings, and small cases worked by hand (which would catch a wrong tokenizer,
smoothing or segmentation)."""

from __future__ import annotations

import math

import pytest
import sacrebleu
from rouge_score import rouge_scorer

from analysis.refmetrics.lexical import BleuScorer, ChrfScorer, RougeLScorer, segment_chinese
from analysis.refmetrics.spec import cjk_share, language

EN = [("The cat sat on the mat.", "The cat is on the mat."),
      ("(smiles) Skip the all-nighter and sleep before your exam.",
       "(hands you water) Skip the all-nighter: review until eleven, then sleep.")]
ZH = [("我今天很开心（笑）", "今天我很开心呀"),
      ("（拍拍你的肩）先别慌，今晚早点睡。", "（拍拍你的肩）先别慌，今晚只过一遍框架，早点睡。")]


def test_language_is_decided_by_the_share_of_chinese_characters():
    # "Han characters / (Han characters + other words)": 8 / (8 + 1) for one brand name
    assert cjk_share("我今天去 Starbucks 买了咖啡") == pytest.approx(8 / 9)
    assert language("I met 小明 today", "See you at five") == ("en", 0.4)  # 2 / (2 + 3)
    # the larger share of the two texts: an English reply to a Chinese reference is Chinese
    assert language("See you soon", "明天见")[0] == "zh"
    assert cjk_share("12:30, ok?") == 0.0 and cjk_share("") == 0.0


def test_bleu_equals_sacrebleu_with_13a_for_english_and_zh_for_chinese():
    scorer = BleuScorer()
    for (hyp, ref), got in zip(EN, scorer.score(EN), strict=True):
        want = sacrebleu.sentence_bleu(hyp, [ref], smooth_method="exp", tokenize="13a",
                                       use_effective_order=True).score
        assert got.lang == "en" and got.score == pytest.approx(want, abs=1e-12)
    for (hyp, ref), got in zip(ZH, scorer.score(ZH), strict=True):
        want = sacrebleu.sentence_bleu(hyp, [ref], smooth_method="exp", tokenize="zh",
                                       use_effective_order=True).score
        wrong = sacrebleu.sentence_bleu(hyp, [ref], tokenize="13a").score
        assert got.lang == "zh" and got.score == pytest.approx(want, abs=1e-12)
        assert abs(got.score - wrong) > 1.0  # the 13a tokenizer would see whole sentences


def test_sentence_bleu_smoothing_worked_by_hand():
    """hyp "a b c d", ref "a b c e": precisions 3/4, 2/3, 1/2 and no 4-gram match. Exp
    smoothing (Chen & Cherry 2014, method 3) counts the first zero order as 1 / (2 * 1), so
    BLEU = 100 * (3/4 * 2/3 * 1/2 * 1/2) ** (1/4), brevity penalty 1; unsmoothed it is 0."""
    got = BleuScorer().score([("a b c d", "a b c e")])[0].score
    assert got == pytest.approx(100 * (0.75 * (2 / 3) * 0.5 * 0.5) ** 0.25, abs=1e-9)
    assert got == pytest.approx(59.46035575, abs=1e-6)
    # Chinese: one token per character, so the same arithmetic holds for 一二三四 / 一二三五
    assert BleuScorer().score([("一二三四", "一二三五")])[0].score == pytest.approx(got)


def test_chrf_equals_sacrebleu_for_both_languages():
    scorer = ChrfScorer()
    for hyp, ref in EN + ZH:
        want = sacrebleu.sentence_chrf(hyp, [ref], char_order=6, word_order=0, beta=2).score
        assert scorer.score([(hyp, ref)])[0].score == pytest.approx(want, abs=1e-12)
    assert scorer.score([("同样的话", "同样的话")])[0].score == pytest.approx(100.0)


def test_rouge_l_english_is_rouge_score_default_and_worked_by_hand():
    scorer = RougeLScorer()
    lib = rouge_scorer.RougeScorer(["rougeL"])
    for hyp, ref in EN:
        want = lib.score(ref, hyp)["rougeL"].fmeasure
        assert scorer.score([(hyp, ref)])[0].score == pytest.approx(want, abs=1e-12)
    # [the cat sat on the mat] vs [the cat is on the mat]: LCS 5 of 6 and 6 -> F1 = 5/6
    assert scorer.score([EN[0]])[0].score == pytest.approx(5 / 6)


class _PerCharacter:
    def tokenize(self, text):
        return [c for c in text if "\u4e00" <= c <= "\u9fff"]


def test_rouge_l_chinese_by_character_worked_by_hand():
    """我 今 天 很 开 心 笑 (7 tokens, the parentheses dropped) against 今 天 我 很 开 心 呀 (7):
    the longest common subsequence 今天很开心 has 5, so P = R = 5/7 and F1 = 5/7. The
    English tokenizer of rouge-score would delete every Chinese character and give 0."""
    assert segment_chinese("我今天很开心（笑）", "char") == list("我今天很开心笑")
    got = RougeLScorer(segmenter="char").score([ZH[0]])[0]
    assert got.lang == "zh" and got.score == pytest.approx(5 / 7)
    assert rouge_scorer.RougeScorer(["rougeL"]).score(ZH[0][1], ZH[0][0])["rougeL"].fmeasure \
        == 0
    lib = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_PerCharacter())
    for hyp, ref in ZH:  # the library with a plain per-character tokenizer of the test's
        assert RougeLScorer().score([(hyp, ref)])[0].score == pytest.approx(
            lib.score(ref, hyp)["rougeL"].fmeasure, abs=1e-12)


def test_rouge_l_chinese_with_jieba_words_worked_by_hand():
    """jieba cuts 我今天很开心（笑） into 我/今天/很/开心/笑 and 今天我很开心呀 into
    今天/我/很/开心/呀: an LCS of 3 words (今天 很 开心) of 5 and 5, so F1 = 3/5."""
    assert segment_chinese("我今天很开心（笑）", "jieba") == ["我", "今天", "很", "开心", "笑"]
    assert segment_chinese("今天我很开心呀", "jieba") == ["今天", "我", "很", "开心", "呀"]
    got = RougeLScorer(segmenter="jieba").score([ZH[0]])[0].score
    assert got == pytest.approx(3 / 5)
    assert not math.isclose(got, RougeLScorer(segmenter="char").score([ZH[0]])[0].score)


def test_settings_are_recorded_and_hashed():
    char, jieba = RougeLScorer(segmenter="char").spec, RougeLScorer(segmenter="jieba").spec
    assert char.hash != jieba.hash and "jieba" in jieba.tokenizer["zh"]
    bleu = BleuScorer().spec
    assert bleu.settings["smooth"] == "exp" and bleu.tokenizer["en"] == "13a"
    assert "tok:zh" in bleu.signature and "tok:13a" in bleu.signature
    assert bleu.library_version == sacrebleu.__version__
    assert BleuScorer("x").spec.hash == bleu.hash  # the name is not a setting
    with pytest.raises(ValueError, match="segmenter"):
        RougeLScorer(segmenter="words")
