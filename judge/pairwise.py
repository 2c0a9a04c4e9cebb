"""The pairwise judge: two replies to one scenario compared on the rubric, each pair in both
orders.

Every pair is asked twice — item_a shown first (order ``ab``) and item_b first (``ba``) — with
the same rubric text, template, provider, prompt cache, cost ledger, resume and batches as the
single-item judge (a configuration is a :class:`~judge.config.JudgeSpec` whose mode is
"pairwise" or "pairwise-all"). Both raw answers are stored (:class:`data.models.PairJudgment`):
``verdict`` as the judge said it ("first", "second", "tie" for its A / B / tie) and
``winner`` in the pair's own order, so position bias (the first-shown reply winning more
often) and consistency (the two orders agreeing) can be measured
(:func:`analysis.arena.position_bias`).

A *unit* is one call: one pair, one order, one sample, and one dimension (``pairwise``) or
every dimension that applies to both replies (``pairwise-all``). The plan skips what is
stored; request failures and answers about a pair whose replies changed since are asked
again.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.orm import aliased
from sqlmodel import select

from data.engine import read_session, write_connection
from data.errors import H2HError
from data.language import item_language
from data.migrate import ensure_current
from data.models import Item, JudgeBatch, JudgeConfigRow, Pair, PairJudgment, utcnow
from data.pairs import pair_hash
from data.rubric import Dimension, Rubric
from data.study import rubric_by_version

from .config import JudgeSpec
from .judging import describe_limit, spread_sample
from .parse import extract_json
from .prices import PriceTable, estimate_tokens
from .progress import Tally
from .prompts import dimension_values, item_values, render, render_dimension, rubric_values
from .providers.base import Message, ProviderError, Reply, Request
from .store import insert_ledger, ledger_row, measured_output_tokens

__all__ = ["PairFilters", "PairView", "PairUnit", "PairPlan", "plan_pairwise",
           "build_pair_request", "PairSink", "Verdict", "parse_preference",
           "preference_schema", "pairwise_answer_schema", "pairwise_tool_name",
           "pairwise_output_instructions", "store_pair_judgments", "VERDICTS", "ORDERS",
           "to_winner"]

VERDICTS = ("A", "B", "tie")
ORDERS = ("ab", "ba")
_SHOWN = {"A": "first", "B": "second", "tie": "tie"}


def to_winner(verdict: str, order: str) -> str:
    """A verdict as shown ("first", "second", "tie") in the pair's own order ("a", "b",
    "tie"): with order ``ab`` the first reply is item_a, with ``ba`` it is item_b."""
    if verdict == "tie":
        return "tie"
    first = "a" if order == "ab" else "b"
    return first if verdict == "first" else ("b" if first == "a" else "a")


# --- schema and instructions ------------------------------------------------------------------

_REASONING = {"type": "string",
              "description": "Your reasoning: how the two replies compare with the anchors, in "
                             "2-4 sentences, written before you decide."}


def preference_schema(dim: Dimension, *, reason_first: bool) -> dict[str, Any]:
    """One dimension's answer: ``winner`` (A, B or tie), ``reasoning`` before it."""
    props: dict[str, Any] = {}
    if reason_first:
        props["reasoning"] = _REASONING
    props["winner"] = {"type": "string", "enum": list(VERDICTS),
                       "description": f"{dim.label}: A or B for the better reply, tie when "
                                      "they are about the same"}
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


def pairwise_answer_schema(dims: Sequence[Dimension], *, all_mode: bool,
                           reason_first: bool) -> dict[str, Any]:
    if not all_mode:
        return preference_schema(dims[0], reason_first=reason_first)
    props = {d.key: preference_schema(d, reason_first=reason_first) for d in dims}
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


def pairwise_tool_name(dims: Sequence[Dimension], all_mode: bool = False) -> str:
    """``prefer_<key>`` or ``prefer_all``."""
    return "prefer_all" if all_mode else f"prefer_{dims[0].key}"


def pairwise_output_instructions(dims: Sequence[Dimension], *, all_mode: bool,
                                 reason_first: bool, tool: bool) -> str:
    r = '"reasoning": "<2-4 sentences>", ' if reason_first else ""
    one = "{" + r + '"winner": "A", "B" or "tie"}'
    parts = ["First reason briefly about how the two replies compare with the anchors; only "
             "then decide." if reason_first else
             "Decide by the anchors which reply is better."]
    shape = ("{" + ", ".join(f'"{d.key}": {one}' for d in dims) + "}") if all_mode else one
    name = pairwise_tool_name(dims, all_mode)
    parts.append(f"Give your answer by calling the {name} tool with: {shape}" if tool else
                 f"Answer with one JSON object and nothing else: {shape}")
    return "\n".join(parts)


# --- reading an answer -----------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """One dimension's outcome: "first", "second" or "tie" as shown, or None and why (the
    reason starts with its category, as :mod:`judge.parse` words them)."""

    verdict: str | None
    reason: str | None = None
    reasoning: str = ""


_WORDS = {"a": "A", "reply a": "A", "first": "A", "the first": "A", "1": "A",
          "b": "B", "reply b": "B", "second": "B", "the second": "B", "2": "B",
          "tie": "tie", "equal": "tie", "same": "tie", "about the same": "tie",
          "neither": "tie", "both": "tie", "draw": "tie"}


def _word(value: Any) -> str | None:
    if not isinstance(value, str | int) or isinstance(value, bool):
        return None
    text = str(value).strip().strip("*`_\"' .").casefold()
    return _WORDS.get(text)


def _check(dim: Dimension, value: Any, reasoning: str) -> Verdict:
    if value is None:
        return Verdict(None, f"declined: no winner given for '{dim.key}'", reasoning)
    w = _word(value)
    if w is None:
        shown = json.dumps(value, ensure_ascii=False)[:60]
        return Verdict(None, f"malformed: winner {shown} is not A, B or tie", reasoning)
    return Verdict(_SHOWN[w], None, reasoning)


def _text(v: Any) -> str:
    return v if isinstance(v, str) else "" if v is None else json.dumps(v, ensure_ascii=False)


def _from_object(obj: dict[str, Any], dims: Sequence[Dimension], all_mode: bool,
                 fallback: str) -> dict[str, Verdict]:
    if not all_mode:
        d = dims[0]
        if "winner" in obj:
            return {d.key: _check(d, obj["winner"], _text(obj.get("reasoning")) or fallback)}
        inner = obj.get(d.key)
        if isinstance(inner, dict):
            return _from_object(inner, dims, False, fallback)
        if inner is not None:
            return {d.key: _check(d, inner, fallback)}
        keys = ", ".join(sorted(obj)) or "none"
        return {d.key: Verdict(None, f"malformed: no 'winner' in the answer (keys: {keys})",
                               _text(obj.get("reasoning")) or fallback)}
    out = {}
    for d in dims:
        v = obj.get(d.key)
        if v is None:
            out[d.key] = Verdict(None, f"missing: the answer has no '{d.key}'", fallback)
        elif isinstance(v, dict):
            out[d.key] = (_check(d, v["winner"], _text(v.get("reasoning"))) if "winner" in v
                          else Verdict(None, f"malformed: no 'winner' for '{d.key}'",
                                       _text(v.get("reasoning"))))
        else:
            out[d.key] = _check(d, v, fallback)
    return out


_VERDICT_LINE = re.compile(r"(?i)\b(?:winner|better reply|better|answer|verdict|preference)\b"
                           r"\s*[:=]\s*\**\s*(reply\s+[ab]\b|[ab]\b|tie\b)")


def _from_lines(text: str, dims: Sequence[Dimension], all_mode: bool) -> dict[str, Verdict]:
    if not all_mode:
        d = dims[0]
        bare = _word(text)
        if bare is not None:
            return {d.key: Verdict(_SHOWN[bare], None, text.strip())}
        found = list(_VERDICT_LINE.finditer(text))
        if not found:
            return {d.key: Verdict(None, "malformed: no winner found in the reply",
                                   text.strip())}
        m = found[-1]  # reason-first replies end with the verdict
        return {d.key: _check(d, m.group(1), text[:m.start()].strip())}
    out = {}
    for d in dims:
        names = "|".join(re.escape(n) for n in (d.label, d.key, d.key.replace("_", " ")))
        found = list(re.finditer(rf"(?im)^[\W_]*(?:{names})[\W_]*?\s*[:=\-–]\s*\**\s*"
                                 r"(reply\s+[ab]\b|[ab]\b|tie\b)", text))
        out[d.key] = (_check(d, found[-1].group(1), text.strip()) if found else
                      Verdict(None, f"missing: no winner for '{d.key}' in the reply",
                              text.strip()))
    return out


def parse_preference(text: str, data: dict[str, Any] | None, dims: Sequence[Dimension], *,
                     all_mode: bool, stop_reason: str | None = None) -> dict[str, Verdict]:
    """Verdicts per dimension key from a reply's structured ``data`` or its ``text``:
    ``{"winner": "A"}`` (or B, tie; also "first", "reply B", "equal"), a JSON object in the
    text, a line such as ``Winner: B``, or a reply that is only the verdict. Nothing else is
    guessed: anything else is unscored with its reason.

    >>> from data.rubric import load_default_rubric
    >>> d = load_default_rubric().dimension("empathy")
    >>> parse_preference("B is warmer.\\nWinner: A", None, [d], all_mode=False)["empathy"]
    Verdict(verdict='first', reason=None, reasoning='B is warmer.')
    >>> parse_preference('{"winner": "C"}', None, [d], all_mode=False)["empathy"].reason
    'malformed: winner "C" is not A, B or tie'
    """
    if data is not None:
        out = _from_object(data, dims, all_mode, text.strip())
    elif not text.strip():
        out = {d.key: Verdict(None, "empty: the reply has no text and no structured answer")
               for d in dims}
    else:
        obj = extract_json(text)
        out = (_from_object(obj, dims, all_mode, "") if obj is not None
               else _from_lines(text, dims, all_mode))
    if stop_reason in ("max_tokens", "length"):
        out = {k: v if v.verdict is not None else
               Verdict(None, f"{v.reason} (the reply was cut off at max_tokens)", v.reasoning)
               for k, v in out.items()}
    return out


# --- the plan --------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairFilters:
    """Which pairs: ids, a task family, at most ``limit`` pairs (a sample spread over task
    families and model pairs, seeded by ``seed``), and which dimensions."""

    pairs: tuple[int, ...] = ()
    task: str | None = None
    limit: int | None = None
    dimensions: tuple[str, ...] = ()
    seed: int = 0


@dataclass(frozen=True)
class PairView:
    id: int
    task: str
    context: dict[str, Any]
    item_a: str
    item_b: str
    response_a: str
    response_b: str
    hash: str  # pair_hash of the two items' content hashes
    task_b: str = ""  # item_b's task (the pair's dimensions apply to both)

    def shown(self, order: str) -> tuple[str, str]:
        """The two replies in the order a call shows them."""
        return ((self.response_a, self.response_b) if order == "ab"
                else (self.response_b, self.response_a))


@dataclass(frozen=True)
class PairUnit:
    pair_id: int
    order: str
    ask: tuple[str, ...]
    store: tuple[str, ...]
    sample: int

    @property
    def keys(self) -> list[tuple[int, str, str, int]]:
        return [(self.pair_id, d, self.order, self.sample) for d in self.store]


@dataclass
class PairPlan:
    spec: JudgeSpec
    rubric: Rubric
    pairs: dict[int, PairView]
    units: list[PairUnit]
    total_keys: int = 0
    done_keys: int = 0
    in_batches: int = 0
    redo: Counter = field(default_factory=Counter)
    measured_output: tuple[float, int] | None = None
    limited: str | None = None  # what --limit took, in words

    @property
    def pending_keys(self) -> int:
        return sum(len(u.store) for u in self.units)

    def language_of(self, pair_id: int) -> str:
        lang = self.spec.rubric_language
        if lang is None:
            return self.rubric.language
        if lang == "item":
            p = self.pairs[pair_id]
            return item_language(p.context, p.response_a + "\n" + p.response_b)
        return lang

    def rubric_for(self, pair_id: int) -> Rubric:
        return self.rubric.in_language(self.language_of(pair_id))


def _load_pairs(engine: Engine, rubric: Rubric, f: PairFilters) -> list[PairView]:
    if f.task is not None and f.task not in rubric.tasks:
        raise H2HError(f"--task: '{f.task}' is not a task of this study "
                       f"({', '.join(rubric.tasks)})")
    if f.limit is not None and f.limit < 1:
        raise H2HError(f"--limit must be at least 1, got {f.limit}")
    a, b = aliased(Item), aliased(Item)
    with read_session(engine) as s:
        rows = s.exec(select(Pair.id, a.task, a.context, a.id, b.id, a.response, b.response,
                             a.content_hash, b.content_hash, b.task, a.model, b.model)
                      .join(a, a.id == Pair.item_a).join(b, b.id == Pair.item_b)
                      .where(Pair.attention.is_(None))
                      .order_by(Pair.position, Pair.id)).all()
    rows = [r for r in rows if f.task is None or r[1] == f.task]
    views = [PairView(pid, task, ctx or {}, ia, ib, ra, rb, pair_hash(ha, hb), tb)
             for pid, task, ctx, ia, ib, ra, rb, ha, hb, tb, _, _ in rows]
    model_pair = {r[0]: " vs ".join(sorted((r[10] or "", r[11] or ""))) for r in rows}
    if f.pairs:
        known = {v.id for v in views}
        unknown = [str(p) for p in f.pairs if p not in known]
        if unknown:
            raise H2HError(f"--pairs: no pair {', '.join(unknown[:10])} (see `h2h export "
                           "preferences` or `h2h pairs make`)")
        views = [v for v in views if v.id in set(f.pairs)]
    if f.limit is not None and f.limit < len(views):
        # the first pairs in study order are one task family's (pairs are made item by item):
        # the judge would be tried on a single family, as --limit once did for `judge run`
        keep = set(spread_sample([(str(v.id), v.task, model_pair[v.id]) for v in views],
                                 f.limit, f.seed))
        views = [v for v in views if str(v.id) in keep]
    return views


def _existing(engine: Engine, config_hash: str) -> dict[tuple[int, str, str, int],
                                                         tuple[str, str]]:
    with read_session(engine) as s:
        rows = s.exec(select(PairJudgment.pair_id, PairJudgment.dimension, PairJudgment.order,
                             PairJudgment.sample, PairJudgment.outcome, PairJudgment.pair_hash)
                      .where(PairJudgment.config_hash == config_hash)).all()
    return {(p, d, o, n): (out, h) for p, d, o, n, out, h in rows}


def _open_batch_pair_keys(engine: Engine, config_hash: str) -> set[tuple[int, str, str, int]]:
    out = set()
    with read_session(engine) as s:
        for mapping in s.exec(select(JudgeBatch.requests).where(
                JudgeBatch.config_hash == config_hash, JudgeBatch.collected_at.is_(None))):
            for e in mapping.values():
                out |= {(int(e["pair"]), d, e["order"], int(e["sample"])) for d in e["store"]}
    return out


def plan_pairwise(engine: Engine, spec: JudgeSpec, filters: PairFilters = PairFilters()
                  ) -> PairPlan:
    """The calls still needed for the pairwise ``spec`` on the filtered pairs (reads only)."""
    ensure_current(engine)
    if not spec.pairwise:
        raise H2HError(f"'{spec.display_name}' scores single replies, not pairs")
    rubric = rubric_by_version(engine, spec.rubric_version)
    known = {d.key for d in rubric.dimensions}
    for key in filters.dimensions:
        if key not in known:
            raise H2HError(f"--dimensions: '{key}' is not a dimension of the rubric "
                           f"({', '.join(d.key for d in rubric.dimensions)})")
    views = _load_pairs(engine, rubric, filters)
    existing = _existing(engine, spec.hash)
    waiting = _open_batch_pair_keys(engine, spec.hash)
    plan = PairPlan(spec, rubric, {}, [], measured_output=measured_output_tokens(engine,
                                                                                   spec.hash))
    if filters.limit is not None:
        every = _load_pairs(engine, rubric, replace(filters, limit=None))
        plan.limited = describe_limit(filters.limit, filters.seed, [v.task for v in views],
                                      len(every), noun="pairs", across="model pairs")
    for v in views:
        dims = [d.key for d in rubric.dimensions_for(v.task) if d.applies_to(v.task_b or v.task)
                and (not filters.dimensions or d.key in filters.dimensions)]
        for order in ORDERS:
            for sample in range(spec.samples):
                todo = []
                for d in dims:
                    key = (v.id, d, order, sample)
                    plan.total_keys += 1
                    old = existing.get(key)
                    if key in waiting:
                        plan.in_batches += 1
                    elif old is None:
                        todo.append(d)
                    elif old[0] == "request_failed":
                        plan.redo["request failed before"] += 1
                        todo.append(d)
                    elif old[1] != v.hash:
                        plan.redo["a reply changed since"] += 1
                        todo.append(d)
                    else:
                        plan.done_keys += 1
                if not todo:
                    continue
                plan.pairs[v.id] = v
                if spec.all_mode:
                    plan.units.append(PairUnit(v.id, order, tuple(dims), tuple(todo), sample))
                else:
                    plan.units += [PairUnit(v.id, order, (k,), (k,), sample) for k in todo]
    return plan


def build_pair_request(spec: JudgeSpec, rubric: Rubric, pair: PairView, order: str,
                       dims: Sequence[Dimension]) -> Request:
    """The rendered prompt (the replies in ``order``) and schema for one call."""
    tool = spec.provider == "anthropic" and spec.structured
    first, second = pair.shown(order)
    values = {**rubric_values(rubric), **item_values(pair.task, pair.context, ""),
              "first": first, "second": second,
              "dimensions": "\n\n".join(render_dimension(d) for d in dims),
              "output": pairwise_output_instructions(dims, all_mode=spec.all_mode,
                                                     reason_first=spec.reason_first,
                                                     tool=tool)}
    values.pop("response", None)
    if not spec.all_mode:
        values.update(dimension_values(dims[0]))
    user_text = spec.template.user_all if spec.all_mode else spec.template.user
    schema = pairwise_answer_schema(dims, all_mode=spec.all_mode,
                                    reason_first=spec.reason_first)
    return Request(model=spec.model, system=render(spec.template.system, values),
                   messages=(Message("user", render(user_text, values)),),
                   max_tokens=spec.max_tokens, temperature=spec.temperature,
                   schema=schema if spec.structured else None,
                   schema_name=pairwise_tool_name(dims, spec.all_mode),
                   schema_description="Record which reply is better.",
                   model_file=spec.model_file)


def expected_output_tokens(spec: JudgeSpec, n_dims: int) -> int:
    per = 150 if spec.reason_first else 15
    return min(spec.max_tokens, 10 + per * n_dims)


def unit_request(plan: PairPlan, unit: PairUnit) -> tuple[Request, int]:
    rubric = plan.rubric_for(unit.pair_id)
    dims = [rubric.dimension(k) for k in unit.ask]
    req = build_pair_request(plan.spec, rubric, plan.pairs[unit.pair_id], unit.order, dims)
    text = req.system + "".join(m.text for m in req.messages)
    return req, estimate_tokens(text) + expected_output_tokens(plan.spec, len(unit.ask))


# --- storing ---------------------------------------------------------------------------------

_KEY = ("config_hash", "pair_id", "dimension", "order", "sample")


@lru_cache(maxsize=8)
def _upsert(dialect: str, columns: tuple[str, ...]):
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    elif dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:  # pragma: no cover
        raise H2HError(f"judging needs SQLite or PostgreSQL, not {dialect}")
    table = PairJudgment.__table__
    stmt = insert(table)
    return stmt.on_conflict_do_update(
        index_elements=list(_KEY),
        set_={c: stmt.excluded[c] for c in columns if c not in _KEY},
        where=sa.or_(table.c.outcome == "request_failed",
                     table.c.pair_hash != stmt.excluded.pair_hash))


def store_pair_judgments(conn: sa.Connection, config_hash: str,
                         rows: Sequence[dict[str, Any]]) -> None:
    """Insert answers, or replace a request failure or an answer about older replies (one
    statement per row, decided by the database, as :func:`judge.store.store_judgments`)."""
    now = utcnow()
    values = [{**r, "config_hash": config_hash, "created_at": now} for r in rows]
    if values:
        conn.execute(_upsert(conn.dialect.name, tuple(values[0])), values)


class PairSink:
    """Builds each unit's request and stores its outcome with the ledger entry."""

    def __init__(self, engine: Engine, plan: PairPlan, prices: PriceTable, *,
                 batch_id: str | None = None, output_form=None):
        self.engine = engine
        self.plan = plan
        self.spec = plan.spec
        self.prices = prices
        self.batch_id = batch_id
        self.output_form = output_form
        self._form_stored: str | None = None

    def dims(self, unit: PairUnit) -> list[Dimension]:
        rubric = self.plan.rubric_for(unit.pair_id)
        return [rubric.dimension(k) for k in unit.ask]

    def request_for(self, unit: PairUnit) -> tuple[Request, int]:
        return unit_request(self.plan, unit)

    def ledger(self, unit: PairUnit, status: str, usage=None, cost: float | None = 0.0,
               seconds: float | None = None) -> dict[str, Any]:
        p = self.plan.pairs.get(unit.pair_id)
        return ledger_row(config_hash=self.spec.hash, item_id=p.item_a if p else None,
                          call_kind="pairwise", provider=self.spec.provider,
                          model=self.spec.model, status=status, usage=usage, cost=cost,
                          batch=self.batch_id is not None, seconds=seconds)

    def attempt_failed(self, unit: PairUnit, err: ProviderError) -> None:
        with write_connection(self.engine) as conn:
            insert_ledger(conn, [self.ledger(unit, err.label, seconds=err.seconds)])

    def rows_for(self, unit: PairUnit, reply: Reply) -> tuple[list[dict[str, Any]], Tally]:
        parsed = parse_preference(reply.text, reply.data, self.dims(unit),
                                  all_mode=self.spec.all_mode, stop_reason=reply.stop_reason)
        pair = self.plan.pairs[unit.pair_id]
        tally = Tally()
        rows = []
        for key in unit.store:
            v = parsed[key]
            rows.append({"pair_id": unit.pair_id, "pair_hash": pair.hash, "dimension": key,
                         "order": unit.order, "sample": unit.sample, "verdict": v.verdict,
                         "winner": None if v.verdict is None else to_winner(v.verdict,
                                                                           unit.order),
                         "outcome": "scored" if v.verdict is not None else "invalid_reply",
                         "unscored_reason": v.reason, "raw_reply": reply.raw_text,
                         "reasoning": v.reasoning, "input_tokens": reply.usage.input_tokens,
                         "output_tokens": reply.usage.output_tokens, "batch_id": self.batch_id})
            if v.verdict is None:
                tally.unscored += 1
                cat = (v.reason or "").split(":", 1)[0]
                tally.reasons[cat] += 1
                tally.examples.setdefault(cat, (v.reason or "").split(": ", 1)[-1])
            else:
                tally.scored += 1
        return rows, tally

    def succeeded(self, unit: PairUnit, reply: Reply) -> Tally:
        rows, tally = self.rows_for(unit, reply)
        u = reply.usage
        tally.cost = self.prices.cost_of(self.spec.model, u, batch=self.batch_id is not None,
                                         provider=self.spec.provider)
        status = "ok" if not tally.unscored else "unscored answer"
        form = self.output_form() if self.output_form is not None else None
        with write_connection(self.engine) as conn:
            store_pair_judgments(conn, self.spec.hash, rows)
            insert_ledger(conn, [self.ledger(unit, status, u, tally.cost, reply.seconds)])
            if form is not None and form != self._form_stored:
                conn.execute(sa.update(JudgeConfigRow).where(
                    JudgeConfigRow.hash == self.spec.hash).values(output_form=form))
                self._form_stored = form
        return tally

    def failure_rows(self, unit: PairUnit, reason: str) -> list[dict[str, Any]]:
        pair = self.plan.pairs[unit.pair_id]
        return [{"pair_id": unit.pair_id, "pair_hash": pair.hash, "dimension": key,
                 "order": unit.order, "sample": unit.sample, "verdict": None, "winner": None,
                 "outcome": "request_failed", "unscored_reason": f"request: {reason}",
                 "raw_reply": "", "reasoning": "", "input_tokens": 0, "output_tokens": 0,
                 "batch_id": self.batch_id} for key in unit.store]

    def gave_up(self, unit: PairUnit, err: ProviderError) -> Tally:
        with write_connection(self.engine) as conn:
            store_pair_judgments(conn, self.spec.hash, self.failure_rows(
                unit, f"{err.message} (gave up after retries; asked again on the next run)"))
        return Tally(failed=len(unit.store), reasons=Counter({"request": len(unit.store)}))


def pair_views(engine: Engine, ids: Sequence[int]) -> dict[int, PairView]:
    """The pairs with these ids as a plan holds them (for collecting batches)."""
    a, b = aliased(Item), aliased(Item)
    with read_session(engine) as s:
        rows = s.exec(select(Pair.id, a.task, a.context, a.id, b.id, a.response, b.response,
                             a.content_hash, b.content_hash)
                      .join(a, a.id == Pair.item_a).join(b, b.id == Pair.item_b)
                      .where(Pair.id.in_(list(ids)))).all()
    return {pid: PairView(pid, task, ctx or {}, ia, ib, ra, rb, pair_hash(ha, hb))
            for pid, task, ctx, ia, ib, ra, rb, ha, hb in rows}

