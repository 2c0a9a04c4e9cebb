"""Admin: deal items to raters with overlap, counterbalanced order and hidden repeats."""

import streamlit as st

from annotate.components.tables import show_table
from annotate.i18n import _, tr
from annotate.resources import engine
from annotate.services.admin import RATER_PROGRESS_COLUMNS, rater_progress
from annotate.services.assignment import assign
from annotate.services.pair_assignment import assign_pairs
from annotate.services.render import md_text
from annotate.session import require
from data.errors import H2HError
from data.quality import get_settings

require("admin")
st.title(_("Assignment"))
st.write(_("Each item goes to *k* raters with balanced loads. Orders are random per rater and "
           "never show two replies to the same conversation back to back. Running this again "
           "only adds work (new items, new raters); nothing already rated is moved. When the "
           "study has gold items, only raters who passed training (or were released) get real "
           "items; attention checks are mixed in at the rate below."))
with st.form("h2h_assign"):
    c = st.columns(4)
    k = c[0].number_input(_("Raters per item (k)"), 1, 50, 3)
    seed = c[1].number_input(_("Seed"), 0, 2**31 - 1, 0,
                             help=_("The same seed deals the same queues again."))
    repeats = c[2].number_input(_("Hidden repeats (share)"), 0.0, 0.5, 0.1, step=0.05)
    gap = c[3].number_input(_("Minimum gap before a repeat"), 1, 500, 5)
    c = st.columns(2)
    attention = c[0].number_input(_("Attention checks (share of new items)"), 0.0, 0.5,
                                  float(get_settings(engine()).attention_rate), step=0.01)
    everyone = c[1].checkbox(_("Also deal to raters who have not passed training yet"),
                             help=_("Their Rate page still trains them first."))
    pairs = c[1].checkbox(_("Deal side-by-side pairs instead of single items"),
                          key="h2h_assign_pairs",
                          help=_("The pairs made with `h2h pairs make`: k raters per pair, "
                                 "sides blinded and counterbalanced."))
    go = st.form_submit_button(_("Assign"), type="primary", key="h2h_assign_go")
if go:
    try:
        deal = assign_pairs if pairs else assign
        res = deal(engine(), k=int(k), seed=int(seed), repeat_share=float(repeats),
                   min_gap=int(gap), attention_rate=float(attention),
                   include_unqualified=everyone)
    except H2HError as exc:
        st.error(md_text(tr(exc)))
    else:
        st.success(md_text(tr(res.message())))
st.subheader(_("Current queues"))
show_table(rater_progress(engine()), RATER_PROGRESS_COLUMNS, key="h2h_queues_table")
