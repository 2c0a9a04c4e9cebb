"""Sign in with the access code the study team gave you; choose the app's language."""

import streamlit as st

from annotate import session, state
from annotate.i18n import _, language
from annotate.resources import engine
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
    code = st.text_input(_("Access code"), type="password",
                         placeholder="H2H-XXXX-XXXX-XXXX-XXXX", key="h2h_code_input")
    submitted = st.form_submit_button(_("Sign in"), type="primary")
if submitted:
    # the database layer on the first use (annotate.session): the form does not wait for it
    from annotate.services.auth import GENERIC_FAILURE, sign_in

    with st.spinner(_("Checking your code…")):
        who = sign_in(engine(), code, client=session.client())
    if who is None:
        st.session_state[state.SIGNIN_ERROR] = _(GENERIC_FAILURE)
    else:
        session.establish(who)
    st.rerun()
st.caption(_("Your code is personal. Lost it? Ask the study team for a new one."))
