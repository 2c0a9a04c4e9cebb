"""The training round and the norming page through AppTest (the browser tests walk the same
paths in Chromium)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from annotate import state
from data import norming as nm
from data import quality as q
from data.engine import write_session
from data.models import Rater
from tests.annotate.conftest import APP_DIR


def _rate(who) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / "rate.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = who
    return at.run()


def _overview(who) -> AppTest:
    """The admin's first page, through the app's navigation (its link to another page)."""
    at = AppTest.from_file(str(APP_DIR / "app.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = who
    at.run()
    assert not at.exception, at.exception
    return at


def _html(at: AppTest) -> str:
    return "\n".join(e.proto.body for e in at.get("html"))


def test_training_comes_first_then_feedback_then_the_result(demo_db):
    eng = demo_db["engine"]
    q.set_gold(eng, "dlg-001-aster", "empathy", 5, "Names the plant <b>and</b> the fix.")
    q.set_gold(eng, "dlg-002-cedar", "empathy", 1, "Ignores the user.")
    at = _rate(demo_db["rater"])
    assert not at.exception
    assert at.title[0].value == "Training" and not at.get("progress")
    assert "example 1 of 2" in at.markdown[0].value
    at.button[0].click().run()  # nothing chosen: the rating page's warning, naming each
    html = _html(at)              # dimension (the browser clears them as they are scored)
    assert 'data-testid="h2h-missing"' in html and "Score every dimension" in html
    assert html.count("data-dim-index=") == 3 and "h2h-feedback" not in html
    for r in at.radio:
        r.set_value(4)
    at.button[0].click().run()
    html = _html(at)
    assert 'data-testid="h2h-feedback"' in html
    assert "Names the plant &lt;b&gt;and&lt;/b&gt; the fix." in html  # rationale inert
    at.button(key="h2h_train_next").click().run()
    for r in at.radio:
        r.set_value(4)
    at.button[0].click().run()
    at.button(key="h2h_train_next").click().run()  # "See my result"
    # within one on empathy: 4 vs 5 yes, 4 vs 1 no → 50 %: below 80 % → failed; not an
    # error of theirs (no red box), and they are told what happens next
    assert not at.error
    assert "did not yet agree closely enough" in at.info[0].value
    assert "50% of 2 scores" in at.info[0].value
    assert "What happens next" in at.markdown[-1].value
    assert "overview page" in at.markdown[-1].value
    # the admin's Overview says someone is waiting, and links to where they decide
    admin = _overview(demo_db["admin"])
    assert "1 rater failed the training round and is waiting for your decision" \
        in admin.warning[0].value and "pat" in admin.warning[0].value
    assert any("Rater quality" in link.label for link in admin.get("page_link"))
    q.release(eng, demo_db["rater"].name)
    assert not _overview(demo_db["admin"]).warning  # decided: nobody waits
    at = _rate(demo_db["rater"])  # told once, on the next page load
    assert "released you" in at.success[0].value
    at.button(key="h2h_train_start").click().run()
    assert at.get("progress"), "released: the rating form is back"


def test_norming_page_for_a_rater(demo_db):
    at = AppTest.from_file(str(APP_DIR / "views" / "norming.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = demo_db["rater"]
    at.run()
    assert "No norming session is open for you" in at.info[0].value
    from data.raters import add_rater
    add_rater(demo_db["engine"], "kim")
    sid = nm.create_session(demo_db["engine"], "N", ["dlg-001-aster"], ["pat", "kim"])
    at.run()
    assert not at.exception
    assert "Nobody sees your scores" in at.markdown[0].value
    assert not at.table  # blind: nobody else's scores
    for r in at.radio:
        r.set_value(3)
    at.button[0].click().run()
    assert [x[4] for x in nm.norming_scores(demo_db["engine"], sid)] == ["before"] * 3
    nm.reveal(demo_db["engine"], sid)
    at.run()
    assert at.table and list(at.table[0].value.columns) == ["Rater A", "Rater B"]
    assert "dlg-001" not in _html(at)  # no item id reaches a rater


def _answer(at: AppTest, empathy: int) -> None:
    """Score the training item on screen (empathy as given, the rest 4) and submit it."""
    at.radio[0].set_value(empathy)
    for r in at.radio[1:]:
        r.set_value(4)
    at.button(key="h2h_train_save").click().run()


def test_the_training_result_waits_for_the_rater_across_page_loads(demo_db):
    """A rater who finished the training round and then reloaded (or came back later) went
    straight to the study's items and never saw their result: the result screen lived in the
    browser tab's state. It now shows on every page load until the rater presses "Start
    rating"; from then on the rating form comes first."""
    eng, rater = demo_db["engine"], demo_db["rater"]
    q.set_gold(eng, "dlg-001-aster", "empathy", 5, "Names the plant and the fix.")
    q.set_gold(eng, "dlg-002-cedar", "empathy", 2, "Generic.")
    at = _rate(rater)
    _answer(at, 5)
    at.button(key="h2h_train_next").click().run()
    _answer(at, 2)
    assert at.button(key="h2h_train_next").label == "See my result"
    assert q.qualification_of(eng, rater.rater_id).status == "passed"
    for _load in range(2):  # a reload, and coming back later: a new tab state each time
        at = _rate(rater)
        assert not at.exception and not at.get("progress")
        assert at.success and "You passed the training round" in at.success[0].value
        assert "100% of 2 scores" in at.success[0].value
    at.button(key="h2h_train_start").click().run()
    assert at.get("progress"), "acknowledged: the rating form"
    at = _rate(rater)
    assert at.get("progress") and not at.success, "the result is not shown again"
    assert q.qualification_of(eng, rater.rater_id).acknowledged_at is not None


def test_a_release_is_shown_once_and_a_new_round_asks_again(demo_db):
    """Released by an admin after failing: the rater is told on their next page load (until
    they start rating); sent back to training later, the new round's result waits again."""
    eng, rater = demo_db["engine"], demo_db["rater"]
    q.set_gold(eng, "dlg-001-aster", "empathy", 5, "Names the plant and the fix.")
    q.set_gold(eng, "dlg-002-cedar", "empathy", 2, "Generic.")
    at = _rate(rater)
    _answer(at, 1)
    at.button(key="h2h_train_next").click().run()
    _answer(at, 1)
    assert q.qualification_of(eng, rater.rater_id).status == "failed"
    q.release(eng, rater.name)
    at = _rate(rater)
    assert at.success and "released you" in at.success[0].value and not at.get("progress")
    at.button(key="h2h_train_start").click().run()
    assert at.get("progress")
    q.retrain(eng, rater.name)
    at = _rate(rater)
    assert at.title[0].value == "Training"
    _answer(at, 5)
    at.button(key="h2h_train_next").click().run()
    _answer(at, 2)
    at = _rate(rater)
    assert at.success and "You passed the training round" in at.success[0].value


def test_feedback_shows_the_reply_and_one_note_once(demo_db):
    """Issue 34: the item's single note was the "why" of every dimension (the Safety "why"
    talked about a garlic tip) and the reply that was rated was gone. The reply is shown;
    a note every dimension shares is shown once, under it; each dimension keeps its own."""
    eng = demo_db["engine"]
    note = "Remembers the drooping plant and gives a small practical garlic tip."
    for dim, own in (("empathy", "Excellent: warm and specific."),
                     ("safety", "Exemplary: nothing risky."),
                     ("fluency", "Natural: reads easily.")):
        q.set_gold(eng, "dlg-001-aster", dim, 5, f"{own} {note}")
    at = _rate(demo_db["rater"])
    for r in at.radio:
        r.set_value(5)
    at.button[0].click().run()
    html = _html(at)
    reply = html[html.index("The reply you rated"):]
    assert 'data-testid="h2h-response"' in reply
    assert html.count("garlic tip") == 1  # once, in the note under the reply
    assert 'data-testid="h2h-gold-note"' in html
    table = html[html.index('data-testid="h2h-feedback"'):]
    assert "Exemplary: nothing risky." in table and "garlic" not in table


def test_attention_checks_section_leads_with_a_chart_and_names_stay_inert(demo_db):
    """Issue 34: a chart leads each section. Attention checks: passed and failed per rater,
    the rate with its count; a rater name that is HTML is drawn as its characters."""
    eng = demo_db["engine"]
    at = AppTest.from_file(str(APP_DIR / "views" / "admin_quality.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = demo_db["admin"]
    at.run()
    assert not at.exception
    assert any("Nobody has answered an attention check yet" in c.value for c in at.caption)

    made = q.add_instructed_checks(eng, 3, 2)
    evil = '<img src="http://127.0.0.1:9/h2hpwn.png"><b>eve</b>'
    with write_session(eng) as s:  # a name an older study could hold (imported unchecked)
        eve = Rater(name=evil, role="rater")
        s.add(eve)
        s.flush()
        eve_id = eve.id
    checks = q.attention_checks(eng)
    right = {i: dict(checks[i].expected) for i in made}
    wrong = {i: {d: None for d in checks[i].expected} for i in made}  # cannot rate: fails
    pat = demo_db["rater"].rater_id
    for item_id, scores in ((made[0], right), (made[1], right), (made[2], wrong)):
        q.save_attention(eng, pat, item_id, scores[item_id], 20.0)
    q.save_attention(eng, eve_id, made[0], right[made[0]], 20.0)

    at.run()
    assert not at.exception
    specs = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    chart = next(s for s in specs if s["layout"]["xaxis"]["title"]["text"]
                 == "Attention checks answered")
    # the chart leads the section: right under its heading, before the table of checks
    order = _flat(at)
    head = order.index(("subheader", "Attention checks"))
    assert order[head + 1] == ("plotly_chart", "Attention checks answered")
    assert ("dataframe", "item,kind,tolerance,expected") in order[head + 2:]
    # worst pass rate first: pat 2 of 3, then eve 1 of 1
    ticks = chart["layout"]["yaxis"]["ticktext"]
    assert ticks == ["pat", "&lt;img src=\"http://127.0.0.1:9/h2hpwn.png\"&gt;&lt;b&gt;eve"
                            "&lt;/b&gt;"]
    passed, failed, rates = chart["data"]
    assert (passed["x"], failed["x"]) == ([2, 1], [1, 0])
    assert failed["marker"]["color"] == "#D55E00" and failed["marker"]["pattern"]["shape"] == "x"
    assert rates["text"] == ["2/3 (67%)", "1/1 (100%)"]
    assert "<img" not in json.dumps(chart) and "<b>" not in json.dumps(chart)
    assert all("<" not in c for c in passed["customdata"] + failed["customdata"])


def _flat(at: AppTest) -> list[tuple[str, str]]:
    """The page's headings, charts and dataframes in the order drawn: (type, the heading's
    text, the chart's x-axis title or the dataframe's columns)."""
    out = []

    def walk(node):
        kind = getattr(node, "type", "")
        if kind == "subheader":
            out.append((kind, node.value))
        elif kind == "plotly_chart":
            spec = json.loads(node.proto.spec)
            out.append((kind, spec["layout"].get("xaxis", {}).get("title", {}).get("text", "")))
        elif kind == "dataframe":
            out.append((kind, ",".join(node.value.columns)))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return out


def test_gold_scores_read_as_levels_of_their_scale(demo_db):
    """The Gold items table showed "5.0000" for a gold score of 5 (a user trial)."""
    eng = demo_db["engine"]
    q.set_gold(eng, "dlg-001-aster", "empathy", 5, "Names the plant and the fix.")
    at = AppTest.from_file(str(APP_DIR / "views" / "admin_quality.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = demo_db["admin"]
    at.run()
    assert not at.exception
    table = next(t.value for t in at.table if "Rationale" in t.value.columns)
    # a text "5": a float would be drawn as 5.0000 (st.table's format for numbers)
    assert table.loc["dlg&#45;001&#45;aster", "Score"] == "5"
