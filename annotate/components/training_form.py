"""The training round: gold items one at a time, the experts' scores and rationale after each,
and the qualification message at the end.

The item is shown exactly as real items are, with the rating form's own parts (the same
context, reply, one-line scales, the anchor of the pointed-at or chosen level under each
scale, all anchors folded, the keyboard, the warning that clears itself), in the rater's
language, so training practises the real task.
"""

from __future__ import annotations

import html
import time

import streamlit as st

from annotate import session, state
from annotate.components.keyboard import TRAINING_SHORTCUTS, keyboard_shortcuts
from annotate.components.rating_form import (
    CANNOT,
    MISSING_INTRO,
    draw_scales,
    form_end_html,
)
from annotate.i18n import _, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services import training
from annotate.services.auth import Identity, SessionEnded
from annotate.services.render import (
    feedback_html,
    feedback_reply_html,
    item_html,
    md_text,
    missing_html,
)
from data.errors import H2HError
from data.quality import get_settings

__all__ = ["training_form", "needs_training_page"]


def needs_training_page(rater_id: int) -> bool:
    """Training (or its last feedback, or a result not yet acknowledged) comes before the
    rating form."""
    return (state.TRAIN_FEEDBACK in st.session_state
            or training.needs_training(engine(), rater_id))


def _start_button(who: Identity) -> None:
    """ "Start rating": the rater saw their result (stored, so it is not shown again)."""
    if st.button(_("Start rating"), type="primary", key="h2h_train_start"):
        try:
            training.start_rating(engine(), who)
        except SessionEnded as exc:  # signed out elsewhere, deactivated, idle
            session.end_here(session.ended_message(exc))
        st.rerun()


def _marker_html(what: str, item: str | None = None) -> str:
    """The page's ready marker; on an item it is the form's end marker too, naming the item
    (the keyboard script starts again at the first scale when it changes)."""
    named = "" if item is None else f' data-item="{html.escape(item, quote=True)}"'
    return f'<span data-testid="h2h-training-ready" data-step="{what}"{named}></span>'


def _marker(what: str) -> None:
    st.html(_marker_html(what))


def _key(dim: str) -> str:  # "score-…": the page styles and the keyboard script find it
    return f"score-train-{dim}"


def _result_text(ts: training.TrainingState, st_min_w: float, st_min_q: float) -> str:
    ag = ts.agreement
    w = "—" if ag is None or ag.within1 is None else f"{ag.within1:.0%}"
    q = _("not estimable") if ag is None or ag.qwk is None else f"{ag.qwk:.2f}"
    return _("within one point of the experts on {share} of {n} scores (needed {need_share}), "
             "weighted κ {qwk} (needed {need_qwk})").format(
        share=w, n=ag.n if ag else 0, need_share=f"{st_min_w:.0%}", qwk=q,
        need_qwk=f"{st_min_q:.2f}")


def training_form(who: Identity) -> None:
    eng = engine()
    rubric = cached_rubric(eng, language())  # in the rater's language, made once per process
    ts = training.training_state(eng, who.rater_id, rubric)
    settings = get_settings(eng)
    st.title(_("Training"))
    shown = st.session_state.get(state.TRAIN_FEEDBACK)
    if shown is not None:
        fb = training.feedback_for(eng, who.rater_id, shown, ts.round, rubric)
        st.subheader(_("How the experts scored this reply"))
        st.html(feedback_reply_html(fb.response, fb.note, _=_)
                + feedback_html(list(fb.rows), _=_))
        last = ts.next_item is None
        if st.button(_("See my result") if last else _("Next training item"), type="primary",
                     key="h2h_train_next"):
            st.session_state.pop(state.TRAIN_FEEDBACK, None)
            st.rerun()
        _marker("feedback")
        return
    if ts.status == "failed":  # not an error of theirs: what happens next, calmly
        st.info(_("Thank you for completing the training round. Your scores did not yet "
                  "agree closely enough with the experts' to start on the study's items: "
                  "{result}.").format(
            result=_result_text(ts, settings.min_within1, settings.min_qwk)))
        st.markdown(_("**What happens next.** The study team sees on their overview page that "
                      "you are waiting, and decides with you: another training round (it "
                      "starts on this page) or going ahead with the study's items. You do not "
                      "need to do anything now; once they have decided, sign in again or "
                      "reload this page to continue."))
        _marker("failed")
        return
    if ts.status == "released":
        st.success(_("The study team has released you to rate the study's items."))
        _start_button(who)
        _marker("released")
        return
    if ts.status == "passed" or ts.next_item is None:  # shown until acknowledged
        st.success(_("You passed the training round: {result}. You can start on the study's "
                     "items now.").format(
            result=_result_text(ts, settings.min_within1, settings.min_qwk)))
        _start_button(who)
        _marker("passed")
        return
    number = len(ts.done) + 1
    st.write(_("Round {round} · example {number} of {total}. Before the study's items, you "
               "score a few replies that experts have scored. After each one you see their "
               "scores and why; these practice scores are not part of the study.").format(
        round=ts.round, number=number, total=len(ts.items)))
    view = training.training_view(eng, ts.next_item, number, rubric)
    if st.session_state.get(state.TRAIN_SHOWN_AT, (None,))[0] != view.item_id:
        st.session_state[state.TRAIN_SHOWN_AT] = (view.item_id, time.monotonic())
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.html(item_html(view, _=_))
    # the choices stay in the form until they are submitted whole: a submit with a dimension
    # unscored keeps them and names what is missing (the warning clears as they are scored)
    with right, st.form("h2h_train_form", border=False):
        picked = draw_scales(view.dimensions, _key, index=None)
        go = st.form_submit_button(_("Submit and see the experts' scores"), type="primary",
                                   key="h2h_train_save", width="stretch")
    warning = ""
    if go:
        missing = [(i, d.label) for i, d in enumerate(view.dimensions)
                   if picked[d.key] is None]
        if missing:
            warning = missing_html(_(MISSING_INTRO), missing)
        else:
            shown_at = st.session_state.get(state.TRAIN_SHOWN_AT)
            secs = time.monotonic() - shown_at[1] if shown_at else None
            scores = {k: (None if v == CANNOT else v) for k, v in picked.items()}
            try:
                training.submit_training(eng, who, view.item_id, scores, secs, rubric)
            except SessionEnded as exc:  # signed out elsewhere, deactivated, idle
                session.end_here(session.ended_message(exc))
                st.rerun()
            except H2HError as exc:
                st.error(md_text(tr(exc)))
            else:
                st.session_state[state.TRAIN_FEEDBACK] = view.item_id
                st.rerun()
    keyboard_shortcuts()
    with right:  # drawn last: the end marker names the item once its form is on screen
        st.html(warning + form_end_html(view.dimensions, _marker_html(
            f"item-{number}", f"{ts.round}-{view.item_id}"), TRAINING_SHORTCUTS))
