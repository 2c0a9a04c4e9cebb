"""Sign in with the access code the study team gave you; choose the app's language."""

import streamlit as st

from annotate import session, state
from annotate.i18n import _, language
from annotate.services.i18n import LANGUAGES

st.segmented_control("Language · 语言", list(LANGUAGES), format_func=LANGUAGES.get,
                     default=language(), key="h2h_signin_language",
                     on_change=session.language_switched, args=("h2h_signin_language",))
st.title("h2htalk")
st.write(_("Welcome. Enter the access code you were given to start rating."))
if notice := st.session_state.pop(state.SIGNIN_NOTICE, None):
    st.warning(notice)
if msg := st.session_state.pop(state.SIGNIN_ERROR, None):
    st.error(msg)
with st.form("signin", border=False):
    # the app checks the code at the start of the run this button starts (annotate.app,
    # session.sign_in_submitted): that run draws the first item, not this page again
    st.text_input(_("Access code"), type="password", placeholder="H2H-XXXX-XXXX-XXXX-XXXX",
                  key=state.SIGNIN_CODE)
    st.form_submit_button(_("Sign in"), type="primary", key=state.SIGNIN_GO)
st.caption(_("Your code is personal. Lost it? Ask the study team for a new one."))
