"""Every page in Chinese: each admin page and each rater page, run through AppTest with the tab
set to Chinese on the demo study, on an empty study, and in the states that show messages (a
file rejected for several bad lines, each admin action's success or error). Every text the
page draws is collected (tests/annotate/page_text.py); English prose that is not the study's
own data (nor inline code, nor a statistics symbol or a proper name) fails the test, naming
the page, the run of words and the text it stands in.

The same walk in English finds plenty, so the check can fail."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from annotate import state
from annotate.services.auth import Identity
from data import norming as nm
from data import quality as q
from data.engine import _engine_for, get_engine
from data.raters import add_rater
from data.sessions import open_session
from data.study import init_study
from tests.annotate.conftest import APP_DIR
from tests.annotate.page_text import english_left, page_texts, study_data, study_keys
from tests.helpers import item, jsonl

ADMIN_PAGES = ["study.py", "guidelines.py", "admin_import.py", "admin_raters.py",
               "admin_assign.py", "admin_progress.py", "admin_agreement.py",
               "admin_adjudicate.py", "admin_quality.py", "admin_norming.py",
               "admin_calibrate.py", "admin_report.py", "admin_export.py"]

# a file with several bad lines of each kind the Import page takes
BAD_ITEMS = (jsonl(item("ok-1"))
             + '{"id": "bad-2", "task": "poetry", "context": {"turns": [{"role": "user", '
               '"text": "hi"}]}, "response": "r"}\n'
             + '{"id": "bad-3", "task": "dialogue", "context": {}}\n'
             + "{not json\n"
             + '{"id": "bad-5", "task": "dialogue", "context": {"turns": [{"role": "bot", '
               '"text": "hi"}]}, "response": "r", "colour": 1}\n'
             + jsonl(item("ok-1")))
BAD_ITEMS_CSV = ("id,task,turns,shoe\n"
                 "a,dialogue,user: hi,r,1\n")
BAD_RATINGS = ("item_id,rater,dimension,score\n"
               "dlg-001-aster,pat,empathy,7\n"
               "nope,pat,empathy,3\n"
               "dlg-001-aster,pat,warmth,3\n"
               "dlg-001-aster,,empathy,3\n"
               "dlg-001-aster,pat,memory_fidelity,3\n"
               "dlg-001-aster,pat,safety,x\n")
BAD_RUBRIC = ('name = "r"\ncolour = 1\n[[dimensions]]\nkey = "empathy"\nlabel = "Empathy"\n'
              'scale = "1-5"\n[dimensions.anchors]\n1 = "a"\n')
BAD_GOLD = ("item_id,dimension,score,rationale\n"
            "dlg-001-aster,empathy,9,too high\n"
            "nope,empathy,3,unknown item\n"
            "dlg-001-aster,warmth,3,unknown dimension\n")
GOOD_ITEMS = jsonl(item("new-1"), item("new-2", task="itinerary"))


def _run(name: str, who, lang: str = "zh") -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / name), default_timeout=120)
    at.session_state[state.IDENTITY] = who
    at.session_state[state.LANGUAGE] = lang
    return at.run()


def _button(at: AppTest, key: str):
    return at.button(key=key) if key.startswith("h2h_") else \
        next(b for b in at.button if b.label == key)


class Walk:
    """The pages seen so far and the English left on each."""

    def __init__(self, engine, uploads=()):
        self.engine = engine
        self.uploads = list(uploads)
        self.found: list[str] = []

    def check(self, at: AppTest, where: str) -> AppTest:
        assert not at.exception, (where, [e.value for e in at.exception])
        data = study_data(self.engine, self.uploads)
        self.found += [f"{where}: {p}" for p in english_left(page_texts(at), data,
                                                             study_keys(self.engine))]
        return at

    def assert_clean(self):
        assert self.found == [], f"{len(self.found)} English texts on Chinese pages:\n" + \
            "\n".join(self.found)


def test_every_admin_page_in_chinese_on_the_demo_study(demo_db):
    walk = Walk(demo_db["engine"])
    for name in ADMIN_PAGES:
        walk.check(_run(name, demo_db["admin"]), name)
    walk.assert_clean()


def test_the_walk_finds_english_on_english_pages(demo_db):
    """The check itself can fail: the same pages in English are full of English."""
    walk = Walk(demo_db["engine"])
    for name in ("admin_import.py", "admin_agreement.py", "admin_quality.py"):
        walk.check(_run(name, demo_db["admin"], lang="en"), name)
    assert len(walk.found) > 30
    assert any("Bootstrap resamples" in f for f in walk.found)
    assert any("What are you importing" in f for f in walk.found)


def _upload(at: AppTest, kind: str, name: str, text: str, mime: str) -> AppTest:
    at.radio(key="h2h_import_kind").set_value(kind).run()
    at.file_uploader[0].set_value((name, text.encode(), mime)).run()
    return at.button(key="h2h_do_import").click().run()


def test_import_messages_in_chinese(demo_db):
    walk = Walk(demo_db["engine"], [BAD_ITEMS, BAD_ITEMS_CSV, BAD_RATINGS, BAD_RUBRIC,
                                    GOOD_ITEMS, "items.jsonl", "items.csv", "ratings.csv",
                                    "rubric.toml", "new.jsonl"])
    at = _run("admin_import.py", demo_db["admin"])
    for kind, name, text, mime in (
            ("Items", "items.jsonl", BAD_ITEMS, "application/jsonl"),
            ("Items", "items.csv", BAD_ITEMS_CSV, "text/csv"),
            ("Ratings", "ratings.csv", BAD_RATINGS, "text/csv"),
            ("Rubric", "rubric.toml", BAD_RUBRIC, "application/toml")):
        _upload(at, kind, name, text, mime)
        assert at.error and at.code, name  # rejected, with its problems listed
        assert len(at.code[0].value.splitlines()) >= 2, name
        walk.check(at, f"admin_import.py ({name} rejected)")
    _upload(at, "Items", "new.jsonl", GOOD_ITEMS, "application/jsonl")
    assert at.success
    walk.check(at, "admin_import.py (new.jsonl imported)")
    walk.assert_clean()


def test_admin_actions_in_chinese(demo_db):
    eng, admin = demo_db["engine"], demo_db["admin"]
    walk = Walk(eng, [BAD_GOLD, "gold.csv", "Dr Quinn", "Norming 1"])
    add_rater(eng, "Dr Lee", "rater")

    at = _run("admin_raters.py", admin)
    at.text_input[0].input("Dr Quinn")
    _button(at, "h2h_add_rater_go").click().run()
    assert at.code  # the new code, shown once
    walk.uploads.append(at.code[0].value)  # a code is data, in every language
    walk.check(at, "admin_raters.py (rater added)")
    at.text_input[0].input("Dr Quinn")
    _button(at, "h2h_add_rater_go").click().run()
    assert at.error
    walk.check(at, "admin_raters.py (name taken)")
    at.selectbox[1].select("Dr Quinn")
    _button(at, "h2h_deactivate_go").click().run()
    assert at.success
    walk.check(at, "admin_raters.py (deactivated)")

    at = _run("admin_assign.py", admin)
    at.number_input[0].set_value(1)
    _button(at, "h2h_assign_go").click().run()
    assert at.success
    walk.check(at, "admin_assign.py (assigned)")
    at.number_input[0].set_value(50)  # more raters per item than the study has
    _button(at, "h2h_assign_go").click().run()
    assert at.error
    walk.check(at, "admin_assign.py (error)")

    at = _run("admin_adjudicate.py", admin)
    at.radio[0].set_value(1)
    at.text_area[0].input("Both readings are defensible.")
    at.checkbox(key="h2h_adj_gold").check()
    _button(at, "h2h_adj_save").click().run()
    assert at.success
    walk.check(at, "admin_adjudicate.py (saved)")

    at = _run("admin_quality.py", admin)
    at.file_uploader[0].set_value(("gold.csv", BAD_GOLD.encode(), "text/csv")).run()
    at.button(key="h2h_gold_import").click().run()
    assert at.error and at.code
    walk.check(at, "admin_quality.py (gold rejected)")
    _button(at, "h2h_quality_save").click().run()
    assert at.success
    walk.check(at, "admin_quality.py (settings saved)")
    _button(at, "h2h_make_checks_go").click().run()
    assert at.success
    walk.check(at, "admin_quality.py (attention checks made)")
    at.selectbox(key="h2h_qual_rater").select("pat")
    _button(at, "h2h_qual_retrain").click().run()
    assert at.success
    walk.check(at, "admin_quality.py (another round)")

    at = _run("admin_norming.py", admin)
    at.multiselect[0].select("dlg-001-aster").select("dlg-002-cedar")
    at.multiselect[1].select("pat").select("Dr Lee")
    _button(at, "h2h_norming_open").click().run()
    walk.check(at, "admin_norming.py (opened)")
    at.button(key="h2h_norm_reveal").click().run()
    walk.check(at, "admin_norming.py (revealed)")
    at = _run("admin_norming.py", admin)
    _button(at, "h2h_norming_open").click().run()  # no items, no raters: an error
    assert at.error
    walk.check(at, "admin_norming.py (error)")

    at = _run("admin_calibrate.py", admin)
    at.selectbox(key="h2h_new_base").select("sim-judge-plain").run()
    _button(at, "h2h_new_prompt_go").click().run()
    assert at.error  # a simulated configuration cannot be run
    walk.check(at, "admin_calibrate.py (cannot run)")

    at = _run("admin_report.py", admin)
    at.toggle[0].set_value(False)
    at.select_slider[0].set_value(200)
    at.button(key="h2h_build_report").click().run()
    assert at.get("download_button")
    walk.check(at, "admin_report.py (built)")
    walk.assert_clean()


@pytest.fixture
def empty_study(tmp_path, monkeypatch):
    db = tmp_path / "empty.db"
    monkeypatch.setenv("H2H_DB", str(db))
    engine = get_engine(db)
    init_study(engine, name="Empty study")
    admin, _ = add_rater(engine, "ada", "admin")
    token, _ = open_session(engine, admin.id)
    yield engine, Identity(admin.id, "ada", "admin", token)
    engine.dispose()
    _engine_for.cache_clear()


def test_every_admin_page_in_chinese_on_an_empty_study(empty_study):
    engine, admin = empty_study
    walk = Walk(engine)
    for name in ADMIN_PAGES:
        walk.check(_run(name, admin), f"{name} (empty study)")
    at = _run("admin_assign.py", admin)
    _button(at, "h2h_assign_go").click().run()
    assert at.error  # nothing to assign, nobody to assign to
    walk.check(at, "admin_assign.py (empty study, error)")
    walk.assert_clean()


def test_rater_pages_in_chinese(demo_db):
    eng, rater = demo_db["engine"], demo_db["rater"]
    walk = Walk(eng, ["Norming 1"])
    add_rater(eng, "quinn", "rater")
    at = AppTest.from_file(str(APP_DIR / "app.py"), default_timeout=120)
    at.session_state[state.LANGUAGE] = "zh"
    walk.check(at.run(), "sign-in")
    at.text_input(key="h2h_code_input").input("H2H-WRONG-CODE-0000-0000")
    at.button[0].click().run()
    assert at.error
    walk.check(at, "sign-in (wrong code)")
    for name in ("rate.py", "norming.py", "guidelines.py"):
        walk.check(_run(name, rater), name)
    at = _run("rate.py", rater)
    at.button(key="h2h_save").click().run()  # nothing scored: the warning
    walk.check(at, "rate.py (unscored)")
    sid = nm.create_session(eng, "Norming 1", ["dlg-001-aster"], ["pat", "quinn"],
                            demo_db["admin"].rater_id)
    walk.check(_run("norming.py", rater), "norming.py (blind)")
    nm.save_norming(eng, sid, rater.rater_id, "dlg-001-aster",
                    {"empathy": 4, "safety": None, "fluency": 3})
    nm.reveal(eng, sid, named=False)  # everyone's scores, anonymised ("Rater A", …)
    at = _run("norming.py", rater)
    assert at.table
    walk.check(at, "norming.py (revealed)")
    q.set_gold(eng, "dlg-001-aster", "empathy", 5, "Names the plant and the fix.")
    walk.check(_run("rate.py", rater), "rate.py (training)")
    walk.assert_clean()


def test_the_app_shell_in_chinese(demo_db):
    walk = Walk(demo_db["engine"])
    for who in (demo_db["admin"], demo_db["rater"]):
        at = AppTest.from_file(str(APP_DIR / "app.py"), default_timeout=120)
        at.session_state[state.IDENTITY] = who
        at.session_state[state.LANGUAGE] = "zh"
        walk.check(at.run(), f"app shell ({who.role})")
    walk.assert_clean()


@pytest.mark.parametrize("name", ["admin_progress.py", "admin_agreement.py",
                                  "admin_adjudicate.py", "admin_calibrate.py",
                                  "admin_export.py"])
def test_admin_pages_name_dimensions_in_the_admins_language(demo_db, name):
    """The bundled rubric has Chinese labels, so an admin reading in Chinese sees 共情 where the
    page names the empathy dimension, as raters do, and English admins see Empathy; the key
    ``empathy`` is never what a sentence calls it (the Calibration page's verdicts did). The
    simulated judges' rationales ("(simulated) Empathy looks like ...") are data, not page."""
    def texts(lang):
        return [t for t in page_texts(_run(name, demo_db["admin"], lang=lang))
                if not t.startswith("(simulated)")]
    zh, en = " ".join(texts("zh")), " ".join(texts("en"))
    assert "共情" in zh and "Empathy" not in zh, name
    assert "Empathy" in en and "共情" not in en, name
    assert "empathy:" not in zh + en and "empathy：" not in zh, name


def test_chinese_verdicts_join_their_parts_with_chinese_punctuation(demo_db):
    """A verdict's reasons were joined by an ASCII '; ' inside Chinese sentences
    ('非劣效界值 −0.05; 替代标注者检验通过'); in Chinese they are joined by '；', in English
    by '; ' as before."""
    def verdicts(lang):
        return [t for t in page_texts(_run("admin_calibrate.py", demo_db["admin"], lang))
                if "QWK" in t]
    zh = verdicts("zh")
    assert zh and any("；替代标注者检验" in t for t in zh)
    assert not [t for t in zh if re.search(r"[;,] ?[\u4e00-\u9fff]", t)]
    en = verdicts("en")
    assert any("−0.05; alternative annotator test" in t for t in en), en[:2]
