"""Reference-based metric configurations and their scores, in the study database.

A metric configuration is stored like a judge configuration: a name, the metric, the library
and its version, the tokenizer per language and the settings, all named by a hash. Scores are
keyed by (configuration, item) and carry the item's content hash, so an item whose response or
reference changed is scored again and nothing else is. The computations live in
``analysis.refmetrics``; this module only reads and writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import delete, select

from .configs import find_by_name_or_hash
from .engine import read_session, upsert_statement, write_connection, write_session
from .errors import H2HError
from .models import AttentionCheck, Item, MetricConfigRow, MetricScore, utcnow

__all__ = ["MetricItem", "ItemsToScore", "items_to_score", "save_metric_config",
           "find_metric_config", "list_metric_configs", "scored_hashes", "store_metric_scores",
           "metric_scores", "export_rows"]


@dataclass(frozen=True)
class MetricItem:
    """A study item with a reference: the pair a reference-based metric scores."""

    id: str
    response: str
    reference: str
    content_hash: str


@dataclass(frozen=True)
class ItemsToScore:
    """The study's items with a reference, and how many were left aside and why."""

    items: list[MetricItem]
    total: int
    without_reference: int
    attention_checks: int


def items_to_score(engine: Engine) -> ItemsToScore:
    """Every item with a non-blank reference, in study order. Attention-check items are not
    part of the study and are left out (counted), like everywhere in the analysis."""
    with read_session(engine) as s:
        checks = set(s.exec(select(AttentionCheck.item_id)).all())
        rows = s.exec(select(Item.id, Item.response, Item.reference, Item.content_hash)
                      .order_by(Item.position, Item.id)).all()
    out: list[MetricItem] = []
    no_ref = 0
    for iid, resp, ref, h in rows:
        if iid in checks:
            continue
        if ref is None or not ref.strip():
            no_ref += 1
            continue
        out.append(MetricItem(iid, resp, ref, h))
    n_checks = len(checks & {r[0] for r in rows})
    return ItemsToScore(out, len(rows) - n_checks, no_ref, n_checks)


def save_metric_config(engine: Engine, row: MetricConfigRow, *, replace: bool = False
                       ) -> MetricConfigRow:
    """Store a configuration, or find it again by its hash.

    A name already used by a configuration with other settings (say, after an upgrade of the
    library) is refused, unless ``replace``: then the old configuration and its scores are
    deleted first.
    """
    with write_session(engine) as s:
        other = s.exec(select(MetricConfigRow).where(MetricConfigRow.name == row.name)).first()
        if other is not None and other.hash != row.hash:
            if not replace:
                raise H2HError(
                    f"--name: '{row.name}' already names metric configuration {other.hash[:8]} "
                    f"({other.library} {other.library_version}, settings "
                    f"{_short(other.settings)}); these settings differ "
                    f"({row.library} {row.library_version}, {_short(row.settings)}). Pick "
                    "another --name, or pass --replace to delete the old scores and compute "
                    "them again")
            s.exec(delete(MetricScore).where(MetricScore.config_hash == other.hash))
            s.delete(other)
            s.flush()
        old = s.get(MetricConfigRow, row.hash)
        if old is not None:
            if old.name != row.name:
                raise H2HError(f"--name: these settings are already stored as metric "
                               f"configuration '{old.name}'; use that name")
            return old
        s.add(row)
        return row


def _short(settings: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))


def find_metric_config(engine: Engine, ref: str) -> MetricConfigRow:
    """A configuration by name, by hash, or by a hash prefix of at least 6 characters."""
    return find_by_name_or_hash(engine, MetricConfigRow, ref, what="metric configuration",
                                none_yet="none yet; run `h2h metrics run`")


def list_metric_configs(engine: Engine) -> list[dict[str, Any]]:
    """Every configuration with its counts: items scored, items that could not be scored, and
    stale scores (the item's response or reference changed since; not used until rescored)."""
    with read_session(engine) as s:
        rows = s.exec(select(MetricConfigRow).order_by(MetricConfigRow.created_at,
                                                       MetricConfigRow.name)).all()
        counts = s.exec(select(MetricScore.config_hash, MetricScore.score.is_(None),
                               MetricScore.item_hash == Item.content_hash, func.count())
                        .join(Item, Item.id == MetricScore.item_id)
                        .group_by(MetricScore.config_hash, MetricScore.score.is_(None),
                                  MetricScore.item_hash == Item.content_hash)).all()
    by: dict[str, dict[str, int]] = {}
    for h, missing, current, n in counts:
        key = "stale" if not current else "unscored" if missing else "scored"
        d = by.setdefault(h, {})
        d[key] = d.get(key, 0) + n
    return [{"row": r, **{k: by.get(r.hash, {}).get(k, 0)
                          for k in ("scored", "unscored", "stale")}} for r in rows]


def scored_hashes(engine: Engine, config_hash: str) -> dict[str, str]:
    """item id -> the item content hash it was scored at, for one configuration."""
    with read_session(engine) as s:
        rows = s.exec(select(MetricScore.item_id, MetricScore.item_hash)
                      .where(MetricScore.config_hash == config_hash)).all()
    return dict(rows)


_KEY = ("config_hash", "item_id")


def store_metric_scores(engine: Engine, config_hash: str,
                        rows: Iterable[dict[str, Any]]) -> int:
    """Insert or replace scores (``item_id, item_hash, score, lang, cjk_share, reason``) in
    one transaction; returns how many were written."""
    now = utcnow()
    values: Sequence[dict[str, Any]] = [{**r, "config_hash": config_hash, "created_at": now}
                                        for r in rows]
    if not values:
        return 0
    with write_connection(engine) as conn:
        conn.execute(upsert_statement(MetricScore.__table__, conn.dialect.name, _KEY,
                                      tuple(values[0])), list(values))
    return len(values)


def metric_scores(engine: Engine) -> list[tuple]:
    """Every current score: (configuration name, item id, score, lang, cjk_share). A score of
    an item whose content changed since is stale and left out until it is scored again."""
    with read_session(engine) as s:
        return list(s.exec(select(MetricConfigRow.name, MetricScore.item_id, MetricScore.score,
                                  MetricScore.lang, MetricScore.cjk_share)
                           .join(MetricConfigRow,
                                 MetricConfigRow.hash == MetricScore.config_hash)
                           .join(Item, Item.id == MetricScore.item_id)
                           .where(MetricScore.item_hash == Item.content_hash)).all())



def export_rows(engine: Engine) -> list[tuple]:
    """Every current score (stale ones left out) with its item's model, condition, scenario
    and task, in study order: (item_id, metric, score, lang, cjk_share, model, condition,
    scenario, task, config_hash)."""
    with read_session(engine) as s:
        return list(s.exec(
            select(MetricScore.item_id, MetricConfigRow.name, MetricScore.score,
                   MetricScore.lang, MetricScore.cjk_share, Item.model, Item.condition,
                   Item.scenario, Item.task, MetricScore.config_hash)
            .join(MetricConfigRow, MetricConfigRow.hash == MetricScore.config_hash)
            .join(Item, Item.id == MetricScore.item_id)
            .where(MetricScore.item_hash == Item.content_hash)
            .order_by(Item.position, Item.id, MetricConfigRow.name)).all())
