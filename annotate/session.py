"""Who is signed in in this browser tab, the guard every page calls first, and the cookie
that keeps a session across reloads.

The session itself lives in the study database (:mod:`data.sessions`); this tab keeps its
:class:`~annotate.services.auth.Identity` (with the session token) in ``st.session_state``,
and the browser keeps the token in an ``HttpOnly`` cookie (no script on the page can read
it) set by the server's cookie endpoint (:mod:`annotate.cookies`) — never in the address
bar, so it is not in the history, in bookmarks or in a shared link. On a reload, on another
tab, or on another app server of the same study, the cookie brings the session back;
:func:`current` re-checks it against the database on every run of the app.

A browser with no session cookie of any h2htalk study is shown the sign-in page without a
database round trip, and this module imports the database layer only when it is needed: the
first page a rater sees does not wait for it (`h2h serve` loads it meanwhile).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import streamlit as st

from annotate import state
from annotate.i18n import _, ngettext, set_language
from annotate.resources import engine, study_key
from annotate.services.i18n import N_

if TYPE_CHECKING:
    from annotate.services.auth import Identity, SessionEnded

COOKIE_PREFIX = "h2h_session_"
UNSAVED_LOST = N_("Scores you had chosen but not yet saved are lost.")
UNSAVED_KEPT = N_("Your unsaved choices on the item you were rating are kept in this window: "
                  "sign in again here and they come back, ready to save (reloading or "
                  "closing the window loses them).")

__all__ = ["identity", "require", "current", "establish", "end_here", "sign_out",
           "sign_in_submitted",
           "cookie_name", "cookie_script", "sync_cookie", "client", "ended_message",
           "language_switched"]


def identity() -> Identity | None:
    return st.session_state.get(state.IDENTITY)


def require(role: str) -> Identity:
    """Stop the page unless the signed-in person has ``role`` (admins are not raters)."""
    who = identity()
    if who is None or who.role != role:
        st.error(_("This page is not available to you."))
        st.stop()
    return who


def client() -> str:
    """This request's client address (X-Forwarded-For only from a trusted proxy)."""
    from annotate.services import auth

    return auth.request_client(st.context.ip_address,
                               st.context.headers.get_all("x-forwarded-for"))


def cookie_name() -> str:
    """One cookie per study: two studies served on one host keep their sessions apart."""
    return COOKIE_PREFIX + hashlib.sha256(study_key().encode()).hexdigest()[:12]


def establish(who: Identity) -> None:
    """This tab is signed in as ``who`` (after a sign-in or a restored session)."""
    from data.raters import get_language
    from data.raters import set_language as store_language

    st.session_state[state.IDENTITY] = who
    st.session_state.pop(state.COOKIE_CLEAR, None)
    # the language: chosen on the sign-in page (kept for them from now on), else theirs
    if st.session_state.pop(state.LANGUAGE_CHOSEN, False):
        store_language(engine(), who.rater_id, st.session_state.get(state.LANGUAGE, "en"))
    elif stored := get_language(engine(), who.rater_id):
        set_language(stored)


def sign_in_submitted() -> Identity | None:
    """The sign-in form was just submitted: sign in with its code, in this very run.

    The app calls this before it chooses the pages, so the run that checks the code draws
    the rater's first item (or the admin's first page) at once, instead of drawing the
    sign-in page again and asking the browser for another run (a whole round trip and run
    saved between "Sign in" and the first item; benchmarks/bench_cold_start.py). Returns the
    identity, or None with the generic failure message kept for the sign-in page."""
    from annotate.services.auth import GENERIC_FAILURE, sign_in

    who = sign_in(engine(), st.session_state.get(state.SIGNIN_CODE) or "", client=client())
    if who is None:
        st.session_state[state.SIGNIN_ERROR] = _(GENERIC_FAILURE)
        return None
    establish(who)
    return who


def language_switched(key: str) -> None:
    """The language switch (sign-in page or sidebar) changed: this tab speaks it now, and a
    signed-in rater keeps it; on the sign-in page it is kept for whoever signs in."""
    lang = st.session_state.get(key)
    if not lang:  # the switch was cleared: nothing changes
        return
    set_language(lang)
    # the rating form is filled again (its scales' labels change language, and the browser's
    # choices in the old labels are not kept)
    st.session_state.pop(state.RATE_LOADED, None)
    who = identity()
    if who is None:
        st.session_state[state.LANGUAGE_CHOSEN] = True
    else:
        from data.raters import set_language as store_language

        store_language(engine(), who.rater_id, lang)


def ended_message(exc: SessionEnded, unsaved_kept: bool = False) -> str:
    """Why a session ended and what to do, in this tab's language, and what became of
    scores chosen but not saved: a page learns of the end on its next run, and only "Save
    and next" sends the form's choices (:func:`unsaved_kept` when it did: they are kept in
    this tab); any other run (a step to another item, another page, a reload) never had
    them, so they are lost — unless the rater cannot sign in again (deactivated)."""
    from data.sessions import idle_timeout, lifetime

    seconds = round(idle_timeout().total_seconds())  # a short setting: not "0 minutes"
    if seconds < 60:
        idle = ngettext("{n} second", "{n} seconds", seconds).format(n=seconds)
    else:
        minutes = round(seconds / 60)
        idle = ngettext("{n} minute", "{n} minutes", minutes).format(n=minutes)
    hours = f"{lifetime().total_seconds() / 3600:g}"
    return {
        "signed_out": _("You were signed out (here or in another window). Sign in again to "
                        "continue."),
        "deactivated": _("Your access to this study has been ended by the study team. Your "
                         "saved ratings are kept; ask the team if this is a mistake."),
        "reissued": _("The study team gave you a new access code, so this sign-in has "
                      "ended. Sign in with the new code to continue."),
        "idle": _("You were signed out after {idle} without activity. Sign in again to "
                  "continue; nothing you saved is lost.").format(idle=idle),
        "expired": _("Sign-ins last {hours} hours and yours is over. Sign in again to "
                     "continue; nothing you saved is lost.").format(hours=hours),
    }.get(exc.reason, _("This sign-in is not valid any more. Sign in again to continue.")) \
        + " " + (_(UNSAVED_KEPT) if unsaved_kept and exc.reason != "deactivated"
                 else _(UNSAVED_LOST))


def end_here(message: str | None) -> None:
    """The session ended (elsewhere, or by timeout): leave this tab signed out, with the
    reason shown on the sign-in page. Unsaved choices stay in this tab's state."""
    st.session_state.pop(state.IDENTITY, None)
    if message:
        st.session_state[state.SIGNIN_NOTICE] = message
    st.session_state[state.COOKIE_CLEAR] = True


def current() -> Identity | None:
    """The signed-in person, checked against the study database on every run.

    A tab's own identity is re-checked (signed out in another window, deactivated, idle,
    expired: it ends here with the reason); without one, the session cookie is tried, so a
    reload or another app server of the study continues the session.
    """
    who = identity()
    cookies = st.context.cookies
    if who is None and not any(str(k).startswith(COOKIE_PREFIX) for k in cookies):
        return None  # never signed in here: the sign-in page, no database round trip
    from annotate.services import auth
    from annotate.services.auth import SessionEnded

    if who is not None:
        try:
            return auth.resume_identity(engine(), who.session)
        except SessionEnded as exc:
            end_here(ended_message(exc))
            return None
    token = cookies.get(cookie_name())
    if not isinstance(token, str) or not token \
            or token == st.session_state.get(state.COOKIE_REJECTED):
        return None
    try:
        who = auth.resume_identity(engine(), token)
    except SessionEnded as exc:
        st.session_state[state.COOKIE_REJECTED] = token  # look it up once per tab
        if exc.reason in ("deactivated", "reissued", "idle", "expired"):
            end_here(ended_message(exc))
        else:
            st.session_state[state.COOKIE_CLEAR] = True
        return None
    establish(who)
    return who


def sign_out() -> None:
    """End the session in the database (every tab and server), forget this tab's state."""
    who = identity()
    if who is not None:
        from annotate.services import auth

        auth.sign_out(engine(), who)
    for key in list(st.session_state):
        if str(key).startswith(("h2h_", "score-")) and key != state.LANGUAGE:
            del st.session_state[key]
    st.session_state[state.COOKIE_CLEAR] = True


def cookie_script(name: str, grant: str | None) -> str:
    """A script that asks the cookie endpoint (:mod:`annotate.cookies`) to set the session
    cookie ``name`` with a single-use ``grant`` (the token itself never reaches the page),
    or, with ``grant`` None, to delete it. ``HttpOnly``, ``SameSite=Lax``, ``Secure`` when
    the page came over HTTPS."""
    from annotate.cookies import HEADER, ROUTE_PATH

    body = {"grant": grant} if grant else {"name": name}
    return ("<script>(function(){var w=window.parent,b=" + json.dumps(body) + ";"
            "b.secure=w.location.protocol==='https:';"
            f"fetch(new URL({json.dumps(ROUTE_PATH.lstrip('/'))},w.document.baseURI),"
            f"{{method:{json.dumps('POST' if grant else 'DELETE')},credentials:'same-origin',"
            f"headers:{{'Content-Type':'application/json',{json.dumps(HEADER)}:'1'}},"
            "body:JSON.stringify(b)});})();</script>")


def sync_cookie(who: Identity | None) -> None:
    """Keep the browser's cookie in step with this tab: the session's token while signed
    in, deleted after a sign-out or an ended session. One grant per tab and session, so the
    same script on every run and the browser does not reload it."""
    if who is not None and who.session:
        from annotate.cookies import issue_grant
        from data.sessions import lifetime

        held = st.session_state.get(state.COOKIE_GRANT)
        if held is None or held[0] != who.session:
            held = (who.session, issue_grant(cookie_name(), who.session,
                                             int(lifetime().total_seconds())))
            st.session_state[state.COOKIE_GRANT] = held
        st.iframe(cookie_script(cookie_name(), held[1]), height=1)
    elif st.session_state.get(state.COOKIE_CLEAR):
        st.iframe(cookie_script(cookie_name(), None), height=1)
