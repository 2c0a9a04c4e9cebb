"""The editable price table and the requests/tokens-per-minute limiter."""

from __future__ import annotations

import asyncio

import pytest

from data.errors import FormatError
from judge.limits import RateLimiter, TokenBucket
from judge.prices import load_prices


def test_bundled_table_prices_claude_with_patterns_and_cache_defaults():
    t = load_prices()
    # Sonnet: $3 in / $15 out per Mtok; cache write 1.25x and read 0.1x the input price.
    assert t.cost("claude-sonnet-4-5-20250929", input_tokens=2_000_000, output_tokens=100_000,
                  cache_write_tokens=1_000_000, cache_read_tokens=1_000_000) == \
        pytest.approx(6.0 + 1.5 + 3.75 + 0.3)
    # the more specific pattern wins: gpt-4o-mini* over gpt-4o*
    assert t.price_for("gpt-4o-mini-2024").input == 0.15
    assert t.price_for("gpt-4o").input == 2.5
    assert t.price_for("llama3.1:8b") is None


def test_user_table_from_option_or_environment(tmp_path, monkeypatch):
    p = tmp_path / "p.toml"
    p.write_text('batch_discount = 0.25\n[models."llama3.1:8b"]\ninput = 0\noutput = 0\n'
                 '[models."m-*"]\ninput = 2\noutput = 4\n', encoding="utf-8")
    monkeypatch.setenv("H2H_PRICES", str(p))
    t = load_prices()
    assert t.cost("llama3.1:8b", input_tokens=10**6, output_tokens=10**6) == 0.0
    assert t.cost("m-1", input_tokens=10**6, output_tokens=10**6, batch=True) == 1.5


def test_bad_price_file_names_line_and_field(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('[models."m"]\ninput = 1\n\n[models."n"]\ninput = -2\noutput = 1\nfoo = 3\n',
                 encoding="utf-8")
    with pytest.raises(FormatError) as exc:
        load_prices(p)
    msg = str(exc.value)
    assert "p.toml:1: field 'models.m.output': required" in msg
    assert "p.toml:4: field 'models.n.input': must be a number ≥ 0" in msg
    assert "field 'models.n.foo': unknown field" in msg


def test_token_bucket_paces_and_allows_debt():
    now = [0.0]
    b = TokenBucket(rate=10, capacity=20, clock=lambda: now[0])
    b.take(20)
    assert b.wait_time(1) == pytest.approx(0.1)
    now[0] = 1.0
    assert b.wait_time(10) == 0.0
    b.take(50)  # bigger than the bucket: allowed once full, leaves debt
    assert b.level == pytest.approx(-40)
    assert b.wait_time(1) == pytest.approx(4.1)


class _VirtualTime:
    """A clock that only moves when the limiter sleeps: no wall time is measured."""

    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_limiter_spreads_requests_per_minute():
    t = _VirtualTime()

    async def go() -> None:
        lim = RateLimiter(rpm=600, clock=t.clock, sleep=t.sleep)  # 10/s, 20 saved up (2 s)
        for _ in range(26):
            await lim.acquire()
    asyncio.run(go())
    # the first 20 go at once; the 6 beyond them wait 0.1 s each, at 10 per second
    assert t.now == pytest.approx(0.6)
    assert t.sleeps == pytest.approx([0.1] * 6)


def test_pause_holds_every_worker():
    t = _VirtualTime()

    async def go() -> None:
        lim = RateLimiter(clock=t.clock, sleep=t.sleep)
        lim.pause_for(0.3)
        await asyncio.gather(lim.acquire(), lim.acquire())
    asyncio.run(go())
    assert t.now == pytest.approx(0.3) and t.sleeps == pytest.approx([0.3])
