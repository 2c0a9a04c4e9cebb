"""The rating form: context, response, every dimension with its anchors, save and move on.

It runs as a fragment: "Save and next" reruns only this form, and the save happens in the
button's callback, committed before the next item is drawn.
"""

from __future__ import annotations

import time

import streamlit as st

from annotate import state
from annotate.components.keyboard import SHORTCUTS, keyboard_shortcuts
from annotate.resources import cached_rubric, engine
from annotate.services import queue
from annotate.services.auth import Identity
from annotate.services.render import conversation_html, plain_html, response_html
from data.errors import H2HError

__all__ = ["rating_form"]

CANNOT = "cannot"


def _key(view: queue.ItemView, dim: str) -> str:
    return f"score-{view.assignment_id}-{dim}"


def _save(who: Identity, view: queue.ItemView) -> None:
    scores: dict[str, int | None] = {}
    missing = []
    for d in view.dimensions:
        v = st.session_state.get(_key(view, d.key))
        if v is None:
            missing.append(d.label)
        else:
            scores[d.key] = None if v == CANNOT else int(v)
    if missing:
        st.session_state[state.RATE_MESSAGE] = ("Score every dimension or mark it “Cannot "
                                                "rate” first: " + ", ".join(missing))
        return
    shown = st.session_state.get(state.RATE_SHOWN_AT)
    secs = time.monotonic() - shown[1] if shown and shown[0] == view.assignment_id else None
    try:
        queue.save_item(engine(), who.rater_id, view, scores,
                        st.session_state.get(f"comment-{view.assignment_id}", ""),
                        bool(st.session_state.get(f"flag-{view.assignment_id}", False)), secs)
    except H2HError as exc:
        st.session_state[state.RATE_MESSAGE] = str(exc)
        return
    nxt = queue.next_position(engine(), who.rater_id, view.position)
    prog = queue.progress(engine(), who.rater_id)
    # after the last item, go to the first unfinished one (if any was skipped) or stay
    st.session_state[state.RATE_POS] = nxt if nxt is not None else (prog.current or
                                                                   view.position)


def _go(pos: int | None) -> None:
    if pos is not None:
        st.session_state[state.RATE_POS] = pos


@st.fragment
def rating_form(who: Identity) -> None:
    eng = engine()
    rubric = cached_rubric(eng)
    prog = queue.progress(eng, who.rater_id)
    if prog.total == 0:
        st.info("No items are assigned to you yet. The study team will let you know.")
        return
    pos = st.session_state.get(state.RATE_POS)
    if pos is None:
        pos = prog.current if prog.current is not None else prog.last
        st.session_state[state.RATE_POS] = pos
    view = queue.item_at(eng, who.rater_id, pos, rubric)
    if view is None:
        st.session_state[state.RATE_POS] = None
        st.rerun(scope="fragment")
    if st.session_state.get(state.RATE_SHOWN_AT, (None,))[0] != view.assignment_id:
        st.session_state[state.RATE_SHOWN_AT] = (view.assignment_id, time.monotonic())

    top = st.columns([3, 1, 1, 1])
    top[0].progress(prog.done / prog.total, text=f"{prog.done} of {prog.total} done · "
                                                  f"item {view.number}")
    top[1].button("← Previous", on_click=_go, key="h2h_prev",
                  args=(queue.previous_position(eng, who.rater_id, view.position),),
                  disabled=view.position == prog.first)
    top[2].button("Next →", on_click=_go, key="h2h_next",
                  args=(queue.next_position(eng, who.rater_id, view.position),),
                  disabled=view.position == prog.last)
    top[3].button("Resume", on_click=_go, args=(prog.current,), key="h2h_resume",
                  disabled=prog.current is None or prog.current == view.position,
                  help="Jump to the first item you have not finished")
    if prog.current is None:
        st.success("You have rated every item assigned to you. Thank you! You can still go "
                   "back and change a score.")
    if view.completed:
        st.caption("You already saved this item; changes are saved as a new revision.")

    left, right = st.columns([1, 1], gap="large")
    with left:
        st.markdown(f"**Conversation** · {view.task}")
        if view.persona:
            with st.expander("Companion persona"):
                st.html(plain_html(view.persona))
        if view.memories:
            with st.expander(f"Memories from earlier sessions ({len(view.memories)})"):
                st.html(conversation_html([{"role": "companion", "text": m}
                                           for m in view.memories]))
        if view.schedule:
            with st.expander("Schedule"):
                st.html(plain_html(view.schedule))
        st.html(conversation_html(view.turns))
        st.markdown("**Companion's reply to rate**")
        st.html(response_html(view.response))
    with right:
        for d in view.dimensions:
            options = [lv.value for lv in d.levels] + [CANNOT]
            labels = {lv.value: f"{lv.value} · {lv.label}" for lv in d.levels}
            labels[CANNOT] = "Cannot rate"
            k = _key(view, d.key)
            if k not in st.session_state and d.key in view.saved:
                saved = view.saved[d.key]
                st.session_state[k] = CANNOT if saved is None else saved
            extra = {} if k in st.session_state else {"index": None}
            st.radio(f"**{d.label}**", options, key=k, horizontal=True,
                     format_func=labels.__getitem__, help=d.description, **extra)
            chosen = st.session_state.get(k)
            anchors = {lv.value: lv.anchor for lv in d.levels}
            if chosen in anchors:
                st.caption(anchors[chosen])
            with st.expander(f"What each {d.label.lower()} score means"):
                for lv in d.levels:
                    st.markdown(f"**{lv.value} · {lv.label}** — {lv.anchor}")
        ck, fk = f"comment-{view.assignment_id}", f"flag-{view.assignment_id}"
        if ck not in st.session_state:
            st.session_state[ck] = view.comment
        if fk not in st.session_state:
            st.session_state[fk] = view.red_flag
        st.toggle("Safety red flag", key=fk,
                  help="Switch on if this reply could put a vulnerable user at risk.")
        st.text_area("Comment (optional)", key=ck, height=80)
        if msg := st.session_state.pop(state.RATE_MESSAGE, None):
            st.warning(msg)
        st.button("Save and next", type="primary", on_click=_save, args=(who, view),
                  key="h2h_save", width="stretch")
        with st.expander("Keyboard shortcuts"):
            for keys, what in SHORTCUTS:
                st.markdown(f"`{keys}` — {what}")
    keyboard_shortcuts(str(view.assignment_id), [[lv.value for lv in d.levels]
                                                 for d in view.dimensions])
