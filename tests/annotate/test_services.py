"""Services behind the pages, without Streamlit: the queue, inert text."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from annotate.services import queue
from annotate.services.render import conversation_html, response_html
from data.errors import H2HError
from data.study import current_rubric


def test_queue_resume_save_and_repeats(demo_db):
    eng, who = demo_db["engine"], demo_db["rater"]
    rub = current_rubric(eng)
    prog = queue.progress(eng, who.rater_id)
    assert (prog.done, prog.total) == (0, 162) and prog.current == prog.first
    view = queue.item_at(eng, who.rater_id, prog.current, rub)
    assert not hasattr(view, "model") and not hasattr(view, "condition")
    with pytest.raises(H2HError, match="score every dimension"):
        queue.save_item(eng, who, view, {}, "", False, 3.0)
    scores = {d.key: 3 for d in view.dimensions}
    scores[view.dimensions[0].key] = None  # cannot rate
    queue.save_item(eng, who, view, scores, "  unsure  ", True, 12.0)
    prog2 = queue.progress(eng, who.rater_id)
    assert prog2.done == 1 and prog2.current > prog.current
    again = queue.item_at(eng, who.rater_id, prog.current, rub)
    # the comment as the rater wrote it, spaces and all (issue 36)
    assert again.completed and again.saved == scores and again.comment == "  unsure  "
    assert again.red_flag
    # the hidden repeat of an item stores into repeat_rating, the original is untouched
    with eng.connect() as c:
        pos = c.execute(sa.text("SELECT position FROM assignment WHERE rater_id=:r AND "
                                "kind='repeat' ORDER BY position LIMIT 1"),
                        {"r": who.rater_id}).scalar_one()
    rep = queue.item_at(eng, who.rater_id, pos, rub)
    assert rep.repeat and rep.saved == {}
    queue.save_item(eng, who, rep, {d.key: 2 for d in rep.dimensions}, "", False, 1)
    with eng.connect() as c:
        n_rep = c.execute(sa.text("SELECT COUNT(*) FROM repeat_rating")).scalar_one()
        orig = c.execute(sa.text("SELECT COUNT(*) FROM rating WHERE rater_id=:r"),
                         {"r": who.rater_id}).scalar_one()
    assert n_rep == len(rep.dimensions) and orig == len(view.dimensions)


def test_page_reads_what_progress_and_item_at_read(demo_db):
    """The rating page's one read equals the two separate ones: progress, and the item at
    the given position, or at the first unfinished one, or at the last once all are done."""
    eng, who = demo_db["engine"], demo_db["rater"]
    rub, rid = current_rubric(eng), demo_db["rater"].rater_id
    prog = queue.progress(eng, rid)
    assert prog.current == prog.first  # nothing saved yet
    assert queue.page(eng, rid, None, rub) == (prog, queue.item_at(eng, rid, prog.first, rub))
    view = queue.item_at(eng, rid, prog.first, rub)
    queue.save_item(eng, who, view, {d.key: 4 for d in view.dimensions}, "ok", False, 2.0)
    prog = queue.progress(eng, rid)
    assert (prog.done, prog.current) == (1, queue.next_position(eng, rid, prog.first))
    for pos in (None, prog.first, prog.current, prog.last):
        expect = prog.current if pos is None else pos
        assert queue.page(eng, rid, pos, rub) == (prog, queue.item_at(eng, rid, expect, rub))
    assert queue.page(eng, rid, prog.first, rub)[1].saved == {d.key: 4 for d in
                                                             view.dimensions}
    assert queue.page(eng, rid, prog.last + 1, rub) == (prog, None)  # no such position
    with eng.begin() as c:  # every item done: the page opens at the last one
        c.execute(sa.text("UPDATE assignment SET completed_at = CURRENT_TIMESTAMP "
                          "WHERE rater_id = :r"), {"r": rid})
    done = queue.progress(eng, rid)
    assert done.current is None and done.done == done.total
    assert queue.page(eng, rid, None, rub) == (done, queue.item_at(eng, rid, done.last, rub))
    admin = demo_db["admin"].rater_id  # no items at all
    empty = queue.page(eng, admin, None, rub)
    assert empty == (queue.Progress(0, 0, None, None, None), None)


def test_cannot_save_into_someone_elses_assignment(demo_db):
    eng = demo_db["engine"]
    rub = current_rubric(eng)
    pat = demo_db["rater"]
    view = queue.item_at(eng, pat.rater_id, queue.progress(eng, pat.rater_id).current, rub)
    with pytest.raises(H2HError, match="not in your queue"):
        queue.save_item(eng, demo_db["admin"], view,
                        {d.key: 3 for d in view.dimensions}, "", False, None)
    assert queue.position_of_item(eng, demo_db["admin"].rater_id, view.item_id) is None


def test_rendering_escapes_everything():
    evil = "<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n![x](http://h/x.png)"
    out = conversation_html([{"role": "user", "text": evil}]) + response_html(evil)
    assert "<script>alert" not in out and "<img src=x" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "![x](http://h/x.png)" in out  # shown literally; no markdown is ever parsed


def test_the_days_outfit_is_shown_to_raters_escaped(demo_db):
    """An item's outfit (H2HTalk protocol context) reaches the rater's view, inert."""
    from annotate.services.render import context_html

    html = context_html("Mira", [], None, "<b>red</b> coat")
    assert "Today's outfit" in html and "&lt;b&gt;red&lt;/b&gt; coat" in html
    assert "Today's outfit" not in context_html("Mira", [], None)
    eng, who = demo_db["engine"], demo_db["rater"]
    pos = queue.progress(eng, who.rater_id).first
    view = queue.item_at(eng, who.rater_id, pos, current_rubric(eng))
    with eng.begin() as c:
        ctx = c.execute(sa.text("SELECT context FROM item WHERE id = :i"),
                        {"i": view.item_id}).scalar_one()
        ctx = json.loads(ctx) if isinstance(ctx, str) else ctx
        c.execute(sa.text("UPDATE item SET context = :c WHERE id = :i"),
                  {"c": json.dumps({**ctx, "outfit": "yellow raincoat"}), "i": view.item_id})
    assert queue.item_at(eng, who.rater_id, pos, current_rubric(eng)).outfit == \
        "yellow raincoat"


def test_go_to_item_number(demo_db):
    eng, who = demo_db["engine"], demo_db["rater"]
    prog = queue.progress(eng, who.rater_id)
    assert queue.position_of_number(eng, who.rater_id, 1) == prog.first
    assert queue.position_of_number(eng, who.rater_id, prog.total) == prog.last
    assert queue.position_of_number(eng, who.rater_id, prog.total + 1) is None
    view = queue.item_at(eng, who.rater_id, queue.position_of_number(eng, who.rater_id, 7),
                         current_rubric(eng))
    assert view.number == 7


def test_hidden_repeats_feed_the_retest_block_of_the_analysis(demo_db):
    from analysis.analyze import AnalysisOptions, analyze
    from analysis.study import study_frames, study_repeats

    eng, who = demo_db["engine"], demo_db["rater"]
    rub = current_rubric(eng)
    with eng.connect() as c:
        reps = c.execute(sa.text("SELECT a.item_id, a.position FROM assignment a WHERE "
                                 "a.rater_id=:r AND a.kind='repeat' ORDER BY a.position"),
                         {"r": who.rater_id}).all()
    for k, (item_id, rep_pos) in enumerate(reps[:6]):
        first = queue.item_at(eng, who.rater_id, queue.position_of_item(eng, who.rater_id,
                                                                         item_id), rub)
        queue.save_item(eng, who, first, {d.key: 4 for d in first.dimensions}, "",
                        False, 1.0)
        second = queue.item_at(eng, who.rater_id, rep_pos, rub)
        queue.save_item(eng, who, second,
                        {d.key: 4 if k % 2 else 3 for d in second.dimensions}, "", False, 1.0)
    ratings, scales, ctx = study_frames(eng)
    res = analyze(ratings, scales, options=AnalysisOptions(B=50), context=ctx,
                  repeats=study_repeats(eng)).to_dict()
    rt = res["dimensions"]["empathy"]["retest"]
    assert rt["n_pairs"] == 6 and rt["exact"] == 0.5 and rt["within1"] == 1.0
    assert rt["raters"]["pat"] == {"n": 6, "exact": 0.5, "within1": 1.0}


def test_every_scales_anchors_in_one_hidden_store_escaped():
    """The rating form draws all anchors as one element (a hidden store the keyboard script
    copies under each scale): one block per dimension, in the scales' order, file text
    inert."""
    from types import SimpleNamespace as NS

    from annotate.services.render import anchors_store_html

    evil = "<img src=x onerror=alert(1)>"
    dims = [NS(description=evil, levels=[NS(value=1, label=evil, anchor=evil),
                                          NS(value=2, label="Good", anchor="fine")]),
            NS(description="", levels=[NS(value=1, label="Low", anchor='say "no"')])]
    out = anchors_store_html(dims, empty="Point", cannot="Cannot rate")
    assert out.startswith('<div class="h2h-anchor-src" hidden>')
    assert out.count('class="h2h-anchor-tpl"') == 2
    assert "<img" not in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert out.index("fine") < out.index("say &quot;no&quot;")
    # the last option of each scale is "cannot rate"
    assert out.count('data-level-index="2" class="h2h-cannot"') == 1
    assert out.count('data-level-index="1" class="h2h-cannot"') == 1


def test_the_ready_marker_carries_what_is_saved_escaped():
    """The browser tells unsaved choices by comparing the form with the marker: each scale's
    saved option as its index (a level by value, not by position in a list of numbers;
    "cannot rate" is the last option; -1 when nothing is saved), the flag and the comment —
    text the rater typed, inert in an attribute."""
    from types import SimpleNamespace as NS

    from annotate.services.render import ready_marker_html

    dims = [NS(key=k, levels=[NS(value=v) for v in values]) for k, values in
            (("empathy", (1, 2, 3, 4, 5)), ("safety", (1, 2, 3, 4, 5)),
             ("fluency", (1, 2, 3, 4, 5)), ("red", (0, 1)))]
    view = NS(assignment_id=7, dimensions=dims, saved={"empathy": 4, "safety": None,
                                                       "red": 0},
              red_flag=True, comment='"><script>x</script>')
    out = ready_marker_html(view, leave="Leave? \"yes\"")
    assert 'data-item="7"' in out and 'data-saved="3,5,-1,0"' in out
    assert 'data-flag="1"' in out
    assert "<script>" not in out and "&quot;&gt;&lt;script&gt;" in out
    assert 'data-leave="Leave? &quot;yes&quot;"' in out
