"""The side-by-side form: the shared context once, the two replies side by side (one under the
other below 900 px), a preference per dimension, save and move on.

Built like the rating form (:mod:`annotate.components.rating_form`): a fragment, the save in
the button's callback, the same keyboard script (digits choose an option of the highlighted
scale — 1 "A much better" … 5 "B much better", or 1–3 on a 3-point rubric — ``x`` "cannot
compare", ↑/↓/Tab move, Enter saves), the same number box, Resume and the question before
unsaved choices are lost. Blinded: "A" is whichever reply this rater's queue puts on the left.
"""

from __future__ import annotations

import time

import streamlit as st

from annotate import session, state
from annotate.components.keyboard import SHORTCUTS, keyboard_shortcuts
from annotate.components.rating_form import ITEM_BOX_WIDTH, LEAVE_UNSAVED
from annotate.i18n import _, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services import pair_queue
from annotate.services.auth import Identity, SessionEnded
from annotate.services.i18n import N_
from annotate.services.render import (
    md_text,
    missing_html,
    pair_anchors_store_html,
    pair_html,
    pair_ready_marker_html,
    shortcuts_html,
    untranslated_md,
)
from data.errors import H2HError

__all__ = ["pair_form", "queue_kind", "PAIR_SHORTCUTS", "CANNOT"]

CANNOT = "cannot"
ITEM_NO = state.RATE_ITEM_NO  # the same box as the rating form (the keyboard script knows it)
COMMENT = state.PAIR_COMMENT
PAIR_SHORTCUTS = [("1–5", N_("choose on the highlighted dimension")),
                  ("x", N_("cannot compare"))] + SHORTCUTS[2:]
OPTION_HINT = N_("Point at or choose an option to see it here.")
CANNOT_HINT = N_("Cannot compare — the replies cannot be compared on this dimension (for "
                 "example one is empty or in a language you do not read); say why in the "
                 "comment.")


def _key(dim: str) -> str:
    return f"score-pair-{dim}"  # "score-": the page styles and the keyboard script find it


def _load(view: pair_queue.PairView) -> None:
    keys = [_key(d.key) for d in view.dimensions] + [COMMENT]
    if st.session_state.get(state.PAIR_LOADED) == view.assignment_id \
            and all(k in st.session_state for k in keys):
        return
    draft = st.session_state.pop(state.PAIR_DRAFT, None)
    if draft is not None and draft["assignment_id"] == view.assignment_id:
        for k, v in draft["values"].items():
            st.session_state[k] = v
        st.session_state[state.PAIR_LOADED] = view.assignment_id
        st.session_state[state.PAIR_MESSAGE] = _("Your choices on this pair were kept; press "
                                                 "“Save and next” to save them.")
        return
    for d in view.dimensions:
        st.session_state[_key(d.key)] = view.saved.get(d.key)
    st.session_state[COMMENT] = view.comment
    st.session_state[state.PAIR_LOADED] = view.assignment_id


def _option(view: pair_queue.PairView, value) -> int | str | None:
    """A scale's value as one of its options, else None (not chosen)."""
    if value == CANNOT:
        return CANNOT
    if isinstance(value, int) and value in pair_queue.scale_options(view.points):
        return value
    return None


def _save(who: Identity, view: pair_queue.PairView) -> None:
    options: dict[str, int | None] = {}
    missing = []
    for d in view.dimensions:
        v = _option(view, st.session_state.get(_key(d.key)))
        if v is None:
            missing.append(d.key)
        else:
            options[d.key] = None if v == CANNOT else int(v)
    if missing:
        st.session_state[state.PAIR_MISSING] = missing
        return
    shown = st.session_state.get(state.PAIR_SHOWN_AT)
    secs = time.monotonic() - shown[1] if shown and shown[0] == view.assignment_id else None
    try:
        pair_queue.save_pair(engine(), who, view, options, st.session_state.get(COMMENT, ""),
                             secs)
    except SessionEnded as exc:
        keys = [_key(d.key) for d in view.dimensions] + [COMMENT]
        st.session_state[state.PAIR_DRAFT] = {"assignment_id": view.assignment_id,
                                              "values": {k: st.session_state.get(k)
                                                         for k in keys}}
        st.session_state.pop(state.PAIR_LOADED, None)
        session.end_here(session.ended_message(exc, unsaved_kept=True))
        return
    except H2HError as exc:
        st.session_state[state.PAIR_MESSAGE] = tr(exc)
        return
    nxt = pair_queue.next_pair_position(engine(), who.rater_id, view.position)
    if nxt is None:
        nxt = pair_queue.pair_progress(engine(), who.rater_id).current or view.position
    st.session_state[state.PAIR_POS] = nxt


def _jump(rater_id: int) -> None:
    number = st.session_state.get(ITEM_NO)
    if number:
        _go(pair_queue.pair_position_of_number(engine(), rater_id, int(number)))


def _go(pos: int | None) -> None:
    if pos is not None:
        st.session_state[state.PAIR_POS] = pos


def _labels(view: pair_queue.PairView) -> dict:
    texts = pair_queue.OPTION_TEXTS[view.points]
    labels = {k: f"**{k}** {md_text(_(t))}" for k, t in zip(pair_queue.scale_options(
        view.points), texts, strict=True)}
    labels[CANNOT] = _("Cannot compare")
    return labels


def _scale_label(d) -> str:
    base = getattr(d, "fallback_language", None)
    tag = untranslated_md(base, _) if base is not None and "label" in getattr(
        d, "fallback", ()) else ""
    return md_text(d.label) + tag


def queue_kind(who: Identity) -> str:
    """Which queue the Rate page shows: "items" or "pairs" (an assignment says which kind a
    rater gets). With both, a switch at the top; it starts on the one with work left, single
    replies first."""
    from annotate.services import queue

    eng = engine()
    items, pairs = queue.progress(eng, who.rater_id), pair_queue.pair_progress(eng,
                                                                                who.rater_id)
    if not pairs.total:
        return "items"
    if not items.total:
        return "pairs"
    if state.QUEUE_KIND not in st.session_state:
        st.session_state[state.QUEUE_KIND] = ("items" if items.current is not None
                                              or pairs.current is None else "pairs")
    names = {"items": _("Single replies ({done}/{total})").format(done=items.done,
                                                                  total=items.total),
             "pairs": _("Side by side ({done}/{total})").format(done=pairs.done,
                                                                total=pairs.total)}
    st.segmented_control(_("Your work"), ["items", "pairs"], format_func=names.get,
                         key=state.QUEUE_KIND, label_visibility="collapsed")
    return st.session_state.get(state.QUEUE_KIND) or "items"


def pair_form(who: Identity) -> None:
    """The form, and the keyboard script beside it (outside the fragment, as on the rating
    page: it finds each new pair by the form's end marker)."""
    _form(who)
    keyboard_shortcuts()


@st.fragment
def _form(who: Identity) -> None:
    if session.identity() is None or session.current() is None:
        st.rerun(scope="app")
    eng = engine()
    rubric = cached_rubric(eng, language())
    prog, view = pair_queue.pair_page(eng, who.rater_id, st.session_state.get(state.PAIR_POS),
                                      rubric)
    if prog.total == 0:
        st.info(_("No pairs are assigned to you yet. The study team will let you know."))
        return
    if view is None:
        st.session_state[state.PAIR_POS] = None
        st.rerun(scope="fragment")
    st.session_state[state.PAIR_POS] = view.position
    if st.session_state.get(state.PAIR_SHOWN_AT, (None,))[0] != view.assignment_id:
        st.session_state[state.PAIR_SHOWN_AT] = (view.assignment_id, time.monotonic())
    _load(view)
    st.session_state[ITEM_NO] = view.number
    top = st.container(horizontal=True, vertical_alignment="bottom", key="h2h_top")
    top.progress(prog.done / prog.total, text=_("{done} of {total} pairs done · pair {number}")
                 .format(done=prog.done, total=prog.total, number=view.number))
    top.number_input(_("Pair"), min_value=1, max_value=prog.total, step=1, key=ITEM_NO,
                     on_change=_jump, args=(who.rater_id,), width=ITEM_BOX_WIDTH,
                     help=_("− / + go to the previous / next pair; type a number to jump"))
    top.button(_("Resume"), on_click=_go, args=(prog.current,), key="h2h_resume",
               disabled=prog.current is None or prog.current == view.position,
               help=_("Jump to the first pair you have not finished"), width="content")
    if prog.current is None:
        st.success(_("You have compared every pair assigned to you. Thank you! You can still "
                     "go back and change a choice."))
    if view.completed:
        st.caption(_("You already saved this pair; changes are saved as a new revision."))
    st.html(pair_html(view, _=_))
    labels = _labels(view)
    with st.form("h2h_pair_form", border=False):
        st.caption(_("Which reply is better on each dimension? A is the first reply (on the "
                     "left, or above on a narrow screen), B the second."))
        for d in view.dimensions:
            options = [*pair_queue.scale_options(view.points), CANNOT]
            st.radio(_scale_label(d), options, key=_key(d.key), horizontal=True,
                     format_func=labels.__getitem__)
        st.text_area(_("Comment (optional)"), key=COMMENT, height=80)
        if missing := st.session_state.pop(state.PAIR_MISSING, None):
            names = {d.key: d.label for d in view.dimensions}
            st.html(missing_html(_("Choose on every dimension or mark it “Cannot compare” "
                                   "first:"), [(i, names[k]) for i, k in enumerate(names)
                                               if k in missing]))
        if msg := st.session_state.pop(state.PAIR_MESSAGE, None):
            st.warning(msg)
        st.form_submit_button(_("Save and next"), type="primary", on_click=_save,
                              args=(who, view), key="h2h_save", width="stretch")
    texts = [_(t) for t in pair_queue.OPTION_TEXTS[view.points]]
    st.html(shortcuts_html([(k, _(v)) for k, v in PAIR_SHORTCUTS], _("Keyboard:"))
            .replace("1–5", "1–" + str(view.points))
            + pair_anchors_store_html(view.dimensions, texts, _(OPTION_HINT), _(CANNOT_HINT),
                                      all_label=_("All anchors"), _=_)
            + pair_ready_marker_html(view, _(LEAVE_UNSAVED)))

