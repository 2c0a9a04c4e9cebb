"""OpenAI-compatible chat completions through the official ``openai`` SDK (imported on first use).

Works with OpenAI itself and with local servers that speak the same API: Ollama
(``http://127.0.0.1:11434/v1``), vLLM (``http://127.0.0.1:8000/v1``), llama.cpp's server
(``http://127.0.0.1:8080/v1``), llama-cpp-python's server. With a base URL the key is optional
(local servers ignore it); against OpenAI itself ``$OPENAI_API_KEY`` is required.

Structured output is negotiated: servers differ in what they accept, so the strongest form the
server takes is found by asking, in this order:

1. ``response_format: {"type": "json_schema", ...}`` (OpenAI, vLLM, Ollama, llama.cpp);
2. ``response_format: {"type": "json_object", "schema": ...}`` (llama-cpp-python's server, which
   answers HTTP 500 "Input should be 'text' or 'json_object'" to the first);
3. a forced tool / function call whose parameters are the schema;
4. plain text, read by the tolerant parser (``structured=False`` starts here).

A 4xx/5xx whose message names the feature being asked for (``response_format``,
``json_schema``, ``tools`` …) is the server's answer about its capabilities, not a failure: the
provider steps down at once and asks again, and never retries the refused form. One request
negotiates while the others wait, so a run pays one refusal per unsupported form however many
calls are in flight. The prompt text is the same in every form (the answer's JSON shape is
always spelled out in it), so the form changes the transport, not what the judge is asked.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from dataclasses import replace
from typing import Any

from data.errors import H2HError

from ._sdk import ClientPool, translate_error
from .base import ProviderError, Reply, Request, Usage

__all__ = ["OpenAIProvider", "LADDER", "is_loopback"]

_OPENAI_URL = "https://api.openai.com/v1"
LADDER: tuple[str, ...] = ("json_schema", "json_object", "tools", "text")
# Statuses servers answer an unsupported request feature with (llama-cpp-python: 500).
_CAPABILITY_STATUS = frozenset({400, 404, 405, 415, 422, 500, 501})
_NAMES_FORMAT = re.compile(r"response_format|response format|json_schema|json_object|"
                           r"structured output|guided_json|grammar", re.I)
_NAMES_TOOLS = re.compile(r"\btools?\b|tool_choice|tool use|function.?call", re.I)


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this machine (127.0.0.0/8, localhost, ::1)."""
    from urllib.parse import urlsplit
    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or host == "::1" or host.startswith("127.")


def _import_sdk():
    try:
        import openai
    except ImportError:  # pragma: no cover - it is a declared dependency
        raise H2HError("the openai package is not installed; pip install openai") from None
    return openai


class OpenAIProvider:
    """The ``openai`` provider (OpenAI or any OpenAI-compatible server)."""

    name = "openai"

    def __init__(self, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 120.0, structured: bool = True, concurrency: int = 8):
        self.api_key_env = api_key_env
        explicit = base_url or os.environ.get("OPENAI_BASE_URL")
        self.local = explicit is not None and explicit.rstrip("/") != _OPENAI_URL
        self.base_url = explicit or _OPENAI_URL
        self.timeout = timeout
        self.structured = structured
        self._form = LADDER[0] if structured else "text"
        self._settled = not structured
        self._negotiating: asyncio.Lock | None = None
        self.notes: list[str] = []
        # max_retries=0: the runner retries itself, so each attempt is logged and costed.
        self._pool = ClientPool(concurrency, lambda: _import_sdk().AsyncOpenAI(
            api_key=self._key(), base_url=self.base_url, timeout=self.timeout, max_retries=0))

    # --- negotiation state -------------------------------------------------------------------

    @property
    def output_form(self) -> str | None:
        """The form in use once a structured request succeeded with it; None before."""
        return self._form if self._settled else None

    def start_from(self, form: str | None) -> None:
        """Skip the forms an earlier run found refused (``form`` is where it settled)."""
        if self.structured and form in LADDER:
            self._form = form

    def _step_down(self, err: ProviderError) -> bool:
        """After ``err`` refused ``err.form``: use the next form. False at plain text."""
        if err.form != self._form:
            return True  # another call stepped down already; just ask again
        if self._form == "text":
            return False
        nxt = LADDER[LADDER.index(self._form) + 1]
        self.notes.append(f"{self._form} refused ({err.label.split(': ', 1)[1]}: "
                          f"{_short(err.message)}); now {nxt}")
        self._form, self._settled = nxt, False
        return True

    # --- client and errors ----------------------------------------------------------------

    def _key(self) -> str:
        key = os.environ.get(self.api_key_env, "").strip()
        if key:
            return key
        if self.local:
            return "not-needed"  # local servers accept any key; the SDK insists on one
        raise H2HError(f"openai: no API key; set {self.api_key_env}, or pass --base-url for a "
                       "local OpenAI-compatible server (Ollama, vLLM, llama.cpp)")

    @property
    def client(self):
        """The next SDK client (round robin), created on first use."""
        return self._pool.next()

    def _error(self, exc: Exception, form: str = "text") -> ProviderError:
        err = translate_error(_import_sdk(), exc, who=self.base_url, timeout=self.timeout,
                              base_url=self.base_url)
        names = _NAMES_TOOLS if form == "tools" else _NAMES_FORMAT
        if form != "text" and err.status in _CAPABILITY_STATUS and names.search(err.message):
            return ProviderError("unsupported", err.message, status=err.status, form=form)
        return err

    async def preflight(self) -> None:
        """List the server's models: a bad key or an unreachable server fails at once."""
        try:
            await self.client.models.list(timeout=min(max(self.timeout, 10.0), 20.0))
        except Exception as exc:  # noqa: BLE001 - translated below
            err = self._error(exc)
            if err.kind == "auth":
                raise H2HError(f"openai: {self.base_url} rejected the API key "
                               f"({err.message}); check {self.api_key_env}") from None
            if err.kind in ("connection", "timeout"):
                raise H2HError(f"openai: cannot reach {self.base_url} ({err.message}); is the "
                               "server running, and is --base-url right?") from None
            if err.kind == "not_found":
                return  # a server without /models: reachable, which is what we check here
            raise H2HError(f"openai: {self.base_url} is not usable now ({err.message})") \
                from None

    # --- calls ----------------------------------------------------------------------------

    async def complete(self, request: Request) -> Reply:
        if request.schema is None:  # generation: free text, nothing to negotiate
            return await self._send(request, "text")
        refused: list[ProviderError] = []
        if not self._settled:
            if self._negotiating is None:
                self._negotiating = asyncio.Lock()
            async with self._negotiating:  # one call finds the form; the rest wait
                if not self._settled:
                    # a retryable failure raises: the next call negotiates again from here
                    reply = await self._send_stepping_down(request, refused)
                    self._settled = True
                    return reply
        return await self._send_stepping_down(request, refused)

    async def _send_stepping_down(self, request: Request, refused: list[ProviderError]
                                  ) -> Reply:
        """Send in the current form; a form the server refuses is recorded in ``refused`` and
        the next weaker one tried, until one answers or none is left (then it raises)."""
        while True:
            try:
                reply = await self._send(request, self._form)
            except ProviderError as err:
                if err.kind == "unsupported" and self._step_down(err):
                    refused.append(err)
                    continue
                err.refused = tuple(refused)
                raise
            return replace(reply, refused=tuple(refused))

    def _params(self, request: Request, form: str) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages += [{"role": m.role, "content": m.text} for m in request.messages]
        kw: dict[str, Any] = {"model": request.model, "messages": messages,
                              "max_tokens": request.max_tokens}
        if request.temperature is not None:
            kw["temperature"] = request.temperature
        if form == "json_schema":
            kw["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "description": request.schema_description,
                "schema": request.schema, "strict": True}}
        elif form == "json_object":
            kw["response_format"] = {"type": "json_object", "schema": request.schema}
        elif form == "tools":
            kw["tools"] = [{"type": "function", "function": {
                "name": request.schema_name, "description": request.schema_description
                or "Record the answer.", "parameters": request.schema}}]
            kw["tool_choice"] = {"type": "function", "function": {"name": request.schema_name}}
        return kw

    async def _send(self, request: Request, form: str) -> Reply:
        t0 = time.perf_counter()
        try:
            resp = await self.client.chat.completions.create(**self._params(request, form))
        except Exception as exc:  # noqa: BLE001
            err = self._error(exc, form)
            err.seconds = time.perf_counter() - t0
            raise err from exc
        seconds = time.perf_counter() - t0
        choice = resp.choices[0] if resp.choices else None
        msg = choice.message if choice is not None else None
        text = (msg.content or "") if msg is not None else ""
        raw = ""
        data = None
        calls = getattr(msg, "tool_calls", None) or []
        if form == "tools" and calls:
            raw = calls[0].function.arguments or ""
            data = _json_object(raw)
            if text:
                raw = f"{text}\n{raw}"
        elif form != "text":
            data = _json_object(text)  # None: left to the tolerant parser
        u = resp.usage
        cached = 0
        if u is not None and getattr(u, "prompt_tokens_details", None) is not None:
            cached = u.prompt_tokens_details.cached_tokens or 0
        usage = Usage(input_tokens=(u.prompt_tokens - cached) if u else 0,
                      output_tokens=u.completion_tokens if u else 0, cache_read_tokens=cached)
        return Reply(text=text, data=data, usage=usage, raw=raw, seconds=seconds,
                     stop_reason=choice.finish_reason if choice is not None else None)

    async def aclose(self) -> None:
        await self._pool.aclose()


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


_PYDANTIC_MSG = re.compile(r"""'msg': (?:"([^"]*)"|'([^']*)')""")


def _short(message: str, n: int = 90) -> str:
    """The gist of a server's error: pydantic's ``msg`` when it is a validation error
    (llama-cpp-python), without the "<url> answered 500:" prefix, on one short line."""
    m = _PYDANTIC_MSG.search(message)
    one = (m.group(1) or m.group(2)) if m else message.split(" answered ", 1)[-1]
    one = re.sub(r"^\d{3}: ", "", " ".join(one.split()))
    return one if len(one) <= n else one[:n - 1] + "…"
