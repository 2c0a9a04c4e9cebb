"""Admin: norming sessions — choose a few items and raters, let them score blind, reveal the
scores side by side (named or anonymised) with the anchors, let them re-score, and read α
before and after the discussion. Stored apart from the study's ratings."""

import pandas as pd
import streamlit as st

from annotate.resources import cached_rubric, engine
from annotate.services import norming as ns
from annotate.services.admin import item_of
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
from data.importing import item_tasks
from data.raters import list_raters

who = require("admin")
st.title("Norming")
rubric = cached_rubric(engine())
with st.expander("Open a new norming session", expanded=not nm.sessions(engine())):
    with st.form("h2h_new_norming"):
        name = st.text_input("Name", value="Norming 1")
        items = st.multiselect("Items (a handful)", sorted(item_tasks(engine())))
        people = st.multiselect("Raters", [r["name"] for r in list_raters(engine())
                                           if r["role"] == "rater" and r["active"]
                                           and not r["simulated"]])
        if st.form_submit_button("Open session", type="primary", key="h2h_norming_open"):
            try:
                nm.create_session(engine(), name, items, people, who.rater_id)
            except H2HError as exc:
                st.error(md_text(exc))
            else:
                st.rerun()
sessions = nm.sessions(engine())
if not sessions:
    st.stop()
labels = [f"{s.name} · {s.status}" for s in sessions]
sess = sessions[st.selectbox("Session", range(len(sessions)), format_func=labels.__getitem__,
                             key="h2h_norm_session")]
st.caption(md_text(f"Participants: {', '.join(sess.participants.values())} · "
                   f"{len(sess.items)} items · status: {sess.status}"))
c = st.columns(3)
if sess.status == "blind":
    named = c[0].toggle("Show names when revealing", value=False, key="h2h_norm_named")
    if c[1].button("Reveal scores to the group", type="primary", key="h2h_norm_reveal"):
        nm.reveal(engine(), sess.id, named=named)
        st.rerun()
if sess.status != "closed" and c[2].button("Close session", key="h2h_norm_close"):
    nm.close(engine(), sess.id)
    st.rerun()
rows = ns.norming_alpha(engine(), sess.id, rubric)
st.subheader("Agreement before and after discussion")
if not rows:
    st.info("No scores yet.")
else:
    st.table(md_table(pd.DataFrame([{
        "dimension": r.dimension, "items": r.n_items, "raters": r.n_raters,
        "α before": "not estimable" if r.before is None else f"{r.before:.3f}",
        "α after": "not estimable" if r.after is None else f"{r.after:.3f}",
        "note": r.note} for r in rows]).set_index("dimension")))
    st.caption("Krippendorff's α at each dimension's level on its full scale. After: each "
               "rater's re-score where given, else their blind score.")
for i, item_id in enumerate(sess.items):
    it = item_of(engine(), item_id)
    st.subheader(f"Reply {i + 1}")
    st.text(f"item {item_id}")
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.html(conversation_html((it.context or {}).get("turns", []))
                + response_html(it.response))
    with right:
        st.table(md_table(ns.revealed_table(engine(), sess.id, item_id, True, rubric)))
        st.html(anchors_html(rubric.dimensions_for(it.task)))
a_b = next((r.before for r in rows if r.before is not None), None)
a_a = next((r.after for r in rows if r.after is not None), None)
st.html(f'<span data-testid="h2h-admin-norming-ready" data-status="{sess.status}" '
        f'data-before="{a_b}" data-after="{a_a}"></span>')
