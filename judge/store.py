"""Reading and writing the judge tables (through ``data``'s engine, sessions and models).

Every result is written in its own short transaction together with its cost-ledger entry, so
a run killed at any moment leaves only complete results behind. Judgments are keyed by
(configuration hash, item, dimension, sample), which the database enforces. A stored answer is
never replaced unless it was a request failure or the item's content changed since.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from data.configs import find_by_name_or_hash
from data.engine import read_session, upsert_statement, write_connection, write_session
from data.errors import H2HError
from data.models import CostEntry, JudgeBatch, JudgeConfigRow, Judgment, PairJudgment, utcnow

__all__ = ["Key", "ExistingJudgment", "save_config", "config_for_run", "settle_name",
           "check_name_free",
           "find_config",
           "record_output_form", "stored_output_form", "measured_output_tokens",
           "list_configs", "existing_judgments", "open_batch_keys", "store_judgments",
           "ledger_row", "insert_ledger", "add_ledger"]

Key = tuple[str, str, int]  # (item_id, dimension, sample)


@dataclass(frozen=True)
class ExistingJudgment:
    outcome: str
    item_hash: str
    batch_id: str | None


def _auto_name(row: JudgeConfigRow) -> bool:
    """Whether the configuration carries the name made up when no --name was given."""
    from .config import slug
    return row.name == f"{slug(row.model)}-{row.hash[:8]}"


def save_config(engine: Engine, row: JudgeConfigRow) -> JudgeConfigRow:
    """Store a configuration (or find it again); ``samples`` only ever grows. A stored
    configuration with a made-up name takes the name given now (see :func:`settle_name`)."""
    with write_session(engine) as s:
        check_name_free(s, row.name, row.hash)
        old = s.get(JudgeConfigRow, row.hash)
        if old is None:
            s.add(row)
            return row
        if row.samples > old.samples:
            old.samples = row.samples
        if old.name != row.name and _auto_name(old):
            old.name = row.name
        if row.model_file and old.model_file != row.model_file:
            old.model_file = row.model_file  # the same file (same SHA-256), moved
        s.add(old)
        return old


@contextmanager
def config_for_run(engine: Engine, row: JudgeConfigRow) -> Iterator[JudgeConfigRow]:
    """Store the configuration a run is about to use (:func:`save_config`). When the run fails
    before anything of it was stored - a model file that cannot be loaded, a request the
    server refuses at once, Ctrl+C before the first answer - a configuration this run created
    is removed again: ``h2h judge configs`` lists no configuration that never judged."""
    with read_session(engine) as s:
        existed = s.get(JudgeConfigRow, row.hash) is not None
    stored = save_config(engine, row)
    try:
        yield stored
    except BaseException:
        if not existed:
            _forget_if_empty(engine, row.hash)
        raise


def _forget_if_empty(engine: Engine, config_hash: str) -> None:
    with write_session(engine) as s:
        for table in (Judgment, PairJudgment, CostEntry, JudgeBatch):
            if s.exec(select(func.count()).select_from(table)
                      .where(table.config_hash == config_hash)).one():
                return
        row = s.get(JudgeConfigRow, config_hash)
        if row is not None:
            s.delete(row)


def settle_name(engine: Engine, name: str | None, config_hash: str
                ) -> tuple[str | None, str | None]:
    """The name a run uses when its settings equal a stored configuration's, and what to say.

    A configuration *is* its settings (the hash), so one set of settings has one name:
    without ``--name`` the stored name is used; a name given for a configuration stored under
    a made-up name (no ``--name`` then) becomes its name; a different name for a configuration
    named by the user is refused, naming the match, since its results would be reported under
    the other name.
    """
    with read_session(engine) as s:
        row = s.get(JudgeConfigRow, config_hash)
        if row is None or name == row.name:
            return name, None
        if name is None:
            return row.name, None
        if _auto_name(row):
            return name, (f"The stored configuration '{row.name}' has the same settings and "
                          f"no name of its own: it is now '{name}' (its stored judgments "
                          "count; only what is missing is asked).")
        n = s.exec(select(func.count()).select_from(Judgment)
                   .where(Judgment.config_hash == config_hash)).one()
    raise H2HError(f"--name '{name}': these are the same settings as the stored configuration "
                   f"'{row.name}' ({row.hash[:8]}: {row.provider} {row.model}, template "
                   f"'{row.template_name}', {row.mode}), which has {n} judgments. One set of "
                   f"settings is one judge: continue it with --config {row.name} (or --name "
                   f"{row.name}); to judge again as a separate configuration, change a setting "
                   "(--temperature, --max-tokens, --template, …).")


def record_output_form(engine: Engine, config_hash: str, form: str | None) -> None:
    """Remember the structured-output form a run settled on (the next run starts there)."""
    if form is None:
        return
    with write_session(engine) as s:
        row = s.get(JudgeConfigRow, config_hash)
        if row is not None and row.output_form != form:
            row.output_form = form
            s.add(row)


def stored_output_form(engine: Engine, config_hash: str) -> str | None:
    with read_session(engine) as s:
        row = s.get(JudgeConfigRow, config_hash)
        return None if row is None else row.output_form


def measured_output_tokens(engine: Engine, config_hash: str) -> tuple[float, int] | None:
    """Mean output tokens per answered call of a configuration, and over how many calls."""
    with read_session(engine) as s:
        n, total = s.exec(select(func.count(), func.sum(CostEntry.output_tokens)).where(
            CostEntry.config_hash == config_hash,
            CostEntry.status.in_(["ok", "unscored answer"]))).one()
    return (total / n, n) if n else None


def check_name_free(s: Session, name: str, config_hash: str) -> None:
    other = s.exec(select(JudgeConfigRow).where(JudgeConfigRow.name == name)).first()
    if other is not None and other.hash != config_hash:
        raise H2HError(f"--name: '{name}' already names judge configuration {other.hash[:8]} "
                       f"({other.provider} {other.model}, template '{other.template_name}'); "
                       "a changed template or parameter is a new configuration: pick a new name")


def find_config(engine: Engine, ref: str) -> JudgeConfigRow:
    """A configuration by name, by hash, or by a hash prefix of at least 6 characters."""
    try:
        return find_by_name_or_hash(engine, JudgeConfigRow, ref, what="judge configuration")
    except H2HError as exc:
        raise H2HError(f"--config: {exc}") from None


def list_configs(engine: Engine) -> list[dict[str, Any]]:
    """Every configuration with its judgment counts (scored, unscored, request failures)."""
    with read_session(engine) as s:
        rows = s.exec(select(JudgeConfigRow).order_by(JudgeConfigRow.created_at)).all()
        counts = s.exec(select(Judgment.config_hash, Judgment.outcome, func.count())
                        .group_by(Judgment.config_hash, Judgment.outcome)).all()
        items = dict(s.exec(select(Judgment.config_hash, func.count(func.distinct(
            Judgment.item_id))).group_by(Judgment.config_hash)).all())
        # a pairwise judge's answers: one per pair, dimension and order ("items" are pairs)
        counts += s.exec(select(PairJudgment.config_hash, PairJudgment.outcome, func.count())
                         .group_by(PairJudgment.config_hash, PairJudgment.outcome)).all()
        items.update(s.exec(select(PairJudgment.config_hash, func.count(func.distinct(
            PairJudgment.pair_id))).group_by(PairJudgment.config_hash)).all())
    by: dict[str, dict[str, int]] = {}
    for h, outcome, n in counts:
        by.setdefault(h, {})[outcome] = n
    return [{"row": r, "items": items.get(r.hash, 0),
             "scored": by.get(r.hash, {}).get("scored", 0),
             "unscored": by.get(r.hash, {}).get("invalid_reply", 0),
             "request_failed": by.get(r.hash, {}).get("request_failed", 0)} for r in rows]


def existing_judgments(engine: Engine, config_hash: str) -> dict[Key, ExistingJudgment]:
    with read_session(engine) as s:
        rows = s.exec(select(Judgment.item_id, Judgment.dimension, Judgment.sample,
                             Judgment.outcome, Judgment.item_hash, Judgment.batch_id)
                      .where(Judgment.config_hash == config_hash)).all()
    return {(i, d, n): ExistingJudgment(o, h, b) for i, d, n, o, h, b in rows}


def open_batch_keys(engine: Engine, config_hash: str) -> set[Key]:
    """Keys already submitted in a batch that is not collected yet (never submitted twice)."""
    out: set[Key] = set()
    with read_session(engine) as s:
        batches = s.exec(select(JudgeBatch.requests).where(
            JudgeBatch.config_hash == config_hash, JudgeBatch.collected_at.is_(None))).all()
    for mapping in batches:
        for entry in mapping.values():
            for dim in entry["store"]:
                out.add((entry["item"], dim, int(entry["sample"])))
    return out


_KEY = ("config_hash", "item_id", "dimension", "sample")


def _replaceable(stored, new):
    """A stored judgment is replaced only when it was a request failure or is about another
    version of the item."""
    return sa.or_(stored.outcome == "request_failed", stored.item_hash != new.item_hash)


def store_judgments(conn: sa.Connection, config_hash: str,
                    rows: Iterable[dict[str, Any]]) -> None:
    """Insert judgment rows, or replace a stored row - inside the caller's transaction.

    One statement per row lets the database decide atomically (``INSERT … ON CONFLICT DO
    UPDATE … WHERE``): a stored answer about the same item content is kept (the first answer
    counts; nothing is paid for twice), while a request failure or an answer about an older
    version of the item is replaced.
    """
    now = utcnow()
    values = [{**r, "config_hash": config_hash, "created_at": now} for r in rows]
    if values:
        conn.execute(upsert_statement(Judgment.__table__, conn.dialect.name, _KEY,
                                      tuple(values[0]), _replaceable), values)


def ledger_row(*, config_hash: str, item_id: str | None, call_kind: str, provider: str,
               model: str, status: str, usage=None, cost: float | None = 0.0,
               batch: bool = False, seconds: float | None = None) -> dict[str, Any]:
    """One cost-ledger entry as a row (``usage`` None for an attempt that got no answer;
    ``seconds`` the attempt's wall time, None when unknown, e.g. inside a batch)."""
    return {"config_hash": config_hash, "item_id": item_id, "call_kind": call_kind,
            "seconds": seconds,
            "provider": provider, "model": model, "status": status[:60],
            "input_tokens": usage.input_tokens if usage else 0,
            "output_tokens": usage.output_tokens if usage else 0,
            "cache_write_tokens": usage.cache_write_tokens if usage else 0,
            "cache_read_tokens": usage.cache_read_tokens if usage else 0,
            "cost_usd": cost, "batch": batch, "created_at": utcnow()}


def insert_ledger(conn: sa.Connection, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        conn.execute(sa.insert(CostEntry.__table__), list(rows))


def add_ledger(engine: Engine, row: dict[str, Any]) -> None:
    """One ledger entry in its own transaction."""
    with write_connection(engine) as conn:
        insert_ledger(conn, [row])
