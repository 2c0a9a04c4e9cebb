"""Rubric texts in several languages: the file format (a plain string in the rubric's own
language, or one string per language with TOML dotted keys), strict validation with file, line
and field, the rubric shown in one language with a fallback flag per text, versions that cover
translations, and stored rubrics from before languages existed loading unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import data.study as study_module
from data.errors import FormatError
from data.rubric import load_default_rubric, parse_rubric, rubric_from_definition
from data.rubric_languages import text_paths, translation_gaps
from data.study import current_rubric, set_rubric

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rubrics"
# The bundled rubric as every release before per-language texts shipped it (English only), and
# the version its studies store: `git show 86ec931:data/rubrics/companion.toml`.
RELEASED_EN = FIXTURES / "companion_en_as_released.toml"
RELEASED_EN_VERSION = "8f4f334b1f9b1d1a"

TWO = '''
name.en = "Two languages"
name.zh = "双语"
guidelines.en = "Rate the **last** reply."
guidelines.zh = "只评价**最后**一条回复。"
[[dimensions]]
key = "empathy"
label.en = "Empathy"
label.zh = "共情"
description = "Feelings recognised?"
scale = "1..3"
[dimensions.labels]
1.en = "Absent"
1.zh = "缺失"
2 = "Some"
[dimensions.anchors]
1.en = "Ignores the feelings."
1.zh = "忽视用户的感受。"
2.en = "Names a feeling."
2.zh = "说出了一种感受。"
3 = "Reflects feelings and causes."
[[dimensions]]
key = "red_flag"
scale = "binary"
[dimensions.anchors]
0 = "Nothing worrying."
1 = "Could harm a vulnerable user."
'''


def _problems(text: str) -> list[str]:
    with pytest.raises(FormatError) as exc:
        parse_rubric(text, file="r.toml")
    return [str(p) for p in exc.value.problems]


def test_texts_per_language_and_the_rubric_shown_in_one_language():
    r = parse_rubric(TWO)
    # the base texts stay where every caller reads them
    assert (r.language, r.name, r.guidelines) == ("en", "Two languages", "Rate the **last** reply.")
    emp = r.dimension("empathy")
    assert emp.label == "Empathy" and [lv.label for lv in emp.levels] == ["Absent", "Some", "3"]
    assert [lv.anchor for lv in emp.levels][0] == "Ignores the feelings."
    assert r.languages == ("en", "zh")
    zh = r.in_language("zh")
    assert (zh.name, zh.guidelines, zh.version) == ("双语", "只评价**最后**一条回复。", r.version)
    assert zh.fallback == frozenset()
    z = zh.dimension("empathy")
    assert (z.label, z.description, z.fallback) == ("共情", "Feelings recognised?",
                                                    frozenset({"description"}))
    assert (z.shown_language, z.fallback_language) == ("zh", "en")
    assert [(lv.label, lv.anchor, sorted(lv.fallback)) for lv in z.levels] == [
        ("缺失", "忽视用户的感受。", []),
        ("Some", "说出了一种感受。", ["label"]),
        ("3", "Reflects feelings and causes.", ["anchor"]),  # a bare number needs no translation
    ]
    flag = zh.dimension("red_flag")  # nothing translated: every text falls back, marked
    assert flag.fallback == {"label"}
    assert [sorted(lv.fallback) for lv in flag.levels] == [["anchor", "label"]] * 2
    # the same object every time (made once per process and language), and the values,
    # scales and parsing of the rubric itself
    assert r.in_language("zh") is zh and r.in_language("en") is r
    assert z.values == emp.values and z.parse_score("2") == 2
    assert zh.dimensions_for("dialogue")[0] is z


def test_a_rubric_written_in_chinese_falls_back_to_chinese_for_english_readers():
    r = parse_rubric('''
language = "zh"
name = "中文评分标准"
[[dimensions]]
key = "empathy"
label.zh = "共情"
label.en = "Empathy"
scale = "1..2"
[dimensions.anchors]
1 = "忽视感受。"
2.zh = "回应了感受。"
2.en = "Responds to the feelings."
''')
    assert (r.language, r.name, r.dimension("empathy").label) == ("zh", "中文评分标准", "共情")
    en = r.in_language("en")
    d = en.dimension("empathy")
    assert (en.name, en.fallback, d.label, d.fallback_language) == (
        "中文评分标准", {"name"}, "Empathy", "zh")
    assert [(lv.anchor, sorted(lv.fallback)) for lv in d.levels] == [
        ("忽视感受。", ["anchor"]), ("Responds to the feelings.", [])]
    assert r.in_language("zh") is r


def test_version_covers_every_translation_and_not_the_layout():
    a = parse_rubric(TWO)
    b = parse_rubric("# layout only\n" + TWO.replace("\n", "\n\n"))
    c = parse_rubric(TWO.replace("说出了一种感受。", "说出了某种感受。"))
    d = parse_rubric(TWO.replace('guidelines.zh = "只评价**最后**一条回复。"\n', ""))
    assert a.version == b.version
    assert len({a.version, c.version, d.version}) == 3


def test_stored_definition_keeps_the_translations(engine):
    r = parse_rubric(TWO)
    defn = json.loads(json.dumps(r.definition()))  # what the study database holds
    assert defn["translations"]["zh"]["dimensions.empathy.anchors.2"] == "说出了一种感受。"
    again = rubric_from_definition(defn)
    assert again == r and again.version == r.version
    assert again.in_language("zh").dimension("empathy").levels[1].anchor == "说出了一种感受。"
    set_rubric(engine, r)
    study_module._RUBRICS.clear()  # read back from the database, not from this process
    stored = current_rubric(engine)
    assert stored.version == r.version and stored.translations == r.translations
    with pytest.raises(ValueError, match="view"):
        r.in_language("zh").definition()


def test_rubrics_stored_before_languages_existed_load_with_their_version():
    released = parse_rubric(RELEASED_EN.read_text("utf-8"))
    assert released.version == RELEASED_EN_VERSION
    defn = released.definition()
    assert "language" not in defn and "translations" not in defn
    # a definition as a study of an earlier release stored it (no language keys at all)
    old = rubric_from_definition(json.loads(json.dumps(defn)))
    assert old.version == RELEASED_EN_VERSION and old.language == "en"
    assert old.translations == {} and old.languages == ("en",)
    # shown in Chinese, every text is the English one, each marked as such
    zh = old.in_language("zh")
    assert zh.dimension("empathy").label == "Empathy"
    assert zh.dimension("empathy").fallback == {"label", "description"}
    assert all(lv.fallback == {"label", "anchor"} for lv in zh.dimension("safety").levels)


def test_the_bundled_rubric_is_complete_in_chinese_and_unchanged_in_english():
    r = load_default_rubric()
    released = parse_rubric(RELEASED_EN.read_text("utf-8"))
    assert r.language == "en" and r.languages == ("en", "zh")
    # the English texts are exactly the released ones; only the Chinese ones are new
    assert {k: v for k, v in r.definition().items() if k != "translations"} == \
        released.definition()
    assert r.version != released.version
    assert translation_gaps(r) == {"zh": (len(text_paths(r)), [])}
    zh = r.in_language("zh")
    assert [d.label for d in zh.dimensions] == ["共情", "安全性", "流畅度", "记忆准确性",
                                                "规划质量"]
    for d in zh.dimensions:
        assert d.fallback == frozenset() and all(not lv.fallback for lv in d.levels)
        for lv in d.levels:  # Chinese text, not a copy of the English one
            assert lv.anchor != r.dimension(d.key).levels[lv.value - 1].anchor
            assert any("\u4e00" <= ch <= "\u9fff" for ch in lv.anchor + lv.label)
    assert "安全警示" in zh.guidelines and "无法评分" in zh.guidelines  # the app's own words


def test_partial_translations_are_allowed_and_reported():
    r = parse_rubric(TWO)
    total, missing = translation_gaps(r)["zh"]
    assert total == len(text_paths(r))
    assert missing == ["dimensions.empathy.description", "dimensions.empathy.labels.2",
                       "dimensions.empathy.anchors.3", "dimensions.red_flag.label",
                       "dimensions.red_flag.labels.0", "dimensions.red_flag.anchors.0",
                       "dimensions.red_flag.labels.1", "dimensions.red_flag.anchors.1"]
    assert translation_gaps(parse_rubric(RELEASED_EN.read_text("utf-8"))) == {}


BAD = [
    ("unknown language code",
     TWO.replace('label.zh = "共情"', 'label.zh = "共情"\nlabel.fr = "Empathie"'),
     ["r.toml:10: field 'dimensions.empathy.label.fr': unknown language 'fr' (rubric texts "
      "may be given in: en, zh)"]),
    ("unknown base language", 'language = "de"\n' + TWO,
     ["r.toml:1: field 'language': 'de' is not a language rubric texts can be written in"]),
    ("translation of a level the scale does not have",
     TWO.replace('3 = "Reflects', '4.zh = "多余的等级。"\n3 = "Reflects'),
     ["r.toml:21: field 'dimensions.empathy.anchors.4': not a level of this scale (levels: "
      "1, 2, 3)"]),
    ("label of a level the scale does not have",
     TWO.replace('2 = "Some"', '2 = "Some"\n7.zh = "七"'),
     ["r.toml:16: field 'dimensions.empathy.labels.7': not a level of this scale"]),
    ("a language table in place of the levels",
     TWO.replace('3 = "Reflects feelings and causes."',
                 '3 = "Reflects feelings and causes."\n[dimensions.anchors.zh]\n3 = "反映。"'),
     ["r.toml:22: field 'dimensions.empathy.anchors.zh': not a level of this scale (levels: "
      "1, 2, 3); to translate, give each level's text per language: 1.zh = \"…\""]),
    ("translation without the base text",
     TWO.replace('2.en = "Names a feeling."\n', ""),
     ["r.toml:19: field 'dimensions.empathy.anchors.2.en': missing: with texts per "
      "language, the text in the rubric's own language is required too"]),
    ("empty translation", TWO.replace('2.zh = "说出了一种感受。"', '2.zh = "  "'),
     ["r.toml:20: field 'dimensions.empathy.anchors.2.zh': is empty; leave the translation "
      "out and the en text is shown"]),
    ("not a text", TWO.replace('label.zh = "共情"', 'label.zh = 3'),
     ["r.toml:9: field 'dimensions.empathy.label.zh': must be a string"]),
    ("image in a translation only",
     TWO.replace('2.zh = "说出了一种感受。"', '2.zh = "见 ![图](http://x.example/a.png)"'),
     ["r.toml:20: field 'dimensions[1].anchors.2.zh': images are not allowed in rubric text"]),
    ("image in translated guidelines",  # by reference (without its definition it is text)
     TWO.replace('"只评价**最后**一条回复。"', '"![x][logo]\\n\\n[logo]: http://x.example/a.png"'),
     ["r.toml:5: field 'guidelines.zh': images are not allowed in rubric text"]),
    ("a plain text beside its translation",
     TWO.replace('3 = "Reflects feelings and causes."',
                 '3 = "Reflects feelings and causes."\n3.zh = "反映。"'),
     ["r.toml:22:", "not valid TOML", "write each one with its language (1.en = \"…\" and "
      "1.zh = \"…\", not 1 = \"…\" beside 1.zh)"]),
]


@pytest.mark.parametrize("name,text,expected", BAD, ids=[b[0] for b in BAD])
def test_bad_translations_are_rejected_with_file_line_and_field(name, text, expected):
    problems = _problems(text)
    joined = "\n".join(problems)
    for part in expected:
        assert part in joined, f"{part!r} not in:\n{joined}"
