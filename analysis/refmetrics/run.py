"""Scoring a study's items with metric configurations, stored as they are computed (the
database adapter of ``h2h metrics run``).

Each configuration scores only what it has not scored yet at the item's current content: a
second run does nothing, an item whose response or reference changed is scored again. Scores
are stored in batches, so an interrupted run keeps what it computed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine

from data.metrics import (
    ItemsToScore,
    items_to_score,
    save_metric_config,
    scored_hashes,
    store_metric_scores,
)
from data.models import MetricConfigRow

from .spec import MetricSpec, Scorer, language

__all__ = ["RunReport", "run_metrics", "config_row", "BATCH"]

BATCH = 256


@dataclass
class RunReport:
    spec: MetricSpec
    n_items: int
    scored_now: int = 0
    already: int = 0
    unscored: int = 0
    languages: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)


def config_row(spec: MetricSpec) -> MetricConfigRow:
    return MetricConfigRow(hash=spec.hash, name=spec.name, metric=spec.metric,
                           library=spec.library, library_version=spec.library_version,
                           tokenizer=dict(spec.tokenizer), settings=dict(spec.settings),
                           signature=spec.signature)


def run_metrics(engine: Engine, scorers: Sequence[Scorer], *, replace: bool = False,
                todo: ItemsToScore | None = None) -> tuple[ItemsToScore, list[RunReport]]:
    """Score every item with a reference with each scorer; returns the items considered and
    one report per configuration."""
    todo = todo or items_to_score(engine)
    langs = Counter(language(it.response, it.reference)[0] for it in todo.items)
    reports = []
    for scorer in scorers:
        spec = scorer.spec
        save_metric_config(engine, config_row(spec), replace=replace)
        done = scored_hashes(engine, spec.hash)
        stale = [it for it in todo.items if done.get(it.id) != it.content_hash]
        rep = RunReport(spec, len(todo.items), already=len(todo.items) - len(stale),
                        languages=Counter(langs))
        for lo in range(0, len(stale), BATCH):
            chunk = stale[lo:lo + BATCH]
            res = scorer.score([(it.response, it.reference) for it in chunk])
            store_metric_scores(engine, spec.hash, [
                {"item_id": it.id, "item_hash": it.content_hash, "score": r.score,
                 "lang": r.lang, "cjk_share": r.cjk_share, "reason": r.reason}
                for it, r in zip(chunk, res, strict=True)])
            rep.scored_now += sum(r.score is not None for r in res)
            rep.unscored += sum(r.score is None for r in res)
            rep.reasons.update(r.reason for r in res if r.reason)
        reports.append(rep)
    return todo, reports
