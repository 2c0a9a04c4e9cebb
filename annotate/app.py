"""The Streamlit entry point (`h2h serve` runs it): sign-in, then the pages for one's role."""

import streamlit as st

from annotate import session, state
from annotate.resources import engine
from annotate.services.auth import GENERIC_FAILURE, sign_in
from annotate.services.render import CHAT_CSS, md_text

st.set_page_config(page_title="h2htalk", page_icon="💬", layout="wide")

ADMIN_PAGES = [("admin_import.py", "Import", "upload_file"), ("admin_raters.py", "Raters", "group"),
               ("admin_assign.py", "Assignment", "assignment_ind"),
               ("admin_progress.py", "Progress", "monitoring"),
               ("admin_agreement.py", "Agreement", "handshake"),
               ("admin_adjudicate.py", "Adjudication", "balance"),
               ("admin_quality.py", "Rater quality", "verified"),
               ("admin_norming.py", "Norming", "groups"),
               ("admin_calibrate.py", "Calibration", "tune"),
               ("admin_report.py", "Report", "description"),
               ("admin_export.py", "Export", "download")]

code = st.query_params.get("code")
if code is not None:  # a personal link: sign in, then drop the code from the address bar
    who = sign_in(engine(), code, client=session.client())
    if who is None:
        st.session_state[state.SIGNIN_ERROR] = GENERIC_FAILURE
    else:
        session.establish(who)
    del st.query_params["code"]
if "s" in st.query_params:  # links of the old URL-token sessions: never honoured
    del st.query_params["s"]

who = session.current()  # checked against the study database on every run
if who is None:
    pages = [st.Page("views/signin.py", title="Sign in", icon=":material/key:", default=True)]
elif who.is_admin:
    pages = {
        "Study": [st.Page("views/study.py", title="Overview", icon=":material/dashboard:",
                          default=True, url_path="overview"),
                  st.Page("views/guidelines.py", title="Guidelines", icon=":material/menu_book:")],
        "Admin": [st.Page(f"views/{file}", title=title, icon=f":material/{icon}:")
                  for file, title, icon in ADMIN_PAGES],
    }
else:
    pages = [st.Page("views/rate.py", title="Rate", icon=":material/rate_review:", default=True),
             st.Page("views/norming.py", title="Norming", icon=":material/groups:"),
             st.Page("views/guidelines.py", title="Guidelines", icon=":material/menu_book:")]

if who is not None:
    with st.sidebar:
        st.caption(f"Signed in as **{md_text(who.name)}** ({who.role})")
        if st.button("Sign out", key="h2h_signout"):
            session.sign_out()
            st.query_params.clear()
            st.rerun()

session.sync_cookie(who)
st.html(CHAT_CSS)  # the page styles, once (outside every fragment)
# expanded: the admin menu has more than ten pages, and every one should be one click away
st.navigation(pages, expanded=True).run()
