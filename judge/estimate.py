"""What a run would cost, before it is run: the calls, their tokens and the price, and the first
prompts in full. One estimate for judging (``h2h judge run --dry-run``, ``h2h calibrate --run``)
and for generation (``h2h generate --dry-run``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .prices import PriceTable
from .providers.base import Request

__all__ = ["DryRun", "EstimatedCall", "estimate_calls"]


@dataclass(frozen=True)
class EstimatedCall:
    """One call to make: its label and request, and its estimated input tokens, expected
    output tokens and the most output it may take (``max_tokens``)."""

    label: str
    request: Request
    model: str
    provider: str
    input_tokens: int
    output_tokens: int
    output_max: int


@dataclass
class DryRun:
    """What a run would do: calls, estimated tokens and cost, and sample prompts.

    ``output_tokens`` is the configuration's measured mean output per call times the calls
    when earlier runs exist (``measured`` says over how many calls), else the bound
    ``max_tokens × calls``; ``output_tokens_max`` and ``cost_max`` are always that bound.
    """

    calls: int
    keys: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    prompts: list[tuple[str, Request]] = field(default_factory=list)
    output_tokens_max: int = 0
    cost_max: float | None = None
    measured: tuple[float, int] | None = None

    def describe_output(self, max_tokens: int) -> str:
        """``about 1,100 output tokens (mean 100 per call measured over …)`` or the bound."""
        if self.measured is None:
            return (f"at most {self.output_tokens_max:,} output tokens (--max-tokens "
                    f"{max_tokens} × {self.calls} calls; no earlier run of this configuration "
                    "to measure from)")
        mean, n = self.measured
        return (f"about {self.output_tokens:,} output tokens (mean {mean:,.0f} per call "
                f"measured over {n} earlier calls of this configuration; at most "
                f"{self.output_tokens_max:,} at --max-tokens {max_tokens})")


def estimate_calls(calls: Sequence[EstimatedCall], prices: PriceTable, *, show: int = 1,
                   batch: bool = False, keys: int | None = None,
                   measured: tuple[float, int] | None = None) -> DryRun:
    """Tokens and cost of ``calls``, priced per model (at the batch discount with ``batch``),
    and the first ``show`` prompts. ``measured`` (mean output tokens per call, calls measured
    over) replaces the expected output of one model's calls, capped by their maximum."""
    inp = sum(c.input_tokens for c in calls)
    bound = sum(c.output_max for c in calls)
    out = sum(c.output_tokens for c in calls) if measured is None else \
        min(bound, round(measured[0] * len(calls)))
    groups: dict[tuple[str, str], list[EstimatedCall]] = {}
    for c in calls:
        groups.setdefault((c.model, c.provider), []).append(c)

    def price(output: int, by: str) -> float | None:
        if not calls:
            return 0.0
        total: float | None = 0.0
        for (model, provider), cs in groups.items():
            o = output if len(groups) == 1 else sum(getattr(c, by) for c in cs)
            cost = prices.cost(model, input_tokens=sum(c.input_tokens for c in cs),
                               output_tokens=o, batch=batch, provider=provider)
            total = None if total is None or cost is None else total + cost
        return total

    return DryRun(calls=len(calls), keys=len(calls) if keys is None else keys,
                  input_tokens=inp, output_tokens=out, cost=price(out, "output_tokens"),
                  prompts=[(c.label, c.request) for c in calls[:show]],
                  output_tokens_max=bound, cost_max=price(bound, "output_max"),
                  measured=measured)
