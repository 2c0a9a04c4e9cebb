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

from ._sdk import ClientPool, translate_error
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
        # max_retries=0: the runner retries itself, so each attempt is logged and costed.
        self._pool = ClientPool(concurrency, lambda: _import_sdk().AsyncOpenAI(
            api_key=self._key(), base_url=self.base_url, timeout=self.timeout, max_retries=0))

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

    def _error(self, exc: Exception) -> ProviderError:
        return translate_error(_import_sdk(), exc, who=self.base_url, timeout=self.timeout,
                               base_url=self.base_url)

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
        await self._pool.aclose()


