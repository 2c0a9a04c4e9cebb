"""The Streamlit entry point (`h2h serve` runs it): sign-in, then the pages for one's role."""

import streamlit as st

from annotate import session, state
from annotate.i18n import _, language
from annotate.resources import engine
from annotate.services.i18n import LANGUAGES, N_
from annotate.services.render import CHAT_CSS, md_text

st.set_page_config(page_title="h2htalk", page_icon="💬", layout="wide")

ADMIN_PAGES = [("admin_import.py", N_("Import"), "upload_file"),
               ("admin_raters.py", N_("Raters"), "group"),
               ("admin_assign.py", N_("Assignment"), "assignment_ind"),
               ("admin_progress.py", N_("Progress"), "monitoring"),
               ("admin_agreement.py", N_("Agreement"), "handshake"),
               ("admin_adjudicate.py", N_("Adjudication"), "balance"),
               ("admin_quality.py", N_("Rater quality"), "verified"),
               ("admin_norming.py", N_("Norming"), "groups"),
               ("admin_calibrate.py", N_("Calibration"), "tune"),
               ("admin_ranking.py", N_("Model ranking"), "leaderboard"),
               ("admin_report.py", N_("Report"), "description"),
               ("admin_export.py", N_("Export"), "download")]

code = st.query_params.get("code")
if code is not None:  # a personal link: sign in, then drop the code from the address bar
    from annotate.services.auth import GENERIC_FAILURE, sign_in

    who = sign_in(engine(), code, client=session.client())
    if who is None:
        st.session_state[state.SIGNIN_ERROR] = _(GENERIC_FAILURE)
    else:
        session.establish(who)
    del st.query_params["code"]
if "s" in st.query_params:  # links of the old URL-token sessions: never honoured
    del st.query_params["s"]

who = None
if session.identity() is None and st.session_state.get(state.SIGNIN_GO):
    who = session.sign_in_submitted()  # signed in now: this run draws the first page
if who is None:
    who = session.current()  # checked against the study database on every run
if who is None:
    pages = [st.Page("views/signin.py", title=_("Sign in"), icon=":material/key:", default=True)]
elif who.is_admin:
    pages = {
        _("Study"): [st.Page("views/study.py", title=_("Overview"), icon=":material/dashboard:",
                             default=True, url_path="overview"),
                     st.Page("views/guidelines.py", title=_("Guidelines"),
                             icon=":material/menu_book:", url_path="guidelines")],
        _("Admin"): [st.Page(f"views/{file}", title=_(title), icon=f":material/{icon}:",
                             url_path=file.removesuffix(".py"))
                     for file, title, icon in ADMIN_PAGES],
    }
else:
    pages = [st.Page("views/rate.py", title=_("Rate"), icon=":material/rate_review:",
                     default=True),
             st.Page("views/norming.py", title=_("Norming"), icon=":material/groups:",
                     url_path="norming"),
             st.Page("views/guidelines.py", title=_("Guidelines"), icon=":material/menu_book:",
                     url_path="guidelines")]

if who is not None:
    with st.sidebar:
        role = _("admin") if who.is_admin else _("rater")
        st.caption(_("Signed in as **{name}** ({role})").format(name=md_text(who.name),
                                                                 role=role))
        st.segmented_control(_("Language"), list(LANGUAGES), format_func=LANGUAGES.get,
                             default=language(), key="h2h_sidebar_language",
                             on_change=session.language_switched, args=("h2h_sidebar_language",))
        if st.button(_("Sign out"), key="h2h_signout"):
            session.sign_out()
            st.query_params.clear()
            st.rerun()

session.sync_cookie(who)
st.html(CHAT_CSS)  # the page styles, once (outside every fragment)
# expanded: the admin menu has more than ten pages, and every one should be one click away
st.navigation(pages, expanded=True).run()
