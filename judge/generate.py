"""Generating companion responses: the H2HTalk protocol's first step.

For each scenario, each model and each condition, one call: the task family's generation
template as the system prompt - with the Secure Attachment Persona (``data/prompts/sap.txt``)
first under the ``sap`` condition and without it under ``baseline`` - and the scenario's turns
as the chat messages. Each reply becomes an item ``<scenario>-<model slug>-<condition>`` with
``model`` and ``condition`` set, stored the moment it arrives.

Resumable like judging: a (generator, scenario, condition) that already has a response is never
asked again; a request that failed is asked again on the next run. A generator is named by the
hash of its provider, model, templates, SAP text, temperature and max tokens (and its protocol).

Under ``--protocol h2htalk`` the templates ask for the H2HTalk benchmark's reply format (one or
two short sentences, expressions and actions in parentheses; ``data/prompts/h2htalk``), the
item ids end in ``-h2htalk`` (so both protocols can be generated side by side), and each item's
``metadata.generated`` records the protocol and whether the reply kept to its length and
parentheses (:func:`h2htalk_check`; a check, not a filter).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import read_session, write_session
from data.errors import H2HError
from data.items import ItemRecord, item_hash
from data.migrate import ensure_current
from data.models import Generation, GenerationConfigRow, Item, utcnow

from .calls import RunOptions, RunStats, Tally, run_calls
from .config import slug
from .estimate import DryRun, EstimatedCall, estimate_calls
from .prices import PriceTable, estimate_tokens
from .progress import RunProgress
from .prompts import PROTOCOLS, GenerationTemplate, item_values, render, text_hash
from .providers.base import PROVIDERS, Message, Provider, ProviderError, Reply, Request
from .run import run_async
from .scenarios import Scenario
from .store import insert_ledger, ledger_row

__all__ = ["CONDITIONS", "GenSpec", "GenUnit", "GenPlan", "GenSink", "plan_generation",
           "build_generation_request", "run_generation", "item_id_for", "h2htalk_check",
           "dry_run_generation"]

CONDITIONS: tuple[str, ...] = ("sap", "baseline")
_START = "(The conversation starts.)"
_YOUR_TURN = "(The user has not written anything new yet. Write your next message.)"


@dataclass(frozen=True)
class GenSpec:
    provider: str
    model: str
    templates: dict[str, GenerationTemplate]
    sap: str
    temperature: float | None = None
    max_tokens: int = 1024
    name: str | None = None
    model_digest: str | None = None  # --provider local: the GGUF file's SHA-256 (in the hash)
    model_file: str | None = None
    protocol: str = "default"

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise H2HError(f"--provider: '{self.provider}' is not one of {', '.join(PROVIDERS)}")
        if self.protocol not in PROTOCOLS:
            raise H2HError(f"--protocol: '{self.protocol}' is not one of "
                           f"{', '.join(PROTOCOLS)}")
        if self.max_tokens < 1:
            raise H2HError(f"--max-tokens must be at least 1, got {self.max_tokens}")

    @property
    def display_name(self) -> str:
        """What the items' ``model`` field says: the given name, else the model."""
        return self.name or self.model

    @property
    def hash(self) -> str:
        fields = {"provider": self.provider, "model": self.model,
                  "templates": {k: t.system for k, t in sorted(self.templates.items())},
                  "sap": text_hash(self.sap), "temperature": self.temperature,
                  "max_tokens": self.max_tokens}
        if self.model_digest:
            fields["model_digest"] = self.model_digest
        if self.protocol != "default":  # default generators keep the hash they always had
            fields["protocol"] = self.protocol
        return text_hash(fields)

    def row(self) -> GenerationConfigRow:
        return GenerationConfigRow(
            hash=self.hash, name=f"{slug(self.display_name)}-{self.hash[:8]}",
            provider=self.provider, model=self.model,
            templates_hash=text_hash({k: t.system for k, t in sorted(self.templates.items())}),
            sap_hash=text_hash(self.sap), temperature=self.temperature,
            max_tokens=self.max_tokens)

    def template_for(self, task: str) -> GenerationTemplate:
        return self.templates.get(task) or self.templates["dialogue"]


def item_id_for(scenario: str, spec: GenSpec, condition: str) -> str:
    tail = "" if spec.protocol == "default" else f"-{spec.protocol}"
    return f"{scenario}-{slug(spec.display_name)}-{condition}{tail}"


_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ACTION = re.compile(r"[(（][^()（）]+[)）]")
H2HTALK_LIMITS = {"zh": 30, "en": 25}  # Chinese characters; words in other languages


def h2htalk_check(text: str) -> dict[str, Any]:
    """Whether a reply keeps to the H2HTalk format: at most 30 Chinese characters (a reply
    that is mostly Chinese) or about 25 words (otherwise), and at least one expression or
    action in parentheses.

    >>> h2htalk_check("（笑）今天穿得真好看！")["within_length"]
    True
    >>> h2htalk_check("Sure.")["has_action"]
    False
    """
    han, words = len(_HAN.findall(text)), len(_WORD.findall(text))
    lang = "zh" if han and han >= words else "en"
    size = han if lang == "zh" else words
    return {"lang": lang, "length": size, "unit": "Chinese characters" if lang == "zh"
            else "words", "limit": H2HTALK_LIMITS[lang],
            "within_length": size <= H2HTALK_LIMITS[lang],
            "has_action": bool(_ACTION.search(text))}


@dataclass(frozen=True)
class GenUnit:
    spec: GenSpec
    scenario: Scenario
    condition: str

    @property
    def item_id(self) -> str:
        return item_id_for(self.scenario.id, self.spec, self.condition)


@dataclass
class GenPlan:
    units: list[GenUnit]
    total: int = 0
    done: int = 0
    redo: int = 0
    by_model: Counter = field(default_factory=Counter)


def plan_generation(engine: Engine, specs: Sequence[GenSpec], scenarios: Sequence[Scenario],
                    conditions: Sequence[str] = CONDITIONS) -> GenPlan:
    """What is left to generate. Refuses (before any call) when a target item id already
    belongs to something else, e.g. an imported item or another generator."""
    ensure_current(engine)
    for c in conditions:
        if c not in CONDITIONS:
            raise H2HError(f"--conditions: '{c}' is not one of {', '.join(CONDITIONS)}")
    names = Counter(slug(s.display_name) for s in specs)
    dup = [n for n, k in names.items() if k > 1]
    if dup:
        raise H2HError(f"--model: '{dup[0]}' is given twice; each model needs its own name")
    plan = GenPlan(units=[])
    with read_session(engine) as s:
        item_ids = set(s.exec(select(Item.id)).all())
        gens = {(g.config_hash, g.scenario, g.condition): g for g in s.exec(select(Generation))}
    for spec in specs:
        for sc in scenarios:
            for cond in conditions:
                unit = GenUnit(spec, sc, cond)
                plan.total += 1
                old = gens.get((spec.hash, sc.id, cond))
                if old is not None and old.outcome != "request_failed":
                    plan.done += 1
                    continue
                if unit.item_id in item_ids:
                    raise H2HError(
                        f"item '{unit.item_id}' already exists and was not generated by this "
                        f"generator ({spec.model}, these templates and parameters); give this "
                        "one another --name")
                if len(unit.item_id) > 200:
                    raise H2HError(f"item id '{unit.item_id[:60]}…' would be longer than 200 "
                                   "characters; use a shorter --name")
                plan.redo += old is not None
                plan.units.append(unit)
                plan.by_model[spec.display_name] += 1
    return plan


def _messages(turns: Sequence[dict[str, str]]) -> tuple[Message, ...]:
    """Turns as alternating chat messages that start and end with the user."""
    out: list[Message] = []
    for t in turns:
        role = "user" if t["role"] == "user" else "assistant"
        if out and out[-1].role == role:
            out[-1] = Message(role, out[-1].text + "\n\n" + t["text"])
        else:
            out.append(Message(role, t["text"]))
    if not out or out[0].role != "user":
        out.insert(0, Message("user", _START))
    if out[-1].role != "user":
        out.append(Message("user", _YOUR_TURN))
    return tuple(out)


# a planning guess of a reply's length (a companion's turn), capped by --max-tokens
EXPECTED_REPLY_TOKENS = 400


def dry_run_generation(plan: GenPlan, prices: PriceTable, *, show: int = 1) -> DryRun:
    """Every request rendered, and the tokens and cost estimated (each model at its own
    price); nothing is sent or written. The same estimate as judging's dry run
    (:func:`~.estimate.estimate_calls`)."""
    calls = []
    for u in plan.units:
        r = build_generation_request(u.spec, u.scenario, u.condition)
        calls.append(EstimatedCall(u.item_id, r, u.spec.model, u.spec.provider,
                                   estimate_tokens(r.system + "".join(m.text
                                                                      for m in r.messages)),
                                   min(u.spec.max_tokens, EXPECTED_REPLY_TOKENS),
                                   u.spec.max_tokens))
    return estimate_calls(calls, prices, show=show)


def build_generation_request(spec: GenSpec, scenario: Scenario, condition: str) -> Request:
    values = item_values(scenario.task, scenario.context)
    system = render(spec.template_for(scenario.task).system, values)
    if condition == "sap":
        system = spec.sap + "\n\n" + system
    return Request(model=spec.model, system=system,
                   messages=_messages(scenario.context.get("turns") or []),
                   max_tokens=spec.max_tokens, temperature=spec.temperature,
                   model_file=spec.model_file)


class GenSink:
    def __init__(self, engine: Engine, prices: PriceTable):
        self.engine = engine
        self.prices = prices

    def request_for(self, unit: GenUnit) -> tuple[Request, int]:
        req = build_generation_request(unit.spec, unit.scenario, unit.condition)
        text = req.system + "".join(m.text for m in req.messages)
        return req, estimate_tokens(text) + min(unit.spec.max_tokens, 400)

    def _ledger(self, unit: GenUnit, status: str, usage=None, cost: float | None = 0.0,
                seconds: float | None = None):
        return ledger_row(config_hash=unit.spec.hash, item_id=unit.item_id,
                          call_kind="generate", provider=unit.spec.provider,
                          model=unit.spec.model, status=status, usage=usage, cost=cost,
                          seconds=seconds)

    def _generation(self, s, unit: GenUnit, **kw: Any) -> None:
        old = s.exec(select(Generation).where(
            Generation.config_hash == unit.spec.hash, Generation.scenario == unit.scenario.id,
            Generation.condition == unit.condition)).first()
        row = old or Generation(config_hash=unit.spec.hash, scenario=unit.scenario.id,
                                condition=unit.condition, outcome="")
        for k, v in kw.items():
            setattr(row, k, v)
        row.created_at = utcnow()
        s.add(row)

    def attempt_failed(self, unit: GenUnit, err: ProviderError) -> None:
        with write_session(self.engine) as s:
            insert_ledger(s.connection(), [self._ledger(unit, err.label,
                                                        seconds=err.seconds)])

    def succeeded(self, unit: GenUnit, reply: Reply) -> Tally:
        u = reply.usage
        cost = self.prices.cost_of(unit.spec.model, u, provider=unit.spec.provider)
        text = reply.text.strip()
        tally = Tally(cost=cost)
        with write_session(self.engine) as s:
            insert_ledger(s.connection(), [self._ledger(unit, "ok" if text else "empty reply",
                                                        u, cost, reply.seconds)])
            common = {"raw_reply": reply.text, "input_tokens": u.input_tokens,
                      "output_tokens": u.output_tokens}
            if not text:
                self._generation(s, unit, outcome="invalid_reply", item_id=None,
                                 reason="empty: the model returned no text", **common)
                tally.unscored, tally.reasons = 1, Counter({"empty": 1})
                return tally
            s.add(self._item(s, unit, text, reply))
            s.flush()
            self._generation(s, unit, outcome="generated", item_id=unit.item_id, reason=None,
                             **common)
        tally.scored = 1
        return tally

    def _item(self, s, unit: GenUnit, text: str, reply: Reply) -> Item:
        meta: dict[str, Any] = {"generated": {"generator": unit.spec.hash,
                                              "provider": unit.spec.provider,
                                              "model": unit.spec.model,
                                              "protocol": unit.spec.protocol}}
        if unit.spec.protocol == "h2htalk":
            meta["generated"]["h2htalk_check"] = h2htalk_check(text)
        if reply.stop_reason in ("max_tokens", "length"):
            meta["generated"]["truncated"] = True
        rec = ItemRecord.model_validate({
            "id": unit.item_id, "task": unit.scenario.task, "scenario": unit.scenario.id,
            "context": unit.scenario.context, "response": text,
            "model": unit.spec.display_name, "condition": unit.condition, "metadata": meta})
        d = rec.stored()
        pos = (s.exec(select(func.max(Item.position))).one() or 0) + 1
        now = utcnow()
        return Item(id=d["id"], task=d["task"], scenario=d["scenario"], context=d["context"],
                    response=d["response"], model=d["model"], condition=d["condition"],
                    reference=None, meta=d["metadata"], content_hash=item_hash(d), position=pos,
                    created_at=now, updated_at=now)

    def gave_up(self, unit: GenUnit, err: ProviderError) -> Tally:
        with write_session(self.engine) as s:
            self._generation(s, unit, outcome="request_failed", item_id=None,
                             reason=f"request: {err.message}", raw_reply="")
        return Tally(failed=1, reasons=Counter({"request": 1}))


def _save_specs(engine: Engine, specs: Sequence[GenSpec]) -> None:
    with write_session(engine) as s:
        for spec in specs:
            if s.get(GenerationConfigRow, spec.hash) is None:
                s.add(spec.row())


async def _generate(engine, plan, provider, prices, options, show_progress) -> RunStats:
    try:
        await provider.preflight()
        _save_specs(engine, {u.spec.hash: u.spec for u in plan.units}.values())
        with RunProgress("generating", len(plan.units), enabled=show_progress) as progress:
            return await run_calls(provider, plan.units, GenSink(engine, prices), options,
                                   progress)
    finally:
        await provider.aclose()


def run_generation(engine: Engine, plan: GenPlan, provider: Provider, *, prices: PriceTable,
                   options: RunOptions = RunOptions(), show_progress: bool = False) -> RunStats:
    """Generate every unit of ``plan`` (nothing, and no call at all, when it is empty)."""
    if not plan.units:
        return RunStats()
    return run_async(_generate(engine, plan, provider, prices, options, show_progress))

