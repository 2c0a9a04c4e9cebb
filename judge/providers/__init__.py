"""LLM providers behind one :class:`Provider` protocol; each SDK is imported on first use."""

from __future__ import annotations

from data.errors import H2HError

from .base import (
    PROVIDERS,
    BatchFailure,
    BatchInfo,
    BatchProvider,
    Message,
    Provider,
    ProviderError,
    Reply,
    Request,
    Usage,
)

__all__ = ["PROVIDERS", "BatchFailure", "BatchInfo", "BatchProvider", "Message", "Provider",
           "ProviderError", "Reply", "Request", "Usage", "make_provider", "default_concurrency"]

REMOTE_CONCURRENCY = 8
LOOPBACK_CONCURRENCY = 2


def default_concurrency(name: str, base_url: str | None = None) -> tuple[int, str]:
    """Calls in flight when ``--concurrency`` is not given, and why (for the run banner).

    A model in this process runs one call at a time. A server on this machine (llama.cpp,
    llama-cpp-python, Ollama, LM Studio) usually has one slot: more calls in flight only wait
    in its queue until they time out, so two (one computing, one queued). A remote service
    gets 8.
    """
    import os

    from .openai_provider import is_loopback
    if name == "local":
        return 1, "the model runs in this process, one call at a time"
    url = base_url or os.environ.get(
        "ANTHROPIC_BASE_URL" if name == "anthropic" else "OPENAI_BASE_URL") or ""
    if is_loopback(url):
        return LOOPBACK_CONCURRENCY, ("a server on this machine usually answers one request at "
                                      "a time; give --concurrency N for one that batches, "
                                      "like vLLM")
    return REMOTE_CONCURRENCY, "default"


def make_provider(name: str, *, base_url: str | None = None, api_key_env: str | None = None,
                  timeout: float = 120.0, structured: bool = True,
                  concurrency: int = 8) -> Provider:
    """The provider called ``name`` ("anthropic", "openai" or "local"), configured but not yet
    connected.

    No SDK is imported and no key is read until the first call (``preflight``). The ``local``
    provider takes the model file from each request (``Request.model_file``).
    ``concurrency`` is how many calls will be in flight at once (it sizes the client pool).
    """
    if name == "anthropic":
        from .anthropic_provider import AnthropicProvider
        return AnthropicProvider(base_url=base_url, timeout=timeout, concurrency=concurrency,
                                 api_key_env=api_key_env or "ANTHROPIC_API_KEY")
    if name == "openai":
        from .openai_provider import OpenAIProvider
        return OpenAIProvider(base_url=base_url, timeout=timeout, structured=structured,
                              concurrency=concurrency,
                              api_key_env=api_key_env or "OPENAI_API_KEY")
    if name == "local":
        if base_url is not None:
            raise H2HError("--base-url: --provider local runs the model in this process; for "
                           "a model server use --provider openai --base-url URL")
        from .local_provider import LocalProvider
        return LocalProvider(structured=structured, timeout=timeout)
    raise H2HError(f"--provider: '{name}' is not one of {', '.join(PROVIDERS)} "
                   "(use openai for Ollama, vLLM and llama.cpp servers; local for a GGUF model "
                   "in this process)")
