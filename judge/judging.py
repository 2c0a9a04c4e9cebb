"""Judging the study's items with one configuration: what is left to ask, the prompts, and
storing each answer as it arrives.

A *unit* is one call: one item, one sample, and one dimension (per-dimension mode) or every
applicable dimension (all mode). The plan skips every (item, dimension, sample) that already
has an answer for this configuration, or is waiting in an uncollected batch; request failures
and answers about an item whose content has changed since are asked again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session, write_connection
from data.errors import H2HError
from data.language import item_language
from data.migrate import ensure_current
from data.models import AttentionCheck, Item, JudgeConfigRow
from data.rubric import Dimension, Rubric
from data.study import rubric_by_version

from .calls import Tally
from .config import JudgeSpec
from .exemplars import render_exemplars
from .parse import parse_answer, reason_category
from .prices import PriceTable, estimate_tokens
from .prompts import (
    dimension_values,
    item_values,
    placeholders,
    render,
    render_dimension,
    rubric_values,
)
from .providers.base import Message, ProviderError, Reply, Request
from .schema import answer_schema, output_instructions, tool_name
from .store import (
    existing_judgments,
    insert_ledger,
    ledger_row,
    measured_output_tokens,
    open_batch_keys,
    store_judgments,
)

__all__ = ["Filters", "ItemView", "JudgeUnit", "JudgePlan", "plan_judging", "build_request",
           "unit_request", "JudgeSink", "expected_output_tokens"]


@dataclass(frozen=True)
class Filters:
    """Which items to judge: ids, a task family, and at most ``limit`` items - a sample spread
    over task families and models, drawn with ``seed`` (:func:`spread_sample`)."""

    items: tuple[str, ...] = ()
    task: str | None = None
    limit: int | None = None
    dimensions: tuple[str, ...] = ()
    seed: int = 0


@dataclass(frozen=True)
class ItemView:
    id: str
    task: str
    context: dict[str, Any]
    response: str
    content_hash: str


@dataclass(frozen=True)
class JudgeUnit:
    item_id: str
    ask: tuple[str, ...]     # dimensions in the prompt
    store: tuple[str, ...]   # dimensions whose answer is still missing
    sample: int

    @property
    def keys(self) -> list[tuple[str, str, int]]:
        return [(self.item_id, d, self.sample) for d in self.store]


@dataclass
class JudgePlan:
    spec: JudgeSpec
    rubric: Rubric
    items: dict[str, ItemView]
    units: list[JudgeUnit]
    total_keys: int = 0
    done_keys: int = 0
    in_batches: int = 0
    redo: Counter = field(default_factory=Counter)
    # mean output tokens per call and over how many calls, from this configuration's ledger
    measured_output: tuple[float, int] | None = None
    #: what --limit took, in words (None without --limit)
    limited: str | None = None

    @property
    def pending_keys(self) -> int:
        return sum(len(u.store) for u in self.units)

    def language_of(self, item_id: str) -> str:
        """The language this configuration renders the rubric in for the item: the rubric's
        own, the one configured, or (``item``) the item's own language."""
        lang = self.spec.rubric_language
        if lang is None:
            return self.rubric.language
        if lang == "item":
            it = self.items[item_id]
            return item_language(it.context, it.response)
        return lang

    def rubric_for(self, item_id: str) -> Rubric:
        """The rubric as the prompt for the item shows it: every text in the item's rubric
        language, the rubric's own text where a translation is missing (made once per
        language)."""
        return self.rubric.in_language(self.language_of(item_id))


def _load_items(engine: Engine, rubric: Rubric, f: Filters) -> list[ItemView]:
    if f.task is not None and f.task not in rubric.tasks:
        raise H2HError(f"--task: '{f.task}' is not a task of this study "
                       f"({', '.join(rubric.tasks)})")
    if f.limit is not None and f.limit < 1:
        raise H2HError(f"--limit must be at least 1, got {f.limit}")
    q = select(Item.id, Item.task, Item.context, Item.response, Item.content_hash, Item.model)
    if f.task is not None:
        q = q.where(Item.task == f.task)
    with read_session(engine) as s:
        rows = s.exec(q.order_by(Item.position, Item.id)).all()
        # Attention checks are copies of real items with an instruction to the rater; they
        # are not part of the study, so no judge scores (or pays for) them.
        checks = set(s.exec(select(AttentionCheck.item_id)).all())
    asked_checks = [i for i in f.items if i in checks]
    if asked_checks:
        what = "is an attention check" if len(asked_checks) == 1 else "are attention checks"
        raise H2HError(f"--items: {', '.join(asked_checks[:10])} {what} for raters, not part "
                       "of the study; judges do not score them")
    models = {r[0]: r[5] for r in rows}
    views = [ItemView(*r[:5]) for r in rows if r[0] not in checks]
    if f.items:
        wanted = set(f.items)
        known = {v.id for v in views}
        unknown = [i for i in f.items if i not in known]
        if unknown:
            shown = ", ".join(unknown[:10]) + (" …" if len(unknown) > 10 else "")
            where = f" with task '{f.task}'" if f.task else ""
            raise H2HError(f"--items: no item{where} with id {shown}")
        views = [v for v in views if v.id in wanted]
    return _limited(views, f, models)


def _limited(views: list[ItemView], f: Filters, models: dict[str, str | None]
             ) -> list[ItemView]:
    if f.limit is None or f.limit >= len(views):
        return views
    keep = set(spread_sample([(v.id, v.task, models[v.id] or "") for v in views], f.limit,
                             f.seed))
    return [v for v in views if v.id in keep]


def spread_sample(items: Sequence[tuple[str, str, str]], n: int, seed: int) -> list[str]:
    """``n`` of ``items`` (id, task family, model) spread evenly over the (task, model)
    cells: each cell's items in a seeded random order, the cells taken in turn (in a seeded
    order too) until ``n`` are drawn. ``--limit 30`` on the demo (3 families × 3 models) takes
    about 3 or 4 items of every cell instead of the first 30 dialogue items, which left two
    dimensions without a judge score.

    >>> pick = spread_sample([(f"d{i}", "dialogue", "a") for i in range(5)]
    ...                      + [("r1", "recollection", "a"), ("r2", "recollection", "b")], 3, 0)
    >>> sorted(pick)[-2:], len(pick)
    (['r1', 'r2'], 3)
    """
    import random

    rng = random.Random(seed)
    cells: dict[tuple[str, str], list[str]] = {}
    for iid, task, model in items:
        cells.setdefault((task, model), []).append(iid)
    order = sorted(cells)
    rng.shuffle(order)
    queues = []
    for key in order:
        ids = sorted(cells[key])
        rng.shuffle(ids)
        queues.append(ids)
    out: list[str] = []
    while len(out) < n:
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out


def describe_limit(limit: int, seed: int, tasks: Sequence[str], of: int, *,
                   noun: str = "items", across: str = "models") -> str:
    """What ``--limit`` took, in words: how many ``noun`` of how many, and per task family
    (``tasks``: the task family of each one taken)."""
    parts = ", ".join(f"{t} {n}" for t, n in sorted(Counter(tasks).items()))
    return (f"--limit {limit}: {len(tasks)} of {of} {noun}, sampled across task families and "
            f"{across} (seed {seed}): {parts}")


def _dims_for(rubric: Rubric, task: str, only: tuple[str, ...]) -> tuple[Dimension, ...]:
    return tuple(d for d in rubric.dimensions_for(task) if not only or d.key in only)


def plan_judging(engine: Engine, spec: JudgeSpec, filters: Filters = Filters()) -> JudgePlan:
    """The calls still needed for ``spec`` on the filtered items (reads only)."""
    ensure_current(engine)
    rubric = rubric_by_version(engine, spec.rubric_version)
    known = {d.key for d in rubric.dimensions}
    for key in filters.dimensions:
        if key not in known:
            raise H2HError(f"--dimensions: '{key}' is not a dimension of the rubric "
                           f"({', '.join(d.key for d in rubric.dimensions)})")
    items = _load_items(engine, rubric, filters)
    existing = existing_judgments(engine, spec.hash)
    pending_batch = open_batch_keys(engine, spec.hash)
    plan = JudgePlan(spec=spec, rubric=rubric, items={}, units=[],
                     measured_output=measured_output_tokens(engine, spec.hash))
    if filters.limit is not None:
        every = _load_items(engine, rubric, replace(filters, limit=None))
        plan.limited = describe_limit(filters.limit, filters.seed, [v.task for v in items],
                                      len(every))
    for it in items:
        dims = _dims_for(rubric, it.task, filters.dimensions)
        for sample in range(spec.samples):
            todo: list[str] = []
            for d in dims:
                key = (it.id, d.key, sample)
                plan.total_keys += 1
                old = existing.get(key)
                if key in pending_batch:
                    plan.in_batches += 1
                elif old is None:
                    todo.append(d.key)
                elif old.outcome == "request_failed":
                    plan.redo["request failed before"] += 1
                    todo.append(d.key)
                elif old.item_hash != it.content_hash:
                    plan.redo["item changed since"] += 1
                    todo.append(d.key)
                else:
                    plan.done_keys += 1
            if not todo:
                continue
            plan.items[it.id] = it
            if spec.all_mode:
                plan.units.append(JudgeUnit(it.id, tuple(d.key for d in dims), tuple(todo),
                                            sample))
            else:
                plan.units += [JudgeUnit(it.id, (k,), (k,), sample) for k in todo]
    if spec.exemplars is not None and spec.exemplars.rule == "cover" and not spec.all_mode:
        # every call on a dimension opens with the same exemplars: asked dimension by
        # dimension, consecutive prompts share that long prefix, which a local model does not
        # evaluate again and a provider's prompt cache can serve (the answers do not depend on
        # the order)
        order = {d.key: n for n, d in enumerate(rubric.dimensions)}
        plan.units.sort(key=lambda u: order.get(u.ask[0], len(order)))
    return plan


def expected_output_tokens(spec: JudgeSpec, n_dims: int) -> int:
    """A planning guess of the answer's length: ~20 tokens per score, ~150 with reasoning."""
    per = 150 if spec.reason_first else 20
    return min(spec.max_tokens, 10 + per * n_dims)


def build_request(spec: JudgeSpec, rubric: Rubric, item: ItemView,
                  dims: Sequence[Dimension]) -> Request:
    """The rendered prompt and structured-output schema for one call."""
    tool = spec.provider == "anthropic" and spec.structured
    values = {**rubric_values(rubric), **item_values(item.task, item.context, item.response),
              "dimensions": "\n\n".join(render_dimension(d) for d in dims),
              "output": output_instructions(dims, all_mode=spec.all_mode,
                                            reason_first=spec.reason_first, tool=tool)}
    if not spec.all_mode:
        values.update(dimension_values(dims[0]))
    template = spec.template.user_all if spec.all_mode else spec.template.user
    user_text = render(template, values)
    if spec.exemplars is not None:
        turns = " ".join(t.get("text", "") for t in item.context.get("turns") or ())
        shown = spec.exemplars.for_call(f"{turns} {item.response}", [d.key for d in dims])
        section = render_exemplars(shown, rubric, dims, set(placeholders(template)))
        user_text = f"{section}\n\n{user_text}" if section else user_text
    schema = answer_schema(dims, all_mode=spec.all_mode, reason_first=spec.reason_first)
    return Request(model=spec.model, system=render(spec.template.system, values),
                   messages=(Message("user", user_text),),
                   max_tokens=spec.max_tokens, temperature=spec.temperature,
                   schema=schema if spec.structured else None,
                   schema_name=tool_name(dims, spec.all_mode),
                   schema_description="Record your scores for the companion's reply.",
                   model_file=spec.model_file)


def unit_request(plan: JudgePlan, unit: JudgeUnit) -> tuple[Request, int]:
    """The request for one unit and its estimated tokens (prompt plus expected answer)."""
    rubric = plan.rubric_for(unit.item_id)
    dims = [rubric.dimension(k) for k in unit.ask]
    req = build_request(plan.spec, rubric, plan.items[unit.item_id], dims)
    text = req.system + "".join(m.text for m in req.messages)
    return req, estimate_tokens(text) + expected_output_tokens(plan.spec, len(unit.ask))


class JudgeSink:
    """Builds each unit's request and stores its outcome with the ledger entry."""

    def __init__(self, engine: Engine, plan: JudgePlan, prices: PriceTable, *,
                 batch_id: str | None = None, output_form=None):
        self.engine = engine
        self.plan = plan
        self.spec = plan.spec
        self.prices = prices
        self.batch_id = batch_id
        # () -> the form the provider settled on; stored with the first answer in that form,
        # so even a killed run remembers what the server takes
        self.output_form = output_form
        self._form_stored: str | None = None

    def dims(self, unit: JudgeUnit) -> list[Dimension]:
        """The dimensions as the unit's prompt showed them (level names in its language, which
        the tolerant parser reads)."""
        rubric = self.plan.rubric_for(unit.item_id)
        return [rubric.dimension(k) for k in unit.ask]

    def request_for(self, unit: JudgeUnit) -> tuple[Request, int]:
        return unit_request(self.plan, unit)

    def ledger(self, unit: JudgeUnit, status: str, usage=None, cost: float | None = 0.0,
               seconds: float | None = None) -> dict[str, Any]:
        return ledger_row(config_hash=self.spec.hash, item_id=unit.item_id,
                          call_kind="judge", provider=self.spec.provider,
                          model=self.spec.model, status=status, usage=usage, cost=cost,
                          batch=self.batch_id is not None, seconds=seconds)

    def attempt_failed(self, unit: JudgeUnit, err: ProviderError) -> None:
        with write_connection(self.engine) as conn:
            insert_ledger(conn, [self.ledger(unit, err.label, seconds=err.seconds)])

    def rows_for(self, unit: JudgeUnit, reply: Reply) -> tuple[list[dict[str, Any]], Tally]:
        parsed = parse_answer(reply.text, reply.data, self.dims(unit),
                              all_mode=self.spec.all_mode, stop_reason=reply.stop_reason)
        item = self.plan.items[unit.item_id]
        tally = Tally()
        rows = []
        for key in unit.store:
            p = parsed[key]
            rows.append({"item_id": unit.item_id, "item_hash": item.content_hash,
                         "dimension": key, "sample": unit.sample,
                         "score": None if p.score is None else float(p.score),
                         "outcome": "scored" if p.score is not None else "invalid_reply",
                         "unscored_reason": p.reason, "raw_reply": reply.raw_text,
                         "reasoning": p.reasoning, "input_tokens": reply.usage.input_tokens,
                         "output_tokens": reply.usage.output_tokens, "batch_id": self.batch_id})
            if p.score is None:
                tally.unscored += 1
                cat = reason_category(p.reason)
                tally.reasons[cat] += 1
                tally.examples.setdefault(cat, p.reason.split(": ", 1)[-1])
            else:
                tally.scored += 1
        return rows, tally

    def succeeded(self, unit: JudgeUnit, reply: Reply) -> Tally:
        rows, tally = self.rows_for(unit, reply)
        u = reply.usage
        tally.cost = self.prices.cost_of(self.spec.model, u, batch=self.batch_id is not None,
                                         provider=self.spec.provider)
        status = "ok" if not tally.unscored else "unscored answer"
        form = self.output_form() if self.output_form is not None else None
        with write_connection(self.engine) as conn:  # the answer and its cost, together
            store_judgments(conn, self.spec.hash, rows)
            insert_ledger(conn, [self.ledger(unit, status, u, tally.cost, reply.seconds)])
            if form is not None and form != self._form_stored:
                conn.execute(sa.update(JudgeConfigRow).where(
                    JudgeConfigRow.hash == self.spec.hash).values(output_form=form))
                self._form_stored = form
        return tally

    def failure_rows(self, unit: JudgeUnit, reason: str) -> list[dict[str, Any]]:
        item = self.plan.items[unit.item_id]
        return [{"item_id": unit.item_id, "item_hash": item.content_hash, "dimension": key,
                 "sample": unit.sample, "score": None, "outcome": "request_failed",
                 "unscored_reason": f"request: {reason}", "raw_reply": "", "reasoning": "",
                 "input_tokens": 0, "output_tokens": 0, "batch_id": self.batch_id}
                for key in unit.store]

    def gave_up(self, unit: JudgeUnit, err: ProviderError) -> Tally:
        with write_connection(self.engine) as conn:
            store_judgments(conn, self.spec.hash, self.failure_rows(
                unit, f"{err.message} (gave up after retries; asked again on the next run)"))
        return Tally(failed=len(unit.store), reasons=Counter({"request": len(unit.store)}))
