"""The session cookie, set by the server: ``HttpOnly``, ``SameSite=Lax``, ``Secure`` over HTTPS.

A script can set a cookie only without ``HttpOnly``, so then any script on the page could
read the session token. The cookie is therefore set by an HTTP response of this endpoint,
``/h2h/session``, which ``h2h serve`` mounts beside Streamlit's own routes
(``annotate/h2h_server.py``, Streamlit's ``st.App``):

1. After a sign-in, the app (server side) makes a **grant** for the session's token:
   random, single-use, valid for two minutes, kept in this process's memory only.
2. A tiny same-origin script in the page posts the grant (never the token) to
   ``/h2h/session``; the response sets the cookie. The token itself never reaches the page.
3. Sign-out, or a session found ended, asks the same endpoint to delete the cookie (a script
   cannot delete an ``HttpOnly`` cookie).

Both requests must carry the header ``X-H2H-Cookie: 1``: a page of another site cannot send
it without a CORS preflight, which this endpoint never grants, so it cannot sign anyone out.
A grant stolen before its one use would give its thief the token; it lives for one round
trip of the page, once, and only a script already running in the page could see it.

``Secure`` is set when the page was loaded over HTTPS (the page says so; behind a proxy
that ends TLS, the server itself sees plain HTTP). The page and this endpoint are served by
the same process (a proxy keeps each browser on one server, see docs/app.md).

This module imports nothing of Streamlit's (the endpoint runs on the web server's loop).
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from dataclasses import dataclass

__all__ = ["issue_grant", "redeem_grant", "set_cookie_header", "delete_cookie_header",
           "session_endpoint", "ROUTE_PATH", "HEADER", "GRANT_SECONDS"]

ROUTE_PATH = "/h2h/session"
HEADER = "x-h2h-cookie"
GRANT_SECONDS = 120.0
_NAME = re.compile(r"h2h_session_[0-9a-f]{1,64}")
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")


@dataclass(frozen=True)
class _Grant:
    name: str
    token: str
    max_age: int
    expires: float


_grants: dict[str, _Grant] = {}
_lock = threading.Lock()


def issue_grant(name: str, token: str, max_age: int, now: float | None = None) -> str:
    """A single-use grant that sets cookie ``name`` to ``token`` for ``max_age`` seconds."""
    if not _NAME.fullmatch(name) or not _TOKEN.fullmatch(token):
        raise ValueError("not a session cookie")
    now = time.monotonic() if now is None else now
    grant = secrets.token_urlsafe(24)
    with _lock:
        for g in [g for g, v in _grants.items() if v.expires < now]:  # forget stale ones
            del _grants[g]
        _grants[grant] = _Grant(name, token, int(max_age), now + GRANT_SECONDS)
    return grant


def redeem_grant(grant: str, now: float | None = None) -> _Grant | None:
    """The grant's cookie, once; None for an unknown, used or expired grant."""
    now = time.monotonic() if now is None else now
    with _lock:
        found = _grants.pop(grant, None) if isinstance(grant, str) else None
    return found if found is not None and found.expires >= now else None


def set_cookie_header(name: str, token: str, max_age: int, secure: bool) -> str:
    return (f"{name}={token}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Lax"
            + ("; Secure" if secure else ""))


def delete_cookie_header(name: str, secure: bool) -> str:
    return f"{name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax" + ("; Secure" if secure else "")


async def session_endpoint(request):
    """``POST {"grant", "secure"}`` sets the session cookie; ``DELETE {"name", "secure"}``
    deletes it. 204 on success, 400/403/404 otherwise, never a body worth reading."""
    from starlette.responses import Response

    if request.headers.get(HEADER) != "1":
        return Response(status_code=403)
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        return Response(status_code=400)
    if not isinstance(body, dict):
        return Response(status_code=400)
    secure = body.get("secure") is True or request.url.scheme == "https"
    if request.method == "POST":
        found = redeem_grant(body.get("grant"))
        if found is None:
            return Response(status_code=404)
        header = set_cookie_header(found.name, found.token, found.max_age, secure)
    else:
        name = body.get("name")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            return Response(status_code=400)
        header = delete_cookie_header(name, secure)
    return Response(status_code=204, headers={"set-cookie": header,
                                              "cache-control": "no-store"})
