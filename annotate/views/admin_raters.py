"""Admin: raters and admins, their one-time access codes, deactivation."""

import pandas as pd
import streamlit as st

from annotate import state
from annotate.components.tables import show_table
from annotate.resources import engine
from annotate.services.render import md_text
from annotate.session import require
from data.errors import H2HError
from data.raters import add_rater, deactivate_rater, list_raters

require("admin")
st.title("Raters")
if shown := st.session_state.pop(state.NEW_CODE, None):
    name, code = shown
    st.success(f"Access code for **{md_text(name)}** — copy it now; it is not shown again:")
    st.code(code, language=None)
if flash := st.session_state.pop(state.ADMIN_FLASH, None):
    st.success(md_text(flash))
raters = list_raters(engine())
df = pd.DataFrame(raters)
if not df.empty:
    df["note"] = df["simulated"].map({True: "simulated (demo)", False: ""})
    show_table(df, {"name": ("Name", "text"), "role": ("Role", "text"),
                    "active": ("Active", "bool"), "can_sign_in": ("Can sign in", "bool"),
                    "n_ratings": ("Ratings", "count"), "note": ("Note", "text")},
               key="h2h_raters_table")
with st.form("h2h_add_rater", clear_on_submit=True):
    st.subheader("Add a rater or admin")
    name = st.text_input("Name")
    role = st.selectbox("Role", ["rater", "admin"])
    if st.form_submit_button("Create and show code", type="primary", key="h2h_add_rater_go"):
        try:
            rater, code = add_rater(engine(), name, role)
        except H2HError as exc:
            st.error(md_text(exc))
        else:
            st.session_state[state.NEW_CODE] = (rater.name, code)
            st.rerun()
active = [r["name"] for r in raters if r["active"] and r["can_sign_in"]]
with st.form("h2h_deactivate"):
    st.subheader("Deactivate")
    who = st.selectbox("Rater", active, index=None)
    if st.form_submit_button("Deactivate", disabled=not active, key="h2h_deactivate_go") and who:
        n = deactivate_rater(engine(), who)  # their open sessions end at once
        st.session_state[state.ADMIN_FLASH] = (f"Deactivated {who}; {n} open session"
                                               f"{'s' if n != 1 else ''} ended.")
        st.rerun()
