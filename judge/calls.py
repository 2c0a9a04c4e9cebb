"""Running many provider calls: a pool of asyncio workers, a rate limiter, retries, a progress
bar, and a sink that stores each result the moment it arrives.

Retry policy. The SDK clients are built with ``max_retries=0`` and this module retries itself:
the SDKs would retry 429/5xx silently, so neither the cost ledger nor the progress bar could see
the attempts, and a ``retry-after`` from one worker could not hold back the others. Retried:
429 (rate limited), 529 (overloaded), other 5xx, 408/409, timeouts and dropped connections -
waiting the server's ``retry-after`` when it gives one, else exponential backoff with jitter
(``backoff × 2^attempt``, at most ``max_backoff``). Not retried: authentication and permission
errors (401/403) and invalid requests (400/404/413/422); they stop the whole run with one
message, keeping every result stored so far. A refusal of a structured-output form is neither:
the provider steps down to the next form itself and the refusal is only logged.

Concurrency. Up to ``concurrency`` calls are in flight. A call that times out while others were
in flight usually waited in a server's queue (llama.cpp-style servers answer one request at a
time): the run then halves its calls in flight, once per wave of timeouts, and says so.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from data.errors import H2HError

from .limits import RateLimiter
from .progress import RunProgress, Tally
from .providers.base import Provider, ProviderError, Reply, Request

__all__ = ["RunOptions", "Tally", "RunStats", "Sink", "run_calls", "retrying", "backoff_delay"]

U = TypeVar("U")
T = TypeVar("T")


@dataclass(frozen=True)
class RunOptions:
    """How hard to push the provider."""

    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    max_retries: int = 6
    backoff: float = 1.0
    max_backoff: float = 60.0
    #: asked before each new call with the run's statistics so far: True stops starting calls
    #: (e.g. a budget reached; the calls in flight finish and are stored)
    stop: Callable[[RunStats], bool] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise H2HError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.max_retries < 0:
            raise H2HError(f"--max-retries must be 0 or more, got {self.max_retries}")
        for name in ("rpm", "tpm"):
            v = getattr(self, name)
            if v is not None and v <= 0:
                raise H2HError(f"--{name} must be positive, got {v}")


@dataclass
class RunStats:
    planned: int = 0
    calls: int = 0
    failed_attempts: int = 0
    refused: int = 0             # requests refused for want of an output form (not retried)
    scored: int = 0
    unscored: int = 0
    request_failed: int = 0
    cost: float = 0.0
    unpriced: bool = False
    reasons: Counter = field(default_factory=Counter)
    elapsed: float = 0.0
    output_form: str | None = None  # the structured-output form the run settled on
    notes: list[str] = field(default_factory=list)  # fallbacks and concurrency changes
    examples: dict[str, str] = field(default_factory=dict)  # unscored category -> an example
    failures: Counter = field(default_factory=Counter)  # "label: message" of calls given up
    failure_kinds: Counter = field(default_factory=Counter)  # their ProviderError kinds
    concurrency: int = 0  # calls in flight at the end (lowered after timeouts)
    stopped: bool = False  # RunOptions.stop ended the run before every unit was asked

    def add(self, t: Tally) -> None:
        self.scored += t.scored
        self.unscored += t.unscored
        self.request_failed += t.failed
        self.reasons.update(t.reasons)
        for k, v in t.examples.items():
            self.examples.setdefault(k, v)
        if t.cost is None:
            self.unpriced = True
        else:
            self.cost += t.cost


class Sink(Protocol[U]):
    """Stores results. Called from one database thread, one call at a time."""

    def request_for(self, unit: U) -> tuple[Request, int]: ...

    def attempt_failed(self, unit: U, err: ProviderError) -> None: ...

    def succeeded(self, unit: U, reply: Reply) -> Tally: ...

    def gave_up(self, unit: U, err: ProviderError) -> Tally: ...


def backoff_delay(options: RunOptions, attempt: int, err: ProviderError) -> float:
    """The server's ``retry-after`` when given (at most 10 minutes), else exponential backoff
    with jitter: ``backoff × 2^attempt`` capped at ``max_backoff``, times 0.75-1."""
    if err.retry_after is not None:
        return min(err.retry_after, 600.0)
    base = min(options.max_backoff, options.backoff * 2 ** attempt)
    return base * random.uniform(0.75, 1.0)


async def retrying(call: Callable[[], Awaitable[T]], options: RunOptions) -> T:
    """One API call (a batch submit or status check) with the same retry policy."""
    for attempt in range(options.max_retries + 1):
        try:
            return await call()
        except ProviderError as err:
            if not err.retryable or attempt == options.max_retries:
                raise H2HError(f"stopped: {err.message}") from None
            await asyncio.sleep(backoff_delay(options, attempt, err))
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class _Run(Generic[U]):
    provider: Provider
    sink: Sink[U]
    options: RunOptions
    progress: RunProgress
    limiter: RateLimiter
    stats: RunStats
    db: ThreadPoolExecutor
    fatal: ProviderError | None = None
    allowed: int = 1        # calls allowed in flight (retries included); only ever lowered
    in_flight: int = 0
    lowered_at: float = float("-inf")
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def _enter(self) -> None:
        """Wait for a free slot (no await between the check and taking it)."""
        while self.in_flight >= self.allowed:
            self.changed.clear()
            await self.changed.wait()
        self.in_flight += 1

    def _leave(self) -> None:
        self.in_flight -= 1
        self.changed.set()

    def _timed_out(self, started: float, busy: int) -> None:
        """A call timed out with ``busy`` calls in flight: a server that queues calls (one
        slot, as llama.cpp-style servers have) makes every queued call wait for the others.
        Halve the calls in flight instead of timing out again - once per wave: calls that
        started before the last lowering say nothing new."""
        if busy < 2 or started < self.lowered_at or self.allowed < 2:
            return
        new = max(1, min(self.allowed - 1, busy // 2))
        self.stats.notes.append(f"a call timed out with {busy} in flight: the server seems "
                                f"to queue calls; concurrency lowered from {self.allowed} to "
                                f"{new} (pass --concurrency {new} next time)")
        self.allowed = new
        self.lowered_at = time.monotonic()

    async def _db(self, fn: Callable, *args):
        return await asyncio.get_running_loop().run_in_executor(self.db, fn, *args)

    def _delay(self, attempt: int, err: ProviderError) -> float:
        return backoff_delay(self.options, attempt, err)

    async def _refused(self, unit: U, refusals) -> None:
        """Capability answers: in the ledger as attempts, never retried or counted as
        failures (the provider has already stepped down to the next form)."""
        for r in refusals:
            self.stats.refused += 1
            await self._db(self.sink.attempt_failed, unit, r)

    async def one(self, unit: U) -> None:
        request, estimate = self.sink.request_for(unit)
        for attempt in range(self.options.max_retries + 1):
            await self._enter()
            busy = 0
            try:
                await self.limiter.acquire(estimate)
                started = time.monotonic()
                reply = await self.provider.complete(request)
            except ProviderError as err:
                busy = self.in_flight
                self._leave()
                await self._refused(unit, err.refused)
                if err.stops_run:
                    raise
                if err.kind == "timeout":
                    self._timed_out(started, busy)
                self.stats.failed_attempts += 1
                self.progress.failed_attempt()
                await self._db(self.sink.attempt_failed, unit, err)
                if attempt == self.options.max_retries or not err.retryable:
                    what = err.message if err.status else f"{err.label}: {err.message}"
                    self.stats.failures[what] += 1
                    self.stats.failure_kinds[err.kind] += 1
                    tally = await self._db(self.sink.gave_up, unit, err)
                    self.stats.add(tally)
                    self.progress.done(tally)
                    return
                delay = self._delay(attempt, err)
                if err.kind in ("rate_limit", "overloaded"):
                    self.limiter.pause_for(delay)
                await asyncio.sleep(delay)
                continue
            except BaseException:
                self._leave()
                raise
            self._leave()
            await self._refused(unit, reply.refused)
            self.limiter.settle(estimate, reply.usage.total)
            self.stats.calls += 1
            tally = await self._db(self.sink.succeeded, unit, reply)
            self.stats.add(tally)
            self.progress.done(tally)
            return

    async def worker(self, queue: asyncio.Queue) -> None:
        while self.fatal is None:
            if self.options.stop is not None and self.options.stop(self.stats):
                self.stats.stopped = not queue.empty()
                return
            try:
                unit = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                await self.one(unit)
            except ProviderError as err:
                self.fatal = err
                return


async def run_calls(provider: Provider, units: Sequence[U], sink: Sink[U], options: RunOptions,
                    progress: RunProgress) -> RunStats:
    """Make one call per unit (with retries) and hand each outcome to ``sink``.

    Raises :class:`H2HError` when a non-retryable error stops the run; what was stored stays.
    """
    stats = RunStats(planned=len(units))
    if not units:
        return stats
    queue: asyncio.Queue = asyncio.Queue()
    for u in units:
        queue.put_nowait(u)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="h2h-db") as db:
        run = _Run(provider, sink, options, progress, RateLimiter(options.rpm, options.tpm),
                   stats, db, allowed=options.concurrency)
        workers = [asyncio.create_task(run.worker(queue))
                   for _ in range(min(options.concurrency, len(units)))]
        try:
            while workers:
                done, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_COMPLETED)
                for t in done:
                    t.result()
                workers = list(pending)
                if run.fatal is not None:
                    for t in workers:
                        t.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)
                    workers = []
        finally:
            for t in workers:
                t.cancel()
            stats.elapsed = time.perf_counter() - t0
            stats.concurrency = run.allowed
    if run.fatal is not None:
        stored = stats.scored + stats.unscored + stats.request_failed
        raise H2HError(f"stopped: {run.fatal.message}. The {stored} results stored before the "
                       "stop are kept; fix the problem and run the same command again to "
                       "continue where it stopped.")
    return stats
