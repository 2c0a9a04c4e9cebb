"""What `h2h serve` runs: the Streamlit app (``annotate/app.py``) with the session-cookie
endpoint (:mod:`annotate.cookies`) beside Streamlit's own routes.

Streamlit (1.67) lets an app add HTTP routes only as an ``st.App``; `streamlit run` finds
``app`` below and serves it with the same server, runtime and options as a plain script.
The endpoint is what lets the session cookie be ``HttpOnly``: only an HTTP response can set
such a cookie, and Streamlit talks to the page over a WebSocket.
"""

from pathlib import Path

import streamlit as st
from starlette.routing import Route

from annotate.cookies import ROUTE_PATH, session_endpoint

app = st.App(Path(__file__).with_name("app.py"),
             routes=[Route(ROUTE_PATH, session_endpoint, methods=["POST", "DELETE"])])
