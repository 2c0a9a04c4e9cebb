"""Rater: a norming session — score a few replies blind, then (once the study team reveals
everyone's scores) discuss and re-score if you wish. Separate from the study's ratings."""

import streamlit as st

from annotate import session
from annotate.components.rating_form import CANNOT, scale_labels, score_value
from annotate.components.tables import translated
from annotate.i18n import _, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services import norming as ns
from annotate.services.admin import item_of
from annotate.services.auth import SessionEnded
from annotate.services.render import (
    anchors_html,
    conversation_html,
    md_table,
    md_text,
    response_html,
)
from annotate.session import require
from data import norming as nm
from data.errors import H2HError

who = require("rater")
st.title(_("Norming"))
mine = nm.sessions_for_rater(engine(), who.rater_id)
if not mine:
    st.info(_("No norming session is open for you at the moment."))
    st.html('<span data-testid="h2h-norming-ready" data-status="none"></span>')
    st.stop()
names = [s.name for s in mine]
pick = st.selectbox(_("Session"), range(len(mine)), format_func=names.__getitem__) \
    if len(mine) > 1 else 0
sess = mine[pick]
rubric = cached_rubric(engine(), language())  # the rater's language, made once per process
if sess.status == "blind":
    st.write(_("Score each reply on your own. Nobody sees your scores until the study team "
               "reveals them to the group."))
else:
    st.write(_("Everyone's scores are shown below each reply. Talk them through with the "
               "group; you may re-score any reply (the change is kept beside your first "
               "score)."))
for i, item_id in enumerate(sess.items):
    it = item_of(engine(), item_id)
    dims = rubric.dimensions_for(it.task)
    st.subheader(_("Reply {number} of {total}").format(number=i + 1, total=len(sess.items)))
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.html(conversation_html((it.context or {}).get("turns", []), _=_)
                + response_html(it.response))
    current = ns.my_scores(engine(), sess.id, who.rater_id, item_id)
    with right:
        if sess.status != "blind":
            st.table(md_table(translated(ns.revealed_table(engine(), sess.id, item_id,
                                                           sess.named, rubric))))
            st.html(anchors_html(dims, _=_))
        with st.form(f"h2h_norm_{sess.id}_{i}", border=False):
            picked = {}
            for d in dims:
                options = [lv.value for lv in d.levels] + [CANNOT]
                label, labels = scale_labels(d)
                have = current.get(d.key, "none")
                index = None if have == "none" else options.index(CANNOT if have is None
                                                                  else int(have))
                picked[d.key] = st.radio(label, options, index=index,
                                         horizontal=True, format_func=labels.__getitem__,
                                         key=f"norm-{sess.id}-{i}-{d.key}")
            label = _("Save my scores") if sess.status == "blind" else _("Save my re-score")
            go = st.form_submit_button(label, type="primary")
        if go:
            # a value that is no option (a label of the language before a switch) is unscored
            picked = {d.key: score_value(d, picked[d.key]) for d in dims}
            if any(v is None for v in picked.values()):
                st.warning(_("Score every dimension or mark it “Cannot rate” first."))
            else:
                try:
                    nm.save_norming(engine(), sess.id, who.rater_id, item_id,
                                    {k: None if v == CANNOT else v
                                     for k, v in picked.items()}, session_token=who.session)
                except SessionEnded as exc:
                    session.end_here(session.ended_message(exc))
                    st.rerun()
                except H2HError as exc:
                    st.error(md_text(tr(exc)))
                else:
                    st.rerun()
before, after = ns.saved_counts(engine(), sess.id, who.rater_id)
st.html(f'<span data-testid="h2h-norming-ready" data-status="{sess.status}" '
        f'data-before="{before}" data-after="{after}"></span>')
