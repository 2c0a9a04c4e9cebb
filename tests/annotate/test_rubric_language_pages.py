"""The rubric in the rater's language on every rater page (AppTest): the rating form, the
training page, the guidelines and the norming page show a Chinese rater the Chinese labels,
level names, anchors and guidelines; a text the rubric lacks in Chinese is the English one,
tagged (a title and a screen-reader text say it is not translated), and the other way round
for a rubric written in Chinese. The language's rubric is made once per process."""

from __future__ import annotations

import html
import re
from importlib import resources

import pytest
from streamlit.testing.v1 import AppTest

from annotate import state
from annotate.resources import cached_rubric, forget_rubric
from data import norming as nm
from data import quality as q
from data.rubric import parse_rubric
from data.study import set_rubric
from tests.annotate.conftest import APP_DIR

TAG_EN = 'class="h2h-untranslated" title="尚未翻译：以英文原文显示"'
BADGE_EN = ":gray-badge[英文]"


def _page(name: str, who, lang: str) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / name), default_timeout=60)
    at.session_state[state.IDENTITY] = who
    at.session_state[state.LANGUAGE] = lang
    return at.run()


def _html(at: AppTest) -> str:
    return "\n".join(e.proto.body for e in at.get("html"))


@pytest.fixture
def partial(demo_db):
    """The bundled rubric without two Chinese texts: empathy's label and its level 3 anchor."""
    text = (resources.files("data") / "rubrics" / "companion.toml").read_text("utf-8")
    text = text.replace('label.zh = "共情"\n', "")
    text = re.sub(r'\n3\.zh = "准确地承认了主要感受[^\n]*', "", text)
    set_rubric(demo_db["engine"], parse_rubric(text))
    forget_rubric()
    yield demo_db
    forget_rubric()


def test_rating_form_in_chinese(demo_db):
    at = _page("rate.py", demo_db["rater"], "zh")
    assert not at.exception
    labels = [r.label for r in at.radio]
    assert labels[:3] == ["共情", "安全性", "流畅度"]
    assert at.radio[0].options[0] == "**1** 缺失" and at.radio[0].options[-1] == "无法评分"
    html = _html(at)
    assert "忽视或否定用户的感受" in html and "Ignores or dismisses" not in html
    assert "h2h-untranslated" not in html and "全部锚定描述" in html
    at = _page("rate.py", demo_db["rater"], "en")  # the same rubric, in English
    assert [r.label for r in at.radio][:3] == ["Empathy", "Safety", "Fluency"]
    assert "Ignores or dismisses" in _html(at) and "忽视" not in _html(at)


def test_a_missing_translation_is_shown_in_english_and_tagged(partial):
    at = _page("rate.py", partial["rater"], "zh")
    assert not at.exception
    empathy = at.radio[0]
    assert empathy.label == "Empathy" + " " + BADGE_EN  # the label has no Chinese text
    assert empathy.options[2] == "**3** 尚可"  # its level names do
    html = _html(at)
    # the anchor store under the scales: the English anchor, in its language, tagged, with a
    # text for screen readers; every other anchor Chinese and untagged
    assert ('<span lang="en">Acknowledges the main feeling and its cause correctly, but stays '
            "at the surface") in html
    assert TAG_EN in html and '<span class="h2h-sr">尚未翻译：以英文原文显示</span>' in html
    assert html.count("h2h-untranslated") == 1 and "说出了一种感受" not in html
    assert "以笼统、套话式的方式提及感受" in html
    at = _page("rate.py", partial["rater"], "en")  # English is the rubric's own: no tags
    assert "h2h-untranslated" not in _html(at) and "gray-badge" not in at.radio[0].label


def test_guidelines_in_chinese_with_the_untranslated_texts_tagged(partial):
    at = _page("guidelines.py", partial["rater"], "zh")
    assert not at.exception
    assert at.title[0].value == "评分指南"
    html = _html(at)
    assert "您将读到一段<strong>用户</strong>与 AI <strong>陪伴者</strong>之间的对话" in html
    assert [s.value for s in at.subheader][:2] == ["Empathy" + " " + BADGE_EN, "安全性"]
    table = next(e.proto.body for e in at.get("html") if "h2h-levels" in e.proto.body)
    rows = table.split("<tr>")[2:]  # after the header
    assert rows[0].startswith("<td>1 · 缺失</td>")
    # level 3's anchor, English, in its language and tagged
    assert '<div class="h2h-md" lang="en"><p>Acknowledges the main feeling' in rows[2]
    assert TAG_EN in rows[2] and "h2h-untranslated" not in rows[1]
    assert any("标有“英文”的内容尚未翻译，以英文原文显示。" in c.value for c in at.caption)


def test_training_page_has_the_rating_forms_parts_in_chinese(demo_db):
    eng = demo_db["engine"]
    q.set_gold(eng, "dlg-001-aster", "empathy", 5, "具体地回应了用户的感受。")
    at = _page("rate.py", demo_db["rater"], "zh")
    assert not at.exception and at.title[0].value == "评分练习"
    radios = list(at.radio)
    assert [r.key for r in radios] == ["score-train-empathy", "score-train-safety",
                                       "score-train-fluency"]
    assert [r.label for r in radios] == ["共情", "安全性", "流畅度"]
    assert all(not r.help for r in radios)  # anchors under the scales, not in tooltips
    html = _html(at)
    assert 'class="h2h-anchor-src" hidden' in html and "忽视或否定用户的感受" in html
    assert "<kbd>Enter</kbd> 提交" in html  # the keyboard legend, for this form
    assert re.search(r'data-testid="h2h-training-ready" data-step="item-1" '
                     r'data-item="1-dlg-001-aster"', html)
    at.button(key="h2h_train_save").click().run()  # nothing chosen: named, in Chinese
    html = _html(at)
    assert 'data-testid="h2h-missing"' in html and "请先为每个维度打分" in html
    assert "共情" in html.split('data-testid="h2h-missing"')[1]
    for r in at.radio:
        r.set_value(4)
    at.button(key="h2h_train_save").click().run()
    fb = _html(at)
    assert "<th>维度</th><th>您的评分</th><th>专家评分</th><th>理由</th>" in fb
    assert "<td>共情</td>" in fb


def test_norming_page_in_chinese(demo_db):
    from data.raters import add_rater

    eng = demo_db["engine"]
    add_rater(eng, "kim")
    sid = nm.create_session(eng, "N", ["dlg-001-aster"], ["pat", "kim"])
    at = _page("norming.py", demo_db["rater"], "zh")
    assert not at.exception and [r.label for r in at.radio] == ["共情", "安全性", "流畅度"]
    for r in at.radio:
        r.set_value(3)
    at.button[0].click().run()
    nm.reveal(eng, sid)
    at.run()
    html = _html(at)
    assert "<summary>共情：锚定描述</summary>" in html and "忽视或否定用户的感受" in html
    assert list(at.table[0].value.index) == ["共情", "安全性", "流畅度"]


def test_a_rubric_written_in_chinese_is_tagged_for_english_readers(demo_db):
    set_rubric(demo_db["engine"], parse_rubric('''
language = "zh"
name = "中文评分标准"
guidelines = "请只评价最后一条回复。"
[[dimensions]]
key = "empathy"
label.zh = "共情"
label.en = "Empathy"
scale = "1..2"
[dimensions.anchors]
1 = "忽视感受。"
2.zh = "回应了感受。"
2.en = "Responds to the feelings."
'''))
    forget_rubric()
    try:
        at = _page("rate.py", demo_db["rater"], "en")
        assert not at.exception
        assert at.radio[0].label == "Empathy"
        assert at.radio[0].options[:2] == ["**1** 1", "**2** 2"]
        html = _html(at)
        assert ('<span lang="zh">忽视感受。</span><span class="h2h-untranslated" '
                'title="Not translated yet: shown in Chinese">') in html
        assert "Responds to the feelings." in html
        at = _page("guidelines.py", demo_db["rater"], "en")
        assert '<div class="h2h-md" lang="zh"><p>请只评价最后一条回复。</p>' in _html(at)
        assert any("Texts tagged “Chinese” are not translated yet" in c.value
                   for c in at.caption)
        assert "h2h-untranslated" in _html(at)  # above the guidelines, with its title
    finally:
        forget_rubric()


def test_the_languages_rubric_is_made_once_per_process(demo_db):
    forget_rubric()
    a = cached_rubric(None, "zh")
    assert cached_rubric(None, "zh") is a and cached_rubric(None) is not a
    assert cached_rubric(None).in_language("zh") is a


def test_translations_from_the_file_are_inert_like_every_rubric_text(demo_db):
    """A translation is file text like any other: escaped in the anchors, literal in the
    scale's label (Markdown neutralised), on the rating page of a Chinese rater."""
    evil = "<img src=x onerror=alert(1)>"
    set_rubric(demo_db["engine"], parse_rubric(f'''
name = "Hostile"
[[dimensions]]
key = "empathy"
label.en = "Empathy"
label.zh = "共情 **粗体** [链接](http://x.example)"
scale = "1..2"
[dimensions.anchors]
1.en = "Dismissive."
1.zh = "{evil}"
2 = "Warm {evil}"
'''))
    forget_rubric()
    try:
        at = _page("rate.py", demo_db["rater"], "zh")
        assert not at.exception
        html = _html(at)
        assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
        assert '<span lang="en">Warm &lt;img' in html  # the untranslated one, tagged
        label = at.radio[0].label
        assert "**" not in label and "](" not in label and "&#42;&#42;粗体&#42;&#42;" in label
    finally:
        forget_rubric()


def _dimension_cells(at: AppTest) -> list[str]:
    return [str(v) for v in at.table[0].value.index]


def test_the_overview_shows_the_rubric_in_the_admins_language(demo_db):
    """Admins read the rubric as raters do: the Overview's title line and dimension table
    in Chinese for a Chinese admin (it showed "H2HTalk companion rubric" and "Empathy"),
    keys as code, the same as written in files."""
    at = _page("study.py", demo_db["admin"], "zh")
    assert not at.exception
    assert _dimension_cells(at) == ["共情", "安全性", "流畅度", "记忆准确性", "规划质量"]
    caption = " ".join(c.value for c in at.caption)
    assert "H2HTalk 陪伴回复评分标准" in caption and "companion rubric" not in caption
    assert "gray-badge" not in caption + " ".join(_dimension_cells(at))
    assert list(at.table[0].value.iloc[:, 0])[:2] == ["`empathy`", "`safety`"]
    at = _page("study.py", demo_db["admin"], "en")
    assert _dimension_cells(at)[:3] == ["Empathy", "Safety", "Fluency"]
    assert "H2HTalk companion rubric" in " ".join(c.value for c in at.caption)


def test_the_overview_tags_a_label_without_translation(partial):
    at = _page("study.py", partial["admin"], "zh")
    assert not at.exception
    cells = _dimension_cells(at)
    assert cells[0] == "Empathy" + " " + BADGE_EN  # the label has no Chinese text
    assert cells[1:3] == ["安全性", "流畅度"]
    at = _page("study.py", partial["admin"], "en")
    assert "gray-badge" not in " ".join(_dimension_cells(at))


@pytest.fixture
def checked(demo_db):
    """A gold score, instructed attention checks, and one failed answer to a check."""
    eng = demo_db["engine"]
    q.set_gold(eng, "dlg-001-aster", "empathy", 5, "Names the plant and the fix.")
    made = q.add_instructed_checks(eng, 1, 2)
    q.save_attention(eng, demo_db["rater"].rater_id, sorted(made)[0],
                     {"empathy": 4, "safety": None, "fluency": 2}, 5)
    return demo_db


def _cells(at: AppTest) -> str:
    """Every string cell of every table and dataframe on the page."""
    out = []
    for el in list(at.dataframe) + list(at.table):
        df = el.value
        out += [str(v) for v in df.index] + [str(v) for col in df.columns for v in df[col]]
    return html.unescape(" | ".join(out))  # st.table cells are Markdown-escaped


def test_quality_and_progress_tables_name_dimensions_in_the_admins_language(checked):
    """The gold-item and attention-check tables (Quality) and the failed checks (Progress)
    showed dimension keys ('empathy 2, safety 2'); they show the rubric's labels in the
    admin's language, the Chinese list with 、 between its parts."""
    for page in ("admin_quality.py", "admin_progress.py"):
        zh = _cells(_page(page, checked["admin"], "zh"))
        assert "共情" in zh and not re.search(r"\b(empathy|safety|fluency)\b", zh), page
        en = _cells(_page(page, checked["admin"], "en"))
        assert "Empathy" in en and "共情" not in en and "empathy" not in en, page
    zh = _cells(_page("admin_quality.py", checked["admin"], "zh"))
    assert "共情 2、安全性 2、流畅度 2" in zh
    zh = _cells(_page("admin_progress.py", checked["admin"], "zh"))
    assert "共情 4、安全性 无法评分、流畅度 2" in zh, zh
    en = _cells(_page("admin_progress.py", checked["admin"], "en"))
    assert "Empathy 4, Safety cannot rate, Fluency 2" in en, en


def test_the_report_pages_findings_name_dimensions_in_the_admins_language(demo_db):
    """The report itself is English (for the paper), but the page's findings table named
    each dimension in English under Chinese headings ('Empathy' beside '人类评分员是否一致？');
    it uses the rubric's labels in the admin's language."""
    at = _page("admin_report.py", demo_db["admin"], "zh")
    at.toggle[0].set_value(False)
    at.select_slider[0].set_value(200)
    at.button(key="h2h_build_report").click().run()
    assert not at.exception
    assert [str(v) for v in at.table[0].value.index] == [
        "共情", "安全性", "流畅度", "记忆准确性", "规划质量"]
