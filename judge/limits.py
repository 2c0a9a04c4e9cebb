"""A requests- and tokens-per-minute limiter for asyncio, shared by all workers of a run.

Two token buckets refill continuously (``rpm / 60`` requests and ``tpm / 60`` tokens per second)
and hold at most two seconds' worth, so requests are spread evenly instead of bursting at the
start of each minute. A request bigger than the token bucket may go once the bucket is full and
leaves it in debt, so the long-run rate still holds. After a 429 or "overloaded" answer
:meth:`RateLimiter.pause_for` holds *every* worker back for the server's ``retry-after``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

__all__ = ["TokenBucket", "RateLimiter"]


class TokenBucket:
    """``rate`` units per second, at most ``capacity`` saved up; the level may go negative."""

    def __init__(self, rate: float, capacity: float, clock: Callable[[], float] = time.monotonic):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.capacity = max(capacity, 1.0)
        self.level = self.capacity
        self._clock = clock
        self._t = clock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._t) * self.rate)
        self._t = now

    def wait_time(self, amount: float) -> float:
        """Seconds until ``amount`` may be taken (0 if now)."""
        self._refill()
        need = min(amount, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, amount: float) -> None:
        self._refill()
        self.level -= amount

    def give_back(self, amount: float) -> None:
        self.level = min(self.capacity, self.level + amount)


class RateLimiter:
    """Requests per minute and tokens per minute (either may be None for no limit).

    ``clock`` and ``sleep`` are injectable so that tests can run the limiter on a virtual
    clock instead of measuring wall time."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self._clock = clock
        self._sleep = sleep
        self.requests = TokenBucket(rpm / 60, 2 * rpm / 60, clock) if rpm else None
        self.tokens = TokenBucket(tpm / 60, 2 * tpm / 60, clock) if tpm else None
        self.paused_until = 0.0
        self._lock = asyncio.Lock()

    def pause_for(self, seconds: float) -> None:
        """Hold all requests back for ``seconds`` (the server asked us to slow down)."""
        self.paused_until = max(self.paused_until, self._clock() + seconds)

    async def acquire(self, tokens: int = 0) -> None:
        """Wait until one request of about ``tokens`` tokens may be sent."""
        async with self._lock:  # one waiter at a time keeps the order fair
            while True:
                wait = self.paused_until - self._clock()
                if self.requests is not None:
                    wait = max(wait, self.requests.wait_time(1))
                if self.tokens is not None and tokens:
                    wait = max(wait, self.tokens.wait_time(tokens))
                if wait <= 1e-9:  # rounding of the refill, not a wait (a virtual clock
                    break         # would otherwise never get past it)
                await self._sleep(wait)
            if self.requests is not None:
                self.requests.take(1)
            if self.tokens is not None and tokens:
                self.tokens.take(tokens)

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the token bucket once the real usage of a request is known."""
        if self.tokens is None:
            return
        if actual > estimated:
            self.tokens.take(actual - estimated)
        else:
            self.tokens.give_back(estimated - actual)
