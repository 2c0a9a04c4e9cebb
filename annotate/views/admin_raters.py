"""Admin: raters and admins, their one-time access codes, a new code for a lost one,
deactivation and reactivation."""

import pandas as pd
import streamlit as st

from annotate import state
from annotate.components.tables import show_table
from annotate.i18n import _, option_labels, tr
from annotate.resources import engine
from annotate.services import access
from annotate.services.i18n import N_
from annotate.services.render import md_text
from annotate.session import require
from data.errors import H2HError
from data.raters import add_rater, deactivate_rater, list_raters
from messages import nMsg

ROLES = {"rater": N_("rater"), "admin": N_("admin")}

require("admin")
st.title(_("Raters"))
if shown := st.session_state.pop(state.NEW_CODE, None):
    name, code = shown
    st.success(_("Access code for **{name}** — copy it now; it is not shown again:")
               .format(name=md_text(name)))
    st.code(code, language=None)
if flash := st.session_state.pop(state.ADMIN_FLASH, None):
    st.success(md_text(tr(flash)))
raters = list_raters(engine())
df = pd.DataFrame(raters)
if not df.empty:
    df["note"] = df["simulated"].map({True: _("simulated (demo)"), False: ""})
    df["role"] = df["role"].map(lambda r: _(ROLES[r]) if r in ROLES else r)
    show_table(df, {"name": (N_("Name"), "text"), "role": (N_("Role"), "text"),
                    "active": (N_("Active"), "bool"), "can_sign_in": (N_("Can sign in"), "bool"),
                    "n_ratings": (N_("Ratings"), "count"), "note": (N_("Note"), "text")},
               key="h2h_raters_table")
with st.form("h2h_add_rater", clear_on_submit=True):
    st.subheader(_("Add a rater or admin"))
    name = st.text_input(_("Name"))
    role = st.selectbox(_("Role"), list(ROLES), format_func=option_labels(ROLES))
    if st.form_submit_button(_("Create and show code"), type="primary", key="h2h_add_rater_go"):
        try:
            rater, code = add_rater(engine(), name, role)
        except H2HError as exc:
            st.error(md_text(tr(exc)))
        else:
            st.session_state[state.NEW_CODE] = (rater.name, code)
            st.rerun()
active = [r["name"] for r in raters if r["active"] and r["can_sign_in"]]
with st.form("h2h_deactivate"):
    st.subheader(_("Deactivate"))
    who = st.selectbox(_("Rater"), active, index=None, placeholder=_("Choose a rater"))
    if st.form_submit_button(_("Deactivate"), disabled=not active, key="h2h_deactivate_go") \
            and who:
        n = deactivate_rater(engine(), who)  # their open sessions end at once
        st.session_state[state.ADMIN_FLASH] = nMsg(
            "Deactivated {name}; {n} open session ended.",
            "Deactivated {name}; {n} open sessions ended.", n, name=who)
        st.rerun()

# a lost code, or a rater deactivated by mistake: no dead end (simulated raters never sign in)
people = [r["name"] for r in raters if not r["simulated"]]
with st.form("h2h_access"):
    st.subheader(_("A lost code, or access back"))
    st.caption(_("A new code replaces the old one at once: the old code stops working and "
                 "the rater's open sessions end. Reactivating lets a deactivated rater sign "
                 "in again. Their ratings, queue and training stay as they are."))
    c = st.columns([3, 2, 2], vertical_alignment="bottom")
    who = c[0].selectbox(_("Rater"), people, index=None, placeholder=_("Choose a rater"),
                         key="h2h_access_rater")
    reissue = c[1].form_submit_button(_("New access code"), disabled=not people,
                                      key="h2h_reissue_go")
    again = c[2].form_submit_button(_("Reactivate"), disabled=not people,
                                    key="h2h_reactivate_go")
if (reissue or again) and who:
    try:
        if reissue:  # their open sessions end at once
            code, flash = access.reissue(engine(), who)
            st.session_state[state.NEW_CODE] = (who, code)
        else:
            flash = access.reactivate(engine(), who)
    except H2HError as exc:
        st.error(md_text(tr(exc)))
    else:
        st.session_state[state.ADMIN_FLASH] = flash
        st.rerun()
