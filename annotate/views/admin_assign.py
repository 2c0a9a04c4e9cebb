"""Admin: deal items to raters with overlap, counterbalanced order and hidden repeats."""

import streamlit as st

from annotate.components.tables import show_table
from annotate.resources import engine
from annotate.services.admin import RATER_PROGRESS_COLUMNS, rater_progress
from annotate.services.assignment import assign
from annotate.services.render import md_text
from annotate.session import require
from data.errors import H2HError
from data.quality import get_settings

require("admin")
st.title("Assignment")
st.write("Each item goes to *k* raters with balanced loads. Orders are random per rater and "
         "never show two replies to the same conversation back to back. Running this again "
         "only adds work (new items, new raters); nothing already rated is moved. When the "
         "study has gold items, only raters who passed training (or were released) get real "
         "items; attention checks are mixed in at the rate below.")
with st.form("h2h_assign"):
    c = st.columns(4)
    k = c[0].number_input("Raters per item (k)", 1, 50, 3)
    seed = c[1].number_input("Seed", 0, 2**31 - 1, 0)
    repeats = c[2].number_input("Hidden repeats (share)", 0.0, 0.5, 0.1, step=0.05)
    gap = c[3].number_input("Minimum gap before a repeat", 1, 500, 5)
    c = st.columns(2)
    attention = c[0].number_input("Attention checks (share of new items)", 0.0, 0.5,
                                  float(get_settings(engine()).attention_rate), step=0.01)
    everyone = c[1].checkbox("Also deal to raters who have not passed training yet",
                             help="Their Rate page still trains them first.")
    go = st.form_submit_button("Assign", type="primary", key="h2h_assign_go")
if go:
    try:
        res = assign(engine(), k=int(k), seed=int(seed), repeat_share=float(repeats),
                     min_gap=int(gap), attention_rate=float(attention),
                     include_unqualified=everyone)
    except H2HError as exc:
        st.error(md_text(exc))
    else:
        st.success(md_text(res))
st.subheader("Current queues")
show_table(rater_progress(engine()), RATER_PROGRESS_COLUMNS, key="h2h_queues_table")
