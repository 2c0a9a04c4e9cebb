"""Plumbing both SDK providers share: a round-robin pool of SDK clients, and the translation
of an SDK exception (anthropic and openai have the same error classes) into ProviderError."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable
from typing import Any

from .base import ProviderError

__all__ = ["ClientPool", "retry_after_seconds", "body_message", "translate_error"]


class ClientPool:
    """``n`` SDK clients used in turn, made on first use. The SDKs' connection pools scan every
    pooled connection on each request, so one pool of 50 connections costs more CPU per call
    than five pools of ten: one client per 10 concurrent calls."""

    def __init__(self, concurrency: int, make: Callable[[], Any]):
        self._n = max(1, -(-concurrency // 10))
        self._make = make
        self._clients: list = []
        self._next = 0

    def next(self) -> Any:
        if not self._clients:
            self._clients = [self._make() for _ in range(self._n)]
        self._next = (self._next + 1) % len(self._clients)
        return self._clients[self._next]

    async def aclose(self) -> None:
        for c in self._clients:
            await c.close()
        self._clients = []


def retry_after_seconds(headers: Any) -> float | None:
    """The server's ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date), if any."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    try:
        return max(float(ms) / 1000, 0.0)
    except (TypeError, ValueError):
        pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_tz(raw)
        return None if parsed is None else max(email.utils.mktime_tz(parsed) - time.time(), 0.0)


def body_message(body: object) -> str | None:
    """The message of an error body: ``{"error": {"message": …}}``, ``{"error": "…"}`` or
    ``{"message": …}``."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
    return None


_TOO_LONG = re.compile(r"context.length|context.window|maximum context|prompt is too long|"
                       r"too many tokens", re.I)


def _kind(status: int) -> str:
    return ("auth" if status in (401, 403) else "rate_limit" if status == 429 else
            "overloaded" if status == 529 else "timeout" if status == 408 else
            "not_found" if status == 404 else
            "server" if status >= 500 or status == 409 else "invalid_request")


def translate_error(sdk: Any, exc: Exception, *, who: str, timeout: float,
                    base_url: str) -> ProviderError:
    """An SDK exception as a ProviderError the runner can act on (retry, stop, record)."""
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError("timeout", f"no reply within {timeout:g} s")
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError("connection", f"cannot reach {base_url}: {exc.__cause__ or exc}")
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        msg = getattr(exc, "api_message", None) or body_message(exc.body) or str(exc)
        kind = _kind(status)
        if kind == "invalid_request" and _TOO_LONG.search(msg):
            kind = "too_long"  # this prompt only: the other calls can still succeed
        return ProviderError(kind, f"{who} answered {status}: {msg}", status=status,
                             retry_after=retry_after_seconds(exc.response.headers))
    return ProviderError("other", f"{type(exc).__name__}: {exc}")
