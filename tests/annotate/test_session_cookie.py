"""The session cookie's endpoint (annotate/cookies.py), called as the web server calls it:
the cookie is HttpOnly and SameSite=Lax, Secure over HTTPS, set only from a single-use
grant (never from a token the page sends), and only with the header a page of another
site cannot send without a preflight. The browser's side (the cookie as Chromium keeps it,
out of ``document.cookie``) is in tests/annotate/test_browser_app.py."""

from __future__ import annotations

import asyncio
import json

from starlette.applications import Starlette
from starlette.routing import Route

from annotate.cookies import GRANT_SECONDS, HEADER, ROUTE_PATH, issue_grant, session_endpoint
from annotate.session import cookie_script

APP = Starlette(routes=[Route(ROUTE_PATH, session_endpoint, methods=["POST", "DELETE"])])
NAME = "h2h_session_0123456789ab"
TOKEN = "T" * 43


def _call(method: str, body, headers=None, scheme: str = "http") -> tuple[int, dict]:
    """One request through the ASGI app; (status, response headers)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {HEADER: "1"} if headers is None else headers
    hdrs = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "http", "method": method, "path": ROUTE_PATH, "raw_path": ROUTE_PATH.encode(),
             "query_string": b"", "headers": hdrs, "scheme": scheme, "http_version": "1.1",
             "server": ("127.0.0.1", 8501), "client": ("127.0.0.1", 5000), "root_path": ""}
    sent: list[dict] = []
    chunks = [{"type": "http.request", "body": raw, "more_body": False}]

    async def receive():
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    asyncio.run(APP(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}


def test_a_grant_sets_an_httponly_lax_cookie_once():
    grant = issue_grant(NAME, TOKEN, 3600)
    status, headers = _call("POST", {"grant": grant, "secure": False})
    assert status == 204
    assert headers["set-cookie"] == (f"{NAME}={TOKEN}; Path=/; Max-Age=3600; HttpOnly; "
                                     "SameSite=Lax")
    assert _call("POST", {"grant": grant})[0] == 404  # single use


def test_secure_over_https_as_the_page_or_the_connection_says():
    for body_secure, scheme in ((True, "http"), (False, "https")):
        grant = issue_grant(NAME, TOKEN, 60)
        status, headers = _call("POST", {"grant": grant, "secure": body_secure}, scheme=scheme)
        assert status == 204 and headers["set-cookie"].endswith("; Secure")


def test_no_cookie_without_the_header_a_foreign_page_cannot_send():
    grant = issue_grant(NAME, TOKEN, 60)
    assert _call("POST", {"grant": grant}, headers={"content-type": "application/json"}
                 )[0] == 403
    assert _call("DELETE", {"name": NAME}, headers={})[0] == 403
    assert _call("POST", {"grant": grant})[0] == 204  # the refused calls did not use it


def test_a_token_sent_by_the_page_sets_nothing():
    for body in ({"grant": TOKEN}, {"token": TOKEN}, {"name": NAME, "value": TOKEN}, [],
                 b"not json"):
        status, headers = _call("POST", body)
        assert status in (400, 404) and "set-cookie" not in headers


def test_an_expired_grant_is_refused():
    from annotate.cookies import redeem_grant

    grant = issue_grant(NAME, TOKEN, 60, now=1000.0)
    assert redeem_grant(grant, now=1000.0 + GRANT_SECONDS + 1) is None


def test_sign_out_deletes_the_cookie_through_the_endpoint():
    status, headers = _call("DELETE", {"name": NAME, "secure": True})
    assert status == 204
    assert headers["set-cookie"] == f"{NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure"
    assert _call("DELETE", {"name": "other_cookie"})[0] == 400


def test_the_page_script_carries_the_grant_never_the_token():
    script = cookie_script(NAME, "GRANT123")
    assert "GRANT123" in script and TOKEN not in script and "document.cookie" not in script
    assert '"POST"' in script and HEADER in script
    assert '"DELETE"' in cookie_script(NAME, None)
