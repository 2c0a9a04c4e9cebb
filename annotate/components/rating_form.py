"""The rating form: context, response, every dimension with its anchors, save and move on.

It runs as a fragment: "Save and next" reruns only this form, and the save happens in the
button's callback, committed before the next item is drawn.
"""

from __future__ import annotations

import time

import streamlit as st

from annotate import session, state
from annotate.components.keyboard import SHORTCUTS, keyboard_shortcuts
from annotate.i18n import _, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services import queue
from annotate.services.auth import Identity, SessionEnded
from annotate.services.i18n import N_
from annotate.services.render import (
    anchors_store_html,
    item_html,
    md_text,
    missing_html,
    ready_marker_html,
    shortcuts_html,
    untranslated_md,
)
from data.errors import H2HError

__all__ = ["rating_form", "scale_labels", "score_value", "draw_scales", "anchored_radio",
           "form_end_html", "CANNOT", "MISSING_INTRO"]

CANNOT = "cannot"
ANCHOR_HINT = N_("Point at a level, or press ← →, to read its anchor here.")
CANNOT_ANCHOR = N_("Cannot rate — the reply cannot be judged on this dimension (for example "
                   "it is empty or in a language you do not read); say why in the comment.")
TASK_NAMES = (N_("dialogue"), N_("recollection"), N_("itinerary"))  # shown as translated
MISSING_INTRO = N_("Score every dimension or mark it “Cannot rate” first:")
LEAVE_UNSAVED = N_("The scores you chose on this item are not saved yet. Leave it and lose "
                   "them?")


# Widget keys stay the same from item to item so the browser updates the form in place
# instead of rebuilding it (measurably faster); _load() puts each item's values in them.
# The page styles and the keyboard script find the scales by these keys ("score-"; see
# render.SCALES).
def _key(dim: str) -> str:
    return f"score-{dim}"


COMMENT, FLAG, ITEM_NO = state.RATE_COMMENT, state.RATE_FLAG, state.RATE_ITEM_NO
ITEM_BOX_WIDTH = 170  # px: a five-digit item number with the box's − / +


def _load(view: queue.ItemView) -> None:
    """Fill the form's widgets with this item's saved values (or blanks) once per item —
    or with the choices of a save that met an ended session, kept across signing in again."""
    keys = [_key(d.key) for d in view.dimensions] + [COMMENT, FLAG]
    if st.session_state.get(state.RATE_LOADED) == view.assignment_id \
            and all(k in st.session_state for k in keys):
        return
    # Streamlit forgets a widget's value when a run does not draw it (the rater opened
    # Guidelines or Norming): the scales are filled again, or a radio would fall back to its
    # first option and "Save and next" would store 1 on every dimension.
    draft = st.session_state.pop(state.RATE_DRAFT, None)
    if draft is not None and draft["assignment_id"] == view.assignment_id:
        for k, v in draft["values"].items():
            st.session_state[k] = v
        st.session_state[state.RATE_LOADED] = view.assignment_id
        st.session_state[state.RATE_MESSAGE] = _("Your choices on this item were kept; "
                                                 "press “Save and next” to save them.")
        return
    for d in view.dimensions:
        saved = view.saved.get(d.key, "unsaved")
        st.session_state[_key(d.key)] = (None if saved == "unsaved" else
                                         CANNOT if saved is None else saved)
    st.session_state[COMMENT] = view.comment
    st.session_state[FLAG] = view.red_flag
    st.session_state[state.RATE_LOADED] = view.assignment_id


def _save(who: Identity, view: queue.ItemView) -> None:
    scores: dict[str, int | None] = {}
    missing = []
    for d in view.dimensions:
        v = score_value(d, st.session_state.get(_key(d.key)))
        if v is None:
            missing.append(d.key)
        else:
            scores[d.key] = None if v == CANNOT else v
    if missing:  # the browser hides this as soon as every dimension has a score
        st.session_state[state.RATE_MISSING] = missing
        return
    shown = st.session_state.get(state.RATE_SHOWN_AT)
    secs = time.monotonic() - shown[1] if shown and shown[0] == view.assignment_id else None
    try:
        queue.save_item(engine(), who, view, scores, st.session_state.get(COMMENT, ""),
                        bool(st.session_state.get(FLAG, False)), secs)
    except SessionEnded as exc:  # keep the choices for after signing in again
        keys = [_key(d.key) for d in view.dimensions] + [COMMENT, FLAG]
        st.session_state[state.RATE_DRAFT] = {
            "assignment_id": view.assignment_id,
            "values": {k: st.session_state.get(k) for k in keys}}
        st.session_state.pop(state.RATE_LOADED, None)
        session.end_here(session.ended_message(exc, unsaved_kept=True))
        return
    except H2HError as exc:
        st.session_state[state.RATE_MESSAGE] = tr(exc)
        return
    nxt = queue.next_position(engine(), who.rater_id, view.position)
    if nxt is None:  # after the last item: the first unfinished one (if any was skipped)
        nxt = queue.progress(engine(), who.rater_id).current or view.position
    st.session_state[state.RATE_POS] = nxt


def score_value(d, value) -> int | str | None:
    """A scale's value as one of its options (a level or ``CANNOT``), or None when nothing is
    chosen — also for a value that is no option: the browser may send a level's label of
    the language the page had before the rater switched, which must never be stored (nor
    end in a traceback); the scale then counts as not scored and the rater is asked."""
    if value == CANNOT:
        return CANNOT
    if isinstance(value, int | float) and value in {lv.value for lv in d.levels}:
        return int(value)
    return None


def _tag(obj, fld: str, base: str | None) -> str:
    """The "not translated" tag after a rubric text shown in the rubric's own language."""
    if base is None or fld not in getattr(obj, "fallback", ()):
        return ""
    return untranslated_md(base, _)


def scale_labels(d) -> tuple[str, dict]:
    """A dimension's radio label and its options' labels ("**3** Adequate": the number in
    bold, so narrow screens can show the number alone; "Cannot rate"), rubric text made
    inert (the radio reads Markdown) and tagged where it is not in the rater's language.
    The label is plain text (it is also the scale's accessible name); the page styles make
    it bold."""
    base = getattr(d, "fallback_language", None)
    labels = {lv.value: f"**{lv.value}** {md_text(lv.label)}{_tag(lv, 'label', base)}"
              for lv in d.levels}
    labels[CANNOT] = _("Cannot rate")
    return md_text(d.label) + _tag(d, "label", base), labels


def anchored_radio(d, label: str, *, key: str, index: int | None = None):
    """A scale read in full, for one considered decision (adjudication): a list of its
    levels, each with its number and name as on the rating form and its anchor under it
    (as written, images and HTML inert; tagged where not translated). Returns the
    chosen level's value, or None."""
    base = getattr(d, "fallback_language", None)
    _label, names = scale_labels(d)
    # a radio's captions are Markdown: the anchor shown literally (md_text), so no image,
    # HTML or link in rubric text can come out of it (rubric_text_html is for st.html only)
    captions = [md_text(lv.anchor) + _tag(lv, "anchor", base) for lv in d.levels]
    return st.radio(label, [lv.value for lv in d.levels], index=index, key=key,
                    format_func=names.__getitem__, captions=captions)


def draw_scales(dimensions, key, **radio) -> dict[str, object]:
    """Every dimension as a one-line segmented scale, number and level name in each box and
    "Cannot rate" last; ``key(dimension key)`` names its widget (the page styles and the
    keyboard script find the scales by keys that start with "score-"). Returns each
    dimension's value (:func:`score_value`: None when unscored)."""
    picked = {}
    for d in dimensions:
        options = [lv.value for lv in d.levels] + [CANNOT]
        label, labels = scale_labels(d)
        picked[d.key] = score_value(d, st.radio(label, options, key=key(d.key),
                                                horizontal=True,
                                                format_func=labels.__getitem__, **radio))
    return picked


def form_end_html(dimensions, marker: str, shortcuts=SHORTCUTS) -> str:
    """What follows a form of scales, as one element: the keyboard legend, every scale's
    anchors in a hidden store (the keyboard script copies each under its scale: the anchor of
    the level pointed at or chosen, and all anchors folded) and the form's end marker,
    drawn last."""
    return (shortcuts_html([(k, _(v)) for k, v in shortcuts], _("Keyboard:"))
            + anchors_store_html(dimensions, empty=_(ANCHOR_HINT), cannot=_(CANNOT_ANCHOR),
                                 all_label=_("All anchors"), _=_)
            + marker)


def _jump(rater_id: int) -> None:
    number = st.session_state.get(ITEM_NO)
    if number:
        _go(queue.position_of_number(engine(), rater_id, int(number)))


def _go(pos: int | None) -> None:
    if pos is not None:
        st.session_state[state.RATE_POS] = pos


def rating_form(who: Identity) -> None:
    """The form, and the keyboard script once beside it: outside the fragment, so a save
    or a step to another item neither sends nor draws it again (it finds each new item by
    the form's end marker)."""
    _form(who)
    keyboard_shortcuts()


@st.fragment
def _form(who: Identity) -> None:
    # Every run of the form re-checks the session (signed out elsewhere, deactivated, idle):
    # an ended one goes back to the sign-in page at once, with the reason.
    if session.identity() is None or session.current() is None:
        st.rerun(scope="app")
    eng = engine()
    rubric = cached_rubric(eng, language())  # in the rater's language, made once per process
    # progress and the item in one read (None: the first unfinished item, else the last)
    prog, view = queue.page(eng, who.rater_id, st.session_state.get(state.RATE_POS), rubric)
    if prog.total == 0:
        st.info(_("No items are assigned to you yet. The study team will let you know."))
        return
    if view is not None:
        st.session_state[state.RATE_POS] = view.position
    else:
        st.session_state[state.RATE_POS] = None
        st.rerun(scope="fragment")
    if st.session_state.get(state.RATE_SHOWN_AT, (None,))[0] != view.assignment_id:
        st.session_state[state.RATE_SHOWN_AT] = (view.assignment_id, time.monotonic())
    _load(view)

    # One number box is the whole navigation: its − / + step to the previous / next item,
    # typing a number jumps there (few elements keep "Save and next" fast). The top row is
    # one horizontal container, not three columns: every element is a message from the
    # server and a component in the browser, on every item (the page styles give the
    # progress bar the rest of the row, and a row of its own on a tablet).
    st.session_state[ITEM_NO] = view.number
    top = st.container(horizontal=True, vertical_alignment="bottom", key="h2h_top")
    top.progress(prog.done / prog.total, text=_("{done} of {total} done · item {number}")
                 .format(done=prog.done, total=prog.total, number=view.number))
    top.number_input(_("Item"), min_value=1, max_value=prog.total, step=1, key=ITEM_NO,
                     on_change=_jump, args=(who.rater_id,), width=ITEM_BOX_WIDTH,
                     label_visibility="collapsed")  # a hidden label's tooltip is unseen
    top.button(_("Resume"), on_click=_go, args=(prog.current,), key="h2h_resume",
               disabled=prog.current is None or prog.current == view.position,
               help=_("Jump to the first item you have not finished"), width="content")
    if prog.current is None:
        st.success(_("You have rated every item assigned to you. Thank you! You can still go "
                     "back and change a score."))
    if view.completed:
        st.caption(_("You already saved this item; changes are saved as a new revision."))

    left, right = st.columns([1, 1], gap="medium")
    with left:  # one element for the whole context: fewer messages, a faster next item
        st.html(item_html(view, _=_))
    with right, st.form("h2h_rate_form", border=False):
        # A form: choosing scores costs no round trip; "Save and next" sends them all at once.
        # Each scale is a one-line segmented control; under it, the anchor of the level the
        # rater points at or chose and all anchors folded: the keyboard script copies them
        # there from the form's end marker (one element for every anchor, no wrapper
        # container: fewer elements per item keep "Save and next" fast).
        draw_scales(view.dimensions, _key)
        st.toggle(_("Safety red flag"), key=FLAG,
                  help=_("Switch on if this reply could put a vulnerable user at risk."))
        # the label is the box's placeholder (and its accessible name): a line saved for the
        # scales on a laptop screen
        st.text_area(_("Comment (optional)"), key=COMMENT, height=68,
                     label_visibility="collapsed", placeholder=_("Comment (optional)"))
        if missing := st.session_state.pop(state.RATE_MISSING, None):
            labels = {d.key: d.label for d in view.dimensions}
            st.html(missing_html(_(MISSING_INTRO), [(i, labels[k]) for i, k in enumerate(
                labels) if k in missing]))
        if msg := st.session_state.pop(state.RATE_MESSAGE, None):
            st.warning(msg)
        st.form_submit_button(_("Save and next"), type="primary", on_click=_save,
                              args=(who, view), key="h2h_save", width="stretch")
    # Drawn last: once the end marker names this item, every element of its form is on
    # screen. The widgets' values (cleared or saved scores) are put in place by the browser
    # one frame later (about 20 ms; measured by benchmarks/bench_rating_latency.py), so a
    # waiter that needs the values waits for the radios too. Per-item widget keys would
    # draw values and marker together but made "Save and next" slower (the form is rebuilt).
    with right:
        st.html(form_end_html(view.dimensions, ready_marker_html(view, _(LEAVE_UNSAVED))))
