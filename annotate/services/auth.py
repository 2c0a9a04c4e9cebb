"""Signing in with an access code, with repeated failures slowed down."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from data.engine import read_session
from data.models import Rater
from data.raters import authenticate

__all__ = ["Identity", "sign_in", "Throttle", "THROTTLE", "GENERIC_FAILURE", "issue_token",
           "identity_from_token"]

GENERIC_FAILURE = "That code did not work. Check it and try again, or ask the study team."


@dataclass(frozen=True)
class Identity:
    """Who is signed in; stored in the session, never the code itself."""

    rater_id: int
    name: str
    role: str

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


class Throttle:
    """After ``free`` failures from one client, each further attempt waits 2^(n-free) seconds
    (capped), so guessing codes is slow while a typo costs nothing. Failures are forgotten
    after ``window`` seconds without one; a success clears the client's count."""

    def __init__(self, free: int = 3, cap: float = 30.0, window: float = 900.0):
        self.free, self.cap, self.window = free, cap, window
        self._fails: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def delay(self, client: str) -> float:
        with self._lock:
            n, last = self._fails.get(client, (0, 0.0))
            if time.monotonic() - last > self.window:
                return 0.0
            return 0.0 if n < self.free else min(self.cap, 2.0 ** (n - self.free))

    def failed(self, client: str) -> None:
        with self._lock:
            n, last = self._fails.get(client, (0, 0.0))
            if time.monotonic() - last > self.window:
                n = 0
            self._fails[client] = (n + 1, time.monotonic())

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._fails.pop(client, None)


THROTTLE = Throttle()


def sign_in(engine: Engine, code: str, client: str = "anonymous",
            throttle: Throttle = THROTTLE, sleep=time.sleep) -> Identity | None:
    """The identity for ``code``, or None (the caller shows :data:`GENERIC_FAILURE`)."""
    wait = throttle.delay(client)
    if wait:
        sleep(wait)
    code = (code or "").strip()
    rater = authenticate(engine, code) if code else None
    if rater is None:
        throttle.failed(client)
        return None
    throttle.succeeded(client)
    return Identity(rater.id, rater.name, rater.role)


# Session tokens keep a signed-in person signed in across a page reload. They carry the
# rater id and an expiry, signed with a key that lives only in this server process (a
# restart signs everyone out); the access code itself never goes into the address bar.
_TOKEN_KEY = secrets.token_bytes(32)
TOKEN_HOURS = 12


def issue_token(who: Identity, now: float | None = None) -> str:
    expires = int((now or time.time()) + TOKEN_HOURS * 3600)
    body = f"{who.rater_id}.{expires}"
    sig = hmac.new(_TOKEN_KEY, body.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{body}.{sig}"


def identity_from_token(engine: Engine, token: str, now: float | None = None
                        ) -> Identity | None:
    """The identity a token was issued to, if it is genuine, unexpired and still active."""
    try:
        rid, expires, sig = token.split(".")
        body = f"{int(rid)}.{int(expires)}"
    except ValueError:
        return None
    good = hmac.new(_TOKEN_KEY, body.encode(), hashlib.sha256).hexdigest()[:32]
    if not hmac.compare_digest(good, sig) or int(expires) < (now or time.time()):
        return None
    with read_session(engine) as s:
        rater = s.get(Rater, int(rid))
    if rater is None or not rater.active or not rater.code_hash:
        return None
    return Identity(rater.id, rater.name, rater.role)
