"""Admin: norming sessions — choose a few items and raters, let them score blind, reveal the
scores side by side (named or anonymised) with the anchors, let them re-score, and read α
before and after the discussion. Stored apart from the study's ratings."""

import streamlit as st

from annotate.components.tables import rows_frame, translated
from annotate.i18n import _, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services import norming as ns
from annotate.services.admin import item_of
from annotate.services.i18n import N_
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

STATUSES = {"blind": N_("blind"), "discuss": N_("discussion"), "closed": N_("closed")}

who = require("admin")
st.title(_("Norming"))
rubric = cached_rubric(engine(), language())
with st.expander(_("Open a new norming session"), expanded=not nm.sessions(engine())):
    with st.form("h2h_new_norming"):
        name = st.text_input(_("Name"), value=_("Norming 1"))
        items = st.multiselect(_("Items (a handful)"), sorted(item_tasks(engine())),
                               placeholder=_("Choose items"))
        people = st.multiselect(_("Raters"), [r["name"] for r in list_raters(engine())
                                              if r["role"] == "rater" and r["active"]
                                              and not r["simulated"]],
                                placeholder=_("Choose raters"))
        if st.form_submit_button(_("Open session"), type="primary", key="h2h_norming_open"):
            try:
                nm.create_session(engine(), name, items, people, who.rater_id)
            except H2HError as exc:
                st.error(md_text(tr(exc)))
            else:
                st.rerun()
sessions = nm.sessions(engine())
if not sessions:
    st.stop()


def _status(s) -> str:
    return _(STATUSES[s]) if s in STATUSES else s


labels = [f"{s.name} · {_status(s.status)}" for s in sessions]
sess = sessions[st.selectbox(_("Session"), range(len(sessions)), format_func=labels.__getitem__,
                             key="h2h_norm_session")]
st.caption(md_text(_("Participants: {names} · {n} items · status: {status}").format(
    names=", ".join(sess.participants.values()), n=len(sess.items),
    status=_status(sess.status))))
c = st.columns(3)
if sess.status == "blind":
    named = c[0].toggle(_("Show names when revealing"), value=False, key="h2h_norm_named")
    if c[1].button(_("Reveal scores to the group"), type="primary", key="h2h_norm_reveal"):
        nm.reveal(engine(), sess.id, named=named)
        st.rerun()
if sess.status != "closed" and c[2].button(_("Close session"), key="h2h_norm_close"):
    nm.close(engine(), sess.id)
    st.rerun()
rows = ns.norming_alpha(engine(), sess.id, rubric)
st.subheader(_("Agreement before and after discussion"))
if not rows:
    st.info(_("No scores yet."))
else:
    ne = _("not estimable")
    st.table(md_table(rows_frame([{
        _("Dimension"): r.dimension, _("Items"): r.n_items, _("Raters"): r.n_raters,
        _("α before"): ne if r.before is None else f"{r.before:.3f}",
        _("α after"): ne if r.after is None else f"{r.after:.3f}",
        _("Note"): r.note} for r in rows]).set_index(_("Dimension"))))
    st.caption(_("Krippendorff's α at each dimension's level on its full scale. After: each "
                 "rater's re-score where given, else their blind score."))
for i, item_id in enumerate(sess.items):
    it = item_of(engine(), item_id)
    st.subheader(_("Reply {number}").format(number=i + 1))
    st.text(_("item {item_id}").format(item_id=item_id))
    left, right = st.columns([1, 1], gap="large")
    with left:
        st.html(conversation_html((it.context or {}).get("turns", []), _=_)
                + response_html(it.response))
    with right:
        table = ns.revealed_table(engine(), sess.id, item_id, True, rubric)
        st.table(md_table(translated(table)))
        st.html(anchors_html(rubric.dimensions_for(it.task), _=_))
a_b = next((r.before for r in rows if r.before is not None), None)
a_a = next((r.after for r in rows if r.after is not None), None)
st.html(f'<span data-testid="h2h-admin-norming-ready" data-status="{sess.status}" '
        f'data-before="{a_b}" data-after="{a_a}"></span>')
