"""What every LLM provider offers the runner: one request in, one reply (or a typed error) out.

Providers translate their SDK's exceptions into :class:`ProviderError` with a ``kind`` the
runner understands, so retry policy lives in one place (``judge/calls.py``) and not in each SDK.
SDK clients are built with their own retries switched off (``max_retries=0``): the runner retries
itself so that every attempt reaches the cost ledger and the progress bar.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = ["Role", "Message", "Request", "Usage", "Reply", "ErrorKind", "ProviderError",
           "RETRYABLE", "BatchInfo", "BatchFailure", "Provider", "BatchProvider",
           "ProviderName", "PROVIDERS", "OutputForm", "OUTPUT_FORMS"]

ProviderName = Literal["anthropic", "openai", "local"]
PROVIDERS: tuple[str, ...] = ("anthropic", "openai", "local")
Role = Literal["user", "assistant"]
# How a structured answer is asked for: OpenAI's response_format json_schema; json_object with
# the schema beside it (llama-cpp-python's server); a forced tool / function call; a grammar
# built from the schema (a model run in-process); or plain text read by the tolerant parser.
OutputForm = Literal["json_schema", "json_object", "tools", "grammar", "text"]
OUTPUT_FORMS: tuple[str, ...] = ("json_schema", "json_object", "tools", "grammar", "text")


@dataclass(frozen=True)
class Message:
    role: Role
    text: str


@dataclass(frozen=True)
class Request:
    """One model call, provider-neutral.

    ``schema`` (a JSON schema for an object) asks for structured output named ``schema_name``:
    a forced tool call on Anthropic, ``response_format`` json_schema on OpenAI-compatible
    servers. Without it the reply is free text.
    """

    model: str
    system: str
    messages: tuple[Message, ...]
    max_tokens: int
    temperature: float | None = None
    schema: dict[str, Any] | None = None
    schema_name: str = "answer"
    schema_description: str = ""
    model_file: str | None = None  # a GGUF run in-process (--provider local); else unused


@dataclass(frozen=True)
class Usage:
    """Tokens of one call. ``input_tokens`` excludes tokens written to or read from a cache."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    @property
    def total(self) -> int:
        return (self.input_tokens + self.output_tokens + self.cache_write_tokens
                + self.cache_read_tokens)


@dataclass(frozen=True)
class Reply:
    """What came back: the text, the structured data if any (tool input / parsed JSON object),
    the token usage and why generation stopped."""

    text: str
    data: dict[str, Any] | None
    usage: Usage
    stop_reason: str | None = None
    raw: str = ""
    # Requests the server refused for want of a structured-output form before this reply
    # came (capability answers, each asked once): the runner puts them in the ledger.
    refused: tuple[ProviderError, ...] = ()
    seconds: float | None = None  # wall time of the call that answered

    @property
    def raw_text(self) -> str:
        """The reply as stored for audit: the structured payload if there was one, else text."""
        return self.raw or self.text


ErrorKind = Literal["rate_limit", "overloaded", "server", "timeout", "connection", "auth",
                    "invalid_request", "not_found", "unsupported", "too_long", "other"]
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "overloaded", "server", "timeout",
                                       "connection"})


class ProviderError(Exception):
    """A failed call. ``kind`` decides whether it is retried; ``retry_after`` (seconds) is the
    server's own advice when it gave one."""

    def __init__(self, kind: ErrorKind, message: str, *, status: int | None = None,
                 retry_after: float | None = None, form: str | None = None,
                 seconds: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.form = form  # with kind "unsupported": the output form the server refused
        self.seconds = seconds
        # capability refusals that came before this error in the same call (see Reply)
        self.refused: tuple[ProviderError, ...] = ()

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    @property
    def stops_run(self) -> bool:
        """Whether no other call can succeed either (bad key, invalid request). A prompt too
        long for the model fails only its own call: it is stored as a request failure."""
        return not self.retryable and self.kind != "too_long"

    @property
    def label(self) -> str:
        """Short status for the ledger, e.g. ``http 429``, ``timeout`` or
        ``refused json_schema: http 500``."""
        short = f"http {self.status}" if self.status else self.kind
        return f"refused {self.form}: {short}" if self.kind == "unsupported" else short


@dataclass(frozen=True)
class BatchInfo:
    id: str
    status: str  # "in_progress" | "canceling" | "ended"
    counts: dict[str, int] = field(default_factory=dict)
    ended: bool = False


@dataclass(frozen=True)
class BatchFailure:
    """A batch request that produced no message: errored, expired or canceled."""

    kind: str
    reason: str


@runtime_checkable
class Provider(Protocol):
    """A model service. ``preflight`` fails fast with one clear :class:`data.errors.H2HError`
    (missing key, unreachable server, rejected credentials) before any work starts."""

    name: str
    base_url: str
    # The structured-output form in use once settled (None while still negotiating), and a
    # line per fallback for the run summary.
    output_form: str | None
    notes: list[str]

    def start_from(self, form: str | None) -> None:
        """Begin negotiating at ``form`` (remembered from an earlier run), not at the top."""
        ...

    async def preflight(self) -> None: ...

    async def complete(self, request: Request) -> Reply: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class BatchProvider(Provider, Protocol):
    """A provider with an asynchronous batch API (Anthropic Message Batches)."""

    max_batch_requests: int
    max_batch_bytes: int

    def batch_params(self, request: Request) -> dict[str, Any]: ...

    async def submit_batch(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> BatchInfo:
        ...

    async def batch_status(self, batch_id: str) -> BatchInfo: ...

    async def cancel_batch(self, batch_id: str) -> BatchInfo: ...

    def batch_results(self, batch_id: str) -> AsyncIterator[tuple[str, Reply | BatchFailure]]:
        ...
