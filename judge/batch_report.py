"""What collecting Message Batches gave (:class:`CollectReport`) and the check that a provider
has a batch API: shared by the judges' batches (:mod:`judge.batches`) and the pairwise judges'
(:mod:`judge.pairwise_run`), which :mod:`judge.batches` hands a pairwise batch to."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from data.errors import H2HError

from .providers.base import BatchProvider, Provider

__all__ = ["CollectReport", "require_batches"]


@dataclass
class CollectReport:
    collected: list[str] = field(default_factory=list)
    pending: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    scored: int = 0
    unscored: int = 0
    failed: int = 0
    cost: float = 0.0
    unpriced: bool = False
    reasons: Counter = field(default_factory=Counter)


def require_batches(provider: Provider) -> BatchProvider:
    if not isinstance(provider, BatchProvider):
        raise H2HError(f"--batch: {provider.name} has no batch API here; batches work with "
                       "--provider anthropic (drop --batch to call the model directly)")
    return provider
