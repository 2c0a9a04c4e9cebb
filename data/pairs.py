"""Pairs of replies to the same scenario, for side-by-side comparison (``h2h pairs make``).

A pair compares two replies to one scenario: from two different models (``compare="models"``;
when the items carry conditions, only replies of the same condition are paired, so the model
is the only difference) or from one model's SAP and baseline replies (``compare="conditions"``).

The design is balanced, greedily and seeded:

* **comparable counts for every model pair**: each scenario (in a seeded random order) takes
  its ``per_scenario`` pairs from the model pairs used least so far (ties broken at random),
  so over the study the counts of any two model pairs differ by about one when every scenario
  has every model;
* **each model equally often on the left and on the right**: each new pair puts first
  (``item_a``, shown on the left unless the rater's side is swapped) the model that has been
  first less often so far, and a last pass turns pairs round along paths until every model
  is first and second as often, give or take one.

Running it again only adds: existing pairs count towards the balance and a scenario gets at
most ``per_scenario`` pairs in all. Attention checks and gold items are never paired.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from .engine import write_session
from .errors import H2HError
from .migrate import ensure_current
from .models import AttentionCheck, GoldScore, Item, Pair, utcnow
from .study import current_rubric_in

__all__ = ["Compare", "COMPARE", "PairPlan", "MakeResult", "design_pairs", "make_pairs",
           "find_pair", "pair_lookup", "add_pair_checks", "PAIR_INSTRUCTION", "pair_hash"]

Compare = Literal["models", "conditions"]
COMPARE: tuple[str, ...] = ("models", "conditions")
PAIR_INSTRUCTION = ("[Note for raters: to show that you read both replies, choose this reply "
                    "as much better on every dimension.]")


@dataclass(frozen=True)
class Candidate:
    """An item that may be paired: its id, scenario, model and condition."""

    id: str
    scenario: str
    model: str
    condition: str | None


@dataclass(frozen=True)
class PairPlan:
    """New pairs (item_a, item_b, scenario) in the order they were chosen."""

    pairs: list[tuple[str, str, str]]
    scenarios: int
    skipped: int  # scenarios with fewer than two replies to pair


def _side(c: Candidate, compare: Compare) -> str:
    """What a pair compares: the model, or (conditions) the condition."""
    return c.model if compare == "models" else (c.condition or "")


def _candidate_pairs(items: Sequence[Candidate], compare: Compare
                     ) -> list[tuple[Candidate, Candidate]]:
    out = []
    for x, y in itertools.combinations(sorted(items, key=lambda c: c.id), 2):
        if compare == "models":
            if x.model == y.model or x.condition != y.condition:
                continue
        elif x.model != y.model or (x.condition or "") == (y.condition or ""):
            continue
        out.append((x, y))
    return out


def design_pairs(items: Sequence[Candidate], *, compare: Compare = "models",
                 per_scenario: int | None = None, seed: int = 0,
                 existing: Sequence[tuple[Candidate, Candidate]] = ()) -> PairPlan:
    """The pairs to add (pure: no database). ``existing`` pairs count towards the balance
    and towards each scenario's ``per_scenario`` (None: every candidate pair)."""
    if compare not in COMPARE:
        raise H2HError(f"--compare: '{compare}' is not one of {', '.join(COMPARE)}")
    if per_scenario is not None and per_scenario < 1:
        raise H2HError(f"--per-scenario must be at least 1, got {per_scenario}")
    rng = random.Random(seed)
    by_scen: dict[str, list[Candidate]] = defaultdict(list)
    for c in items:
        by_scen[c.scenario].append(c)
    uses: Counter[tuple[str, str]] = Counter()   # unordered (side, side) -> pairs
    first: Counter[str] = Counter()              # side -> times it was item_a
    second: Counter[str] = Counter()
    have: dict[str, set[frozenset[str]]] = defaultdict(set)
    for x, y in existing:
        sx, sy = _side(x, compare), _side(y, compare)
        uses[tuple(sorted((sx, sy)))] += 1
        first[sx] += 1
        second[sy] += 1
        have[x.scenario].add(frozenset((x.id, y.id)))
    scenarios = sorted(by_scen)
    rng.shuffle(scenarios)
    out: list[tuple[str, str, str]] = []
    skipped = 0
    for scen in scenarios:
        cands = [(x, y) for x, y in _candidate_pairs(by_scen[scen], compare)
                 if frozenset((x.id, y.id)) not in have[scen]]
        if len(by_scen[scen]) < 2:
            skipped += 1
            continue
        room = len(cands) if per_scenario is None else per_scenario - len(have[scen])
        rng.shuffle(cands)
        for _ in range(max(room, 0)):
            if not cands:
                break
            # the least-used model pair; among equals the first of the shuffled candidates
            cands.sort(key=lambda p: uses[tuple(sorted((_side(p[0], compare),
                                                        _side(p[1], compare))))])
            x, y = cands.pop(0)
            sx, sy = _side(x, compare), _side(y, compare)
            # the side that has been first less often (relative to second) goes first
            bx, by = first[sx] - second[sx], first[sy] - second[sy]
            if by < bx or (by == bx and rng.random() < 0.5):
                x, y, sx, sy = y, x, sy, sx
            uses[tuple(sorted((sx, sy)))] += 1
            first[sx] += 1
            second[sy] += 1
            have[scen].add(frozenset((x.id, y.id)))
            out.append((x.id, y.id, scen))
            cands = [p for p in cands if frozenset((p[0].id, p[1].id)) not in have[scen]]
    sides = {c.id: _side(c, compare) for c in items}
    out = _even_sides(out, sides, first, second)
    return PairPlan(out, len(by_scen), skipped)


def _even_sides(pairs: list[tuple[str, str, str]], sides: dict[str, str], first: Counter,
                second: Counter) -> list[tuple[str, str, str]]:
    """Turn new pairs round until every side is first and second as often, give or take
    one. A side first twice more than second reaches, along "first before second" edges, one
    that is second more often (their sums cancel); turning the pairs of that path moves two
    from one to the other and lowers the sum of squares, so this ends."""
    out = list(pairs)
    imb = Counter({k: first[k] - second[k] for k in set(first) | set(second)})
    for _round in range(10 * len(out) + 10):
        u = next((k for k in sorted(imb) if abs(imb[k]) >= 2), None)
        if u is None:
            break
        down = imb[u] > 0  # follow u-first edges to a side with a deficit, or the reverse
        edges: dict[str, list[int]] = {}
        for k, (a, b, _s) in enumerate(out):
            x, y = (sides[a], sides[b]) if down else (sides[b], sides[a])
            edges.setdefault(x, []).append(k)
        prev: dict[str, tuple[str, int] | None] = {u: None}
        queue, goal = [u], None
        while queue and goal is None:
            x = queue.pop(0)
            for k in edges.get(x, []):
                a, b, _s = out[k]
                y = sides[b] if down else sides[a]
                if y in prev:
                    continue
                prev[y] = (x, k)
                if (imb[y] <= -1) if down else (imb[y] >= 1):
                    goal = y
                    break
                queue.append(y)
        if goal is None:
            break  # only pairs made before can carry the balance: leave it
        y = goal
        while prev[y] is not None:
            x, k = prev[y]
            a, b, scen = out[k]
            out[k] = (b, a, scen)
            y = x
        step = 2 if down else -2
        imb[u] -= step
        imb[goal] += step
    return out


@dataclass(frozen=True)
class MakeResult:
    added: int
    existing: int
    scenarios: int
    skipped: int
    counts: dict[tuple[str, str], int]
    first: dict[str, int]
    second: dict[str, int]

    def __str__(self) -> str:
        lo = min(self.counts.values(), default=0)
        hi = max(self.counts.values(), default=0)
        return (f"{self.added} pairs added ({self.existing} already there) over "
                f"{self.scenarios} scenarios; {len(self.counts)} model pairs compared "
                f"{lo}–{hi} times each")


def _excluded(s: Session) -> set[str]:
    """Attention checks and gold items: never paired as real replies."""
    return set(s.exec(select(AttentionCheck.item_id)).all()) | \
        set(s.exec(select(GoldScore.item_id)).all())


def make_pairs(engine: Engine, *, compare: Compare = "models", per_scenario: int | None = None,
               models: Sequence[str] = (), seed: int = 0) -> MakeResult:
    """Design and store the pairs (see the module docstring); ``models`` restricts them to
    these models."""
    ensure_current(engine)
    with write_session(engine) as s:
        current_rubric_in(s)  # a clear message when there is no study
        skip = _excluded(s)
        rows = s.exec(select(Item.id, Item.scenario, Item.model, Item.condition)
                      .order_by(Item.position, Item.id)).all()
        known = {r[2] for r in rows if r[0] not in skip}  # a check's copy is no model's reply
        unknown = [m for m in models if m not in known]
        if unknown:
            raise H2HError(f"--models: no replies from {', '.join(unknown)} (models in this "
                           f"study: {', '.join(sorted(known)) or 'none'})")
        cands = {r[0]: Candidate(*r) for r in rows
                 if r[0] not in skip and (not models or r[2] in models)}
        if not cands:
            raise H2HError("no replies to pair; import items first (`h2h import items`)")
        old = s.exec(select(Pair.item_a, Pair.item_b).where(Pair.attention.is_(None))).all()
        existing = [(cands[a], cands[b]) for a, b in old if a in cands and b in cands]
        plan = design_pairs(list(cands.values()), compare=compare, per_scenario=per_scenario,
                            seed=seed, existing=existing)
        if not plan.pairs and not existing:
            what = "two models" if compare == "models" else "a SAP and a baseline condition"
            raise H2HError(f"no scenario has replies from {what} to pair (--compare "
                           f"{compare}); check --models and the items' model and condition")
        pos = (s.exec(select(func.max(Pair.position))).one() or 0) + 1
        now = utcnow()
        for k, (a, b, scen) in enumerate(plan.pairs):
            s.add(Pair(item_a=a, item_b=b, scenario=scen, source="make", position=pos + k,
                       created_at=now))
        counts: Counter[tuple[str, str]] = Counter()
        first: Counter[str] = Counter()
        second: Counter[str] = Counter()
        for a, b in [(x.id, y.id) for x, y in existing] + [(a, b) for a, b, _ in plan.pairs]:
            sa_, sb_ = _side(cands[a], compare), _side(cands[b], compare)
            counts[tuple(sorted((sa_, sb_)))] += 1
            first[sa_] += 1
            second[sb_] += 1
    return MakeResult(len(plan.pairs), len(existing), plan.scenarios, plan.skipped,
                      dict(counts), dict(first), dict(second))


def pair_lookup(s: Session) -> dict[frozenset[str], tuple[int, str, str]]:
    """Every stored pair by its two items (either order): (id, item_a, item_b)."""
    return {frozenset((a, b)): (pid, a, b)
            for pid, a, b in s.exec(select(Pair.id, Pair.item_a, Pair.item_b)).all()}


def find_pair(s: Session, x: str, y: str) -> tuple[int, bool] | None:
    """The stored pair of items ``x`` and ``y`` and whether it is stored the other way round
    (``y`` as item_a); None when there is none."""
    row = s.exec(select(Pair.id, Pair.item_a).where(
        ((Pair.item_a == x) & (Pair.item_b == y)) | ((Pair.item_a == y) & (Pair.item_b == x)))
    ).first()
    if row is None:
        return None
    return row[0], row[1] != x


def pair_hash(hash_a: str, hash_b: str) -> str:
    """The content hash of a pair as judged: the two items' content hashes in order."""
    return hashlib.sha256(f"{hash_a}|{hash_b}".encode()).hexdigest()


def add_pair_checks(engine: Engine, n: int, seed: int = 0) -> list[int]:
    """Make ``n`` instructed attention-check pairs from real pairs: a copy of the pair's
    second reply (``pattn-…``, an attention-check item judges and the single-item queue
    skip) ends with :data:`PAIR_INSTRUCTION`, and the check expects it to be chosen as much
    better on every dimension. Returns the new pairs' ids."""
    if n < 1:
        raise H2HError("--n must be at least 1")
    with write_session(engine) as s:
        rubric = current_rubric_in(s)
        real = s.exec(select(Pair).where(Pair.attention.is_(None)).order_by(Pair.id)).all()
        if not real:
            raise H2HError("no pairs to build attention checks from; run `h2h pairs make` "
                           "first")
        rng = random.Random(seed)
        pos = (s.exec(select(func.max(Pair.position))).one() or 0) + 1
        made = []
        for src in rng.sample(real, min(n, len(real))):
            other = s.get(Item, src.item_b)
            new_id = "pattn-" + hashlib.sha256(f"{src.id}:{other.id}".encode()).hexdigest()[:10]
            if s.get(Item, new_id) is not None:
                continue
            text = other.response.rstrip() + "\n\n" + PAIR_INSTRUCTION
            s.add(Item(id=new_id, task=other.task, scenario=other.scenario,
                       context=dict(other.context), response=text, model="attention-check",
                       condition=other.condition, meta={"attention_check_from": other.id},
                       content_hash=hashlib.sha256(text.encode()).hexdigest(),
                       position=other.position))
            s.flush()
            dims = [d.key for d in rubric.dimensions_for(other.task)]
            # the copy is the reply to choose (shown under the attention results as such)
            s.add(AttentionCheck(item_id=new_id, kind="pair",
                                 expected={d: "chosen" for d in dims}, tolerance=0,
                                 note=f"pair check from pair {src.id}"))
            expected = {d: "b" for d in dims}
            pair = Pair(item_a=src.item_a, item_b=new_id, scenario=src.scenario,
                        source="attention", attention=expected, position=pos,
                        created_at=utcnow())
            pos += 1
            s.add(pair)
            s.flush()
            made.append(pair.id)
    return made

