"""The price table behind the cost ledger, and token estimates for dry runs and rate limits.

Prices are US dollars per million tokens, read from a TOML file the user can edit: ``--prices
FILE``, else ``$H2H_PRICES``, else the bundled ``data/prices.toml``. A call's cost is

    (input × p_in + output × p_out + cache_write × p_cw + cache_read × p_cr) / 10⁶

times ``batch_discount`` (0.5) for Anthropic Message Batches.

Example
-------
>>> t = load_prices()
>>> t.cost("claude-sonnet-4-5", input_tokens=1_000_000, output_tokens=0)
3.0
>>> t.cost("claude-sonnet-4-5", input_tokens=1_000_000, output_tokens=0, batch=True)
1.5
>>> t.cost("my-local-model", input_tokens=10, output_tokens=10) is None
True
>>> t.cost("my-local-model", input_tokens=10, output_tokens=10, provider="local")
0.0
>>> t.for_server("openai", "http://127.0.0.1:8000/v1").cost("my-local-model", input_tokens=10,
...                                                          output_tokens=10)
0.0
>>> estimate_tokens("hello world, how are you?"), estimate_tokens("我今天很累")
(7, 5)
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from data._files import read_text
from data.errors import FormatError, Problem

__all__ = ["Price", "PriceTable", "load_prices", "estimate_tokens"]


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float


@dataclass(frozen=True)
class PriceTable:
    prices: dict[str, Price] = field(default_factory=dict)
    batch_discount: float = 0.5
    source: str = "data/prices.toml"
    #: a server on this machine: a model without a price costs nothing per token
    this_machine: bool = False

    def for_server(self, provider: str, base_url: str | None) -> PriceTable:
        """The table for calls to ``provider`` at ``base_url``: an OpenAI-compatible server on
        this machine (llama.cpp, llama-cpp-python, Ollama, vLLM on 127.0.0.1 or localhost)
        runs the model here, so a model the table does not price costs $0 instead of being
        unpriced; a model the table prices (a local proxy to a paid API) keeps its price."""
        import dataclasses

        from .providers.openai_provider import is_loopback

        url = base_url or (os.environ.get("OPENAI_BASE_URL") or "")
        if provider == "openai" and is_loopback(url):
            return dataclasses.replace(self, this_machine=True)
        return self

    def price_for(self, model: str) -> Price | None:
        """The exact entry, else the matching pattern with the most literal characters."""
        if model in self.prices:
            return self.prices[model]
        matches = [(len(re.sub(r"[*?\[\]]", "", pat)), pat) for pat in self.prices
                   if fnmatch.fnmatchcase(model, pat)]
        return self.prices[max(matches)[1]] if matches else None

    def cost(self, model: str, *, input_tokens: int, output_tokens: int,
             cache_write_tokens: int = 0, cache_read_tokens: int = 0,
             batch: bool = False, provider: str | None = None) -> float | None:
        """USD for one call, or None when the model has no price. A model run in this
        process (``provider="local"``) costs nothing per token, whatever the table says."""
        if provider == "local":
            return 0.0
        p = self.price_for(model)
        if p is None:
            return 0.0 if self.this_machine else None
        usd = (input_tokens * p.input + output_tokens * p.output
               + cache_write_tokens * p.cache_write + cache_read_tokens * p.cache_read) / 1e6
        return usd * self.batch_discount if batch else usd

    def cost_of(self, model: str, usage, *, batch: bool = False,
                provider: str | None = None) -> float | None:
        """:meth:`cost` of a reply's ``usage`` (its input, output and cache tokens)."""
        return self.cost(model, input_tokens=usage.input_tokens,
                         output_tokens=usage.output_tokens,
                         cache_write_tokens=usage.cache_write_tokens,
                         cache_read_tokens=usage.cache_read_tokens, batch=batch,
                         provider=provider)


def _line(text: str, needle: str) -> int | None:
    for n, ln in enumerate(text.splitlines(), start=1):
        if needle in ln:
            return n
    return None


def load_prices(path: str | Path | None = None) -> PriceTable:
    """Read the price table (see the module docstring for where it comes from)."""
    path = path or os.environ.get("H2H_PRICES") or None
    if path is None:
        text = resources.files("data").joinpath("prices.toml").read_text("utf-8")
        file = "prices.toml"
    else:
        file, text = read_text(path, what="prices")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise FormatError([Problem(file, int(m.group(1)) if m else None, None,
                                   f"not valid TOML: {exc}")]) from None
    problems: list[Problem] = []
    for k in sorted(set(raw) - {"batch_discount", "models"}):
        problems.append(Problem(file, _line(text, k), k, "unknown field (allowed: "
                                                         "batch_discount, models)"))
    disc = raw.get("batch_discount", 0.5)
    if isinstance(disc, bool) or not isinstance(disc, (int, float)) or not 0 <= disc <= 1:
        problems.append(Problem(file, _line(text, "batch_discount"), "batch_discount",
                                "must be a number from 0 to 1 (0.5 = half price)"))
    prices: dict[str, Price] = {}
    models = raw.get("models", {})
    if not isinstance(models, dict):
        problems.append(Problem(file, _line(text, "models"), "models",
                                'must be tables like [models."claude-sonnet-4*"]'))
        models = {}
    for name, entry in models.items():
        where = _line(text, f'"{name}"') or _line(text, name)
        if not isinstance(entry, dict):
            problems.append(Problem(file, where, f"models.{name}", "must be a table"))
            continue
        extra = set(entry) - {"input", "output", "cache_write", "cache_read"}
        for k in sorted(extra):
            problems.append(Problem(file, where, f"models.{name}.{k}", "unknown field "
                                    "(allowed: input, output, cache_write, cache_read)"))
        vals: dict[str, float] = {}
        for k in ("input", "output", "cache_write", "cache_read"):
            v = entry.get(k)
            if v is None and k in ("input", "output"):
                problems.append(Problem(file, where, f"models.{name}.{k}",
                                        "required: USD per million tokens"))
            elif v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                    or v < 0):
                problems.append(Problem(file, where, f"models.{name}.{k}",
                                        f"must be a number ≥ 0, got {v!r}"))
            elif v is not None:
                vals[k] = float(v)
        if "input" in vals and "output" in vals:
            prices[name] = Price(vals["input"], vals["output"],
                                 vals.get("cache_write", vals["input"] * 1.25),
                                 vals.get("cache_read", vals["input"] * 0.1))
    if problems:
        raise FormatError(problems)
    return PriceTable(prices=prices, batch_discount=float(disc), source=file)


def estimate_tokens(text: str) -> int:
    """A rough token count without a tokenizer: about 4 ASCII characters per token, and one
    token per other character (CJK text runs close to one token per character)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)
