"""A GGUF model run in this process through ``llama-cpp-python`` (imported on first use):
no server, no key, no network.

* The model is loaded once, on the first call; calls run one at a time in a worker thread (a
  llama.cpp context is not thread-safe), so the event loop keeps storing results meanwhile.
* Structured output: the answer's JSON schema becomes a llama.cpp grammar (``response_format``
  json_object with the schema), so every token sampled keeps the answer valid JSON with a
  score from the scale. Free-text strings (reasoning) get a ``maxLength`` that leaves room in
  ``max_tokens`` for the rest of the answer: a grammar cannot close an object that ran out of
  tokens, so without the bound a long reasoning would end unparseable.
* Consecutive calls share the prompt's prefix (guidelines, conversation, reply), and llama.cpp
  reuses its evaluated tokens: the second dimension of an item costs only its own lines.
* Sampling: greedy (temperature 0) unless ``--temperature`` is given; the sampler's seed is
  fixed (0) so a run is repeatable.
* Tokens are counted from the model's own tokenizer; the price is 0; the ledger records each
  call's wall time.
* Ctrl+C: the call inside llama.cpp cannot be stopped from Python, and freeing the model under
  it crashes the process (SIGSEGV). The call in flight finishes (its answer is dropped), then
  the model is freed and the run stops with the usual message and exit status 1.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from data.errors import H2HError

from .base import ProviderError, Reply, Request, Usage
from .local_models import INSTALL_HINT, resolve_local_model

__all__ = ["LocalProvider", "bound_strings", "import_llama_cpp"]

N_CTX = 8192  # the longest rubric prompt with its answer fits (SmolLM2's own context)


def import_llama_cpp():
    # llama.cpp's CPU threads meet at OpenMP barriers, which by default spin while they wait:
    # on a machine whose cores are busy with anything else (an app server, a test run, a
    # second job) a spinning thread holds a core its partner needs, and one judge call took
    # 95 s instead of 25 s beside other work (measured here, 2 cores at load 8). Waiting
    # passively costs nothing measurable on an idle machine. Read when OpenMP starts, i.e. at
    # this first import; a value the user set is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp
    except ImportError:
        raise H2HError(f"--provider local needs llama-cpp-python: {INSTALL_HINT}") from None
    return llama_cpp


def quiet_llama_cpp() -> None:
    """Keep llama.cpp's own log lines (KV cache notes, …) off the terminal: with
    ``verbose=False`` llama-cpp-python still prints those logged at level NONE. Failures
    reach us as exceptions, which are reported."""
    import logging

    from llama_cpp import _logger
    _logger.logger.setLevel(logging.CRITICAL + 1)


def bound_strings(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """``schema`` with a ``maxLength`` on every unbounded string, so the whole answer fits in
    ``max_tokens``: a character can take up to 3 tokens (CJK in byte-level BPE), and each
    score with its JSON punctuation about 12."""
    strings: list[dict[str, Any]] = []

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items()}
            if out.get("type") == "string" and "maxLength" not in out and "enum" not in out:
                strings.append(out)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    bounded = walk(schema)
    if strings:
        n_scores = max(1, json.dumps(schema).count('"score"'))
        room = max(16, (max_tokens - 12 * n_scores - 8) // (3 * len(strings)))
        for s in strings:
            s["maxLength"] = room
    return bounded


async def _outlast(call: asyncio.Future) -> None:
    """Wait until ``call`` (a worker thread) has returned, whatever else is cancelled
    meanwhile (a second Ctrl+C included)."""
    while not call.done():
        try:
            await asyncio.wait({call})
        except asyncio.CancelledError:
            continue
    if not call.cancelled():
        call.exception()  # retrieved: an error of a dropped call is not logged at exit


class LocalProvider:
    """``--provider local``: the model file comes with each request (``Request.model_file``),
    or a bundled model is found by the request's model name."""

    name = "local"
    base_url = "this process"

    def __init__(self, *, structured: bool = True, timeout: float = 120.0,
                 threads: int | None = None):
        self.structured = structured
        self.timeout = timeout  # not applied: a call in this process cannot be abandoned
        self.threads = threads
        self.output_form = "grammar" if structured else "text"
        self.notes: list[str] = []
        self._models: dict[str, Any] = {}  # path -> loaded llama_cpp.Llama (the last one)
        self._lock: asyncio.Lock | None = None
        self._in_flight: asyncio.Future | None = None  # the call running in the worker thread
        self._system_in_user = False

    def start_from(self, form: str | None) -> None:
        """Nothing to negotiate: the grammar is built here."""

    async def preflight(self) -> None:
        """Fail at once when llama-cpp-python is missing (the model loads on the first call)."""
        import_llama_cpp()

    # --- model --------------------------------------------------------------------------

    def _path(self, request: Request) -> Path:
        if request.model_file:
            return Path(request.model_file)
        return resolve_local_model(request.model).path

    def _load(self, path: Path):
        llm = self._models.get(str(path))
        if llm is not None:
            return llm
        llama_cpp = import_llama_cpp()
        quiet_llama_cpp()
        self._models.clear()  # one model in memory at a time
        try:
            llm = llama_cpp.Llama(model_path=str(path), n_ctx=N_CTX, seed=0, verbose=False,
                                  n_threads=self.threads, n_threads_batch=self.threads)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ProviderError("invalid_request", f"cannot load the model {path}: {exc}") \
                from None
        meta = llm.metadata or {}
        arch = meta.get("general.architecture", "")
        if "tokenizer.chat_template" not in meta and arch.startswith("gemma"):
            # A pre-trained Gemma GGUF has no template: use Gemma's turn format, which has no
            # system role - the system text opens the first user turn, as Gemma's own
            # template does.
            llm.chat_format = "gemma"
            self._system_in_user = True
        else:
            self._system_in_user = False
        self._models[str(path)] = llm
        return llm

    # --- calls --------------------------------------------------------------------------

    def _messages(self, request: Request) -> list[dict[str, str]]:
        msgs = [{"role": m.role, "content": m.text} for m in request.messages]
        if request.system and self._system_in_user and msgs and msgs[0]["role"] == "user":
            msgs[0] = {"role": "user", "content": f"{request.system}\n\n{msgs[0]['content']}"}
        elif request.system:
            msgs.insert(0, {"role": "system", "content": request.system})
        return msgs

    def _complete_sync(self, request: Request) -> Reply:
        t0 = time.perf_counter()
        llm = self._load(self._path(request))
        kw: dict[str, Any] = {"messages": self._messages(request),
                              "max_tokens": request.max_tokens,
                              "temperature": 0.0 if request.temperature is None
                              else request.temperature}
        grammar = request.schema is not None and self.structured
        if grammar:
            kw["response_format"] = {"type": "json_object",
                                     "schema": bound_strings(request.schema, request.max_tokens)}
        try:
            out = llm.create_chat_completion(**kw)
        except ValueError as exc:  # llama.cpp: "Requested tokens (N) exceed context window"
            kind = "too_long" if "context window" in str(exc) else "invalid_request"
            raise ProviderError(kind, f"the model cannot take this prompt: {exc}",
                                seconds=time.perf_counter() - t0) from None
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        data = None
        if grammar:
            try:
                parsed = json.loads(text)
                data = parsed if isinstance(parsed, dict) else None
            except ValueError:
                data = None
        u = out.get("usage") or {}
        return Reply(text=text, data=data, stop_reason=choice.get("finish_reason"),
                     usage=Usage(input_tokens=u.get("prompt_tokens", 0),
                                 output_tokens=u.get("completion_tokens", 0)),
                     seconds=time.perf_counter() - t0)

    async def complete(self, request: Request) -> Reply:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one call at a time through the model
            call = asyncio.get_running_loop().run_in_executor(None, self._complete_sync,
                                                              request)
            self._in_flight = call
            try:
                return await asyncio.shield(call)
            except asyncio.CancelledError:
                # Ctrl+C: llama.cpp cannot be stopped mid-call from here, and the model must
                # not be freed while the thread is inside it (that crashed with SIGSEGV):
                # let the call finish, drop its answer, then stop.
                await _outlast(call)
                raise
            except H2HError as exc:  # a bundled model that is not installed
                raise ProviderError("invalid_request", str(exc)) from None

    async def aclose(self) -> None:
        """Free the models - once no call is inside llama.cpp any more."""
        if self._in_flight is not None:
            await _outlast(self._in_flight)
        for llm in self._models.values():
            close = getattr(llm, "close", None)
            if close is not None:
                close()
        self._models.clear()
