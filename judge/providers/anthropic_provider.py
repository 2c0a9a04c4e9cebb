"""Anthropic's Messages API through the official ``anthropic`` SDK (imported on first use).

* Key from ``$ANTHROPIC_API_KEY`` (or the variable named by ``api_key_env``); base URL from
  ``base_url``, else ``$ANTHROPIC_BASE_URL``, else the SDK default.
* Structured output: a forced tool call whose ``input_schema`` bounds each score to the
  dimension's scale (``enum`` of the allowed values).
* The system prompt is marked for prompt caching: it is identical for every call of a judge
  configuration, so after the first call it is read from the cache at a tenth of the price
  (the ledger records cache writes and reads separately).
* Message Batches: ``submit_batch`` / ``batch_status`` / ``batch_results`` / ``cancel_batch``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from data.errors import H2HError

from ._sdk import ClientPool, translate_error
from .base import BatchFailure, BatchInfo, ProviderError, Reply, Request, Usage

__all__ = ["AnthropicProvider"]

# API limits of one Message Batch (https://docs.anthropic.com/en/api/creating-message-batches).
MAX_BATCH_REQUESTS = 100_000
MAX_BATCH_BYTES = 256 * 1024 * 1024


def _import_sdk():
    try:
        import anthropic
    except ImportError:  # pragma: no cover - it is a declared dependency
        raise H2HError("the anthropic package is not installed; pip install anthropic") from None
    return anthropic


class AnthropicProvider:
    """The ``anthropic`` provider (implements :class:`~judge.providers.base.BatchProvider`)."""

    name = "anthropic"
    max_batch_requests = MAX_BATCH_REQUESTS
    max_batch_bytes = MAX_BATCH_BYTES
    output_form = "tools"  # forced tool use: every Claude model supports it

    def start_from(self, form: str | None) -> None:
        """Nothing to negotiate: Anthropic always takes a forced tool call."""

    def __init__(self, *, base_url: str | None = None, api_key_env: str = "ANTHROPIC_API_KEY",
                 timeout: float = 120.0, concurrency: int = 8):
        self.api_key_env = api_key_env
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL")
                         or "https://api.anthropic.com")
        self.timeout = timeout
        self.notes: list[str] = []
        # max_retries=0: the runner retries itself, so each attempt is logged and costed.
        self._pool = ClientPool(concurrency, lambda: _import_sdk().AsyncAnthropic(
            api_key=self._key(), base_url=self.base_url, timeout=self.timeout, max_retries=0))

    # --- client and errors ---------------------------------------------------------------

    def _key(self) -> str:
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise H2HError(f"anthropic: no API key; set {self.api_key_env} "
                           f"(export {self.api_key_env}=sk-ant-...) and run again")
        return key

    @property
    def client(self):
        """The next SDK client (round robin), created on first use."""
        return self._pool.next()

    def _error(self, exc: Exception) -> ProviderError:
        return translate_error(_import_sdk(), exc, who="anthropic", timeout=self.timeout,
                               base_url=self.base_url)

    # --- calls ---------------------------------------------------------------------------

    async def preflight(self) -> None:
        """One cheap authenticated call (list one model) so a bad key or URL fails at once."""
        try:
            await self.client.models.list(limit=1, timeout=min(max(self.timeout, 10.0), 20.0))
        except Exception as exc:  # noqa: BLE001 - translated below
            err = self._error(exc)
            if err.kind == "auth":
                raise H2HError(f"anthropic rejected the API key in {self.api_key_env} "
                               f"({err.message}); check the key and run again") from None
            if err.kind in ("connection", "timeout"):
                raise H2HError(f"anthropic: cannot reach {self.base_url} ({err.message}); "
                               "check the network or --base-url / ANTHROPIC_BASE_URL") from None
            if err.kind == "not_found":
                return  # a proxy without the models endpoint: reachable, key checked later
            raise H2HError(f"anthropic: the service is not usable now ({err.message})") \
                from None

    def batch_params(self, request: Request) -> dict[str, Any]:
        """The Messages API parameters for ``request`` (also one batch request's ``params``)."""
        params: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": m.text} for m in request.messages],
        }
        if request.system:
            params["system"] = [{"type": "text", "text": request.system,
                                 "cache_control": {"type": "ephemeral"}}]
        if request.schema is not None:
            params["tools"] = [{"name": request.schema_name,
                                "description": request.schema_description
                                or "Record the answer.",
                                "input_schema": request.schema}]
            params["tool_choice"] = {"type": "tool", "name": request.schema_name}
        if request.temperature is not None:
            params["temperature"] = request.temperature
        return params

    async def complete(self, request: Request) -> Reply:
        params = self.batch_params(request)
        extra = {}
        if "temperature" in params:
            # Recent SDKs no longer name the parameter; the API field is passed through as is.
            extra["extra_body"] = {"temperature": params.pop("temperature")}
        t0 = time.perf_counter()
        try:
            msg = await self.client.messages.create(**params, **extra)
        except Exception as exc:  # noqa: BLE001 - translated
            err = self._error(exc)
            err.seconds = time.perf_counter() - t0
            raise err from exc
        return replace(_reply(msg, request.schema_name), seconds=time.perf_counter() - t0)

    async def aclose(self) -> None:
        await self._pool.aclose()

    # --- Message Batches -----------------------------------------------------------------

    async def submit_batch(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> BatchInfo:
        try:
            b = await self.client.messages.batches.create(
                requests=[{"custom_id": cid, "params": params} for cid, params in requests])
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc
        return _batch_info(b)

    async def batch_status(self, batch_id: str) -> BatchInfo:
        try:
            return _batch_info(await self.client.messages.batches.retrieve(batch_id))
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc

    async def cancel_batch(self, batch_id: str) -> BatchInfo:
        try:
            return _batch_info(await self.client.messages.batches.cancel(batch_id))
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc

    async def batch_results(self, batch_id: str
                            ) -> AsyncIterator[tuple[str, Reply | BatchFailure]]:
        try:
            decoder = await self.client.messages.batches.results(batch_id)
            async for line in decoder:
                res = line.result
                if res.type == "succeeded":
                    yield line.custom_id, _reply(res.message, None)
                elif res.type == "errored":
                    err = getattr(res.error, "error", None)
                    what = getattr(err, "type", "error")
                    text = getattr(err, "message", "") or ""
                    yield line.custom_id, BatchFailure("errored", f"errored: {what}: {text}")
                else:
                    yield line.custom_id, BatchFailure(res.type, f"{res.type} before it ran")
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._error(exc) from exc


def _reply(msg: Any, tool_name: str | None) -> Reply:
    texts: list[str] = []
    data: dict[str, Any] | None = None
    raw = ""
    for block in msg.content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "tool_use" and (tool_name is None or block.name == tool_name):
            payload = block.input
            raw = json.dumps(payload, ensure_ascii=False) if not isinstance(payload, str) \
                else payload
            data = payload if isinstance(payload, dict) else None
            if data is None:
                raw = raw or repr(payload)
    u = msg.usage
    usage = Usage(input_tokens=u.input_tokens or 0, output_tokens=u.output_tokens or 0,
                  cache_write_tokens=u.cache_creation_input_tokens or 0,
                  cache_read_tokens=u.cache_read_input_tokens or 0)
    text = "".join(texts)
    if raw and text:
        raw = f"{text}\n{raw}"
    return Reply(text=text, data=data, usage=usage, stop_reason=msg.stop_reason, raw=raw)


def _batch_info(b: Any) -> BatchInfo:
    rc = b.request_counts
    counts = {k: getattr(rc, k, 0) or 0 for k in ("processing", "succeeded", "errored",
                                                  "canceled", "expired")}
    return BatchInfo(id=b.id, status=b.processing_status, counts=counts,
                     ended=b.processing_status == "ended")
