"""OpenAI-compatible chat completions through the official ``openai`` SDK (imported on first use).

Works with OpenAI itself and with local servers that speak the same API: Ollama
(``http://127.0.0.1:11434/v1``), vLLM (``http://127.0.0.1:8000/v1``), llama.cpp's server
(``http://127.0.0.1:8080/v1``). With a base URL the key is optional (local servers ignore it);
against OpenAI itself ``$OPENAI_API_KEY`` is required.

Structured output uses ``response_format`` with a strict JSON schema; ``structured=False`` sends
free text for servers without schema support, and the tolerant parser reads the reply.
"""

from __future__ import annotations

import json
import os
from typing import Any

from data.errors import H2HError

from .anthropic_provider import retry_after_seconds
from .base import ProviderError, Reply, Request, Usage

__all__ = ["OpenAIProvider"]

_OPENAI_URL = "https://api.openai.com/v1"


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
        # One SDK client per 10 concurrent calls: the SDK's pool scans every connection on
        # each request, so smaller pools cost less CPU per call.
        self._n_clients = max(1, -(-concurrency // 10))
        self._clients: list = []
        self._next = 0

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
        if not self._clients:
            sdk = _import_sdk()
            key = self._key()
            # max_retries=0: the runner retries itself, so each attempt is logged and costed.
            self._clients = [sdk.AsyncOpenAI(api_key=key, base_url=self.base_url,
                                             timeout=self.timeout, max_retries=0)
                             for _ in range(self._n_clients)]
        self._next = (self._next + 1) % len(self._clients)
        return self._clients[self._next]

    def _error(self, exc: Exception) -> ProviderError:
        sdk = _import_sdk()
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError("timeout", f"no reply within {self.timeout:g} s")
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderError("connection", f"cannot reach {self.base_url}: "
                                               f"{exc.__cause__ or exc}")
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            msg = _body_message(exc.body) or str(exc)
            kind = ("auth" if status in (401, 403) else "rate_limit" if status == 429 else
                    "timeout" if status == 408 else "not_found" if status == 404 else
                    "overloaded" if status == 529 else
                    "server" if status >= 500 or status == 409 else "invalid_request")
            return ProviderError(kind, f"{self.base_url} answered {status}: {msg}",
                                 status=status,
                                 retry_after=retry_after_seconds(exc.response.headers))
        return ProviderError("other", f"{type(exc).__name__}: {exc}")

    async def preflight(self) -> None:
        """List the server's models: a bad key or an unreachable server fails at once."""
        try:
            await self.client.models.list(timeout=min(self.timeout, 20.0))
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

    async def complete(self, request: Request) -> Reply:
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages += [{"role": m.role, "content": m.text} for m in request.messages]
        kw: dict[str, Any] = {"model": request.model, "messages": messages,
                              "max_tokens": request.max_tokens}
        if request.temperature is not None:
            kw["temperature"] = request.temperature
        if request.schema is not None and self.structured:
            kw["response_format"] = {"type": "json_schema", "json_schema": {
                "name": request.schema_name, "description": request.schema_description,
                "schema": request.schema, "strict": True}}
        try:
            resp = await self.client.chat.completions.create(**kw)
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content or "") if choice is not None else ""
        data = None
        if request.schema is not None and self.structured:
            try:
                parsed = json.loads(text)
                data = parsed if isinstance(parsed, dict) else None
            except ValueError:
                data = None  # left to the tolerant parser
        u = resp.usage
        cached = 0
        if u is not None and u.prompt_tokens_details is not None:
            cached = u.prompt_tokens_details.cached_tokens or 0
        usage = Usage(input_tokens=(u.prompt_tokens - cached) if u else 0,
                      output_tokens=u.completion_tokens if u else 0, cache_read_tokens=cached)
        return Reply(text=text, data=data, usage=usage,
                     stop_reason=choice.finish_reason if choice is not None else None)

    async def aclose(self) -> None:
        for c in self._clients:
            await c.close()
        self._clients = []


def _body_message(body: object) -> str | None:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
    return None
