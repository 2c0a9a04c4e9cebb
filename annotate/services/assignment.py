"""Who rates what, in which order.

* Each item goes to ``k`` raters (overlap); items are dealt to the least-loaded raters, so
  loads differ by at most one; ties are broken by a seeded random draw.
* Each rater's order is random and **counterbalanced**: two responses to the same scenario
  never follow each other (when the rater's items allow it at all).
* An optional share of each rater's items is shown again later as a **hidden repeat** for
  test–retest; repeats are placed at least ``min_gap`` items after the first showing.
* Running it again later only adds: items that lack raters are dealt out, new raters get
  work by taking over **unstarted** assignments from the most-loaded raters, and nothing a
  rater has already done is moved or reordered.
* **Qualification**: when the study has gold items, real items go only to raters who passed
  training or were released by an admin (``include_unqualified`` deals to everyone). Gold
  items and attention checks are never dealt as real items.
* **Attention checks** are mixed into each rater's new work at ``attention_rate`` (a share
  of the real items added; default: the study setting), at random places, each check at most
  once per rater; they look like any other item in the form.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import delete, select

from data.engine import write_session
from data.errors import H2HError
from data.models import Assignment, Item, Rater, Rating, utcnow
from messages import Msg, join_msgs

__all__ = ["AssignmentPlan", "AssignResult", "assign", "counterbalanced_order", "plan"]


def counterbalanced_order(items: list[tuple[str, str]], rng: random.Random,
                          last_scenario: str | None = None) -> list[tuple[str, str]]:
    """A random order of (item, scenario) pairs with no two equal scenarios adjacent.

    With ``n`` items left, an order without adjacent repeats exists as long as no scenario
    holds more than ``n // 2`` of them besides possibly the next one placed. So at each step
    a random remaining item of another scenario than the previous one is taken, except that a
    scenario holding more than ``n // 2`` must go now. Only when one scenario holds more than
    half of all items are some neighbours unavoidable. Runs in about O(n) (counts are kept in
    buckets, the draw is by rejection).
    """
    pool = list(items)
    rng.shuffle(pool)
    count: Counter[str] = Counter(sc for _, sc in pool)
    buckets: dict[int, set[str]] = defaultdict(set)
    for sc, c in count.items():
        buckets[c].add(sc)
    top = max(count.values(), default=0)
    by_scen: dict[str, list[int]] = defaultdict(list)  # scenario -> indices into pool
    for i, (_, sc) in enumerate(pool):
        by_scen[sc].append(i)
    alive = list(range(len(pool)))  # indices not yet placed (swap-remove)
    where = {i: i for i in alive}
    out: list[tuple[str, str]] = []
    prev = last_scenario
    n = len(pool)

    def take(idx: int) -> None:
        nonlocal top
        j = where.pop(idx)
        last = alive.pop()
        if last != idx:
            alive[j] = last
            where[last] = j
        sc = pool[idx][1]
        c = count[sc]
        buckets[c].discard(sc)
        count[sc] = c - 1
        if c > 1:
            buckets[c - 1].add(sc)
        while top and not buckets[top]:
            top -= 1
        by_scen[sc].remove(idx)
        out.append(pool[idx])

    while n:
        forced = None
        if top > n // 2:
            forced = next((sc for sc in sorted(buckets[top]) if sc != prev), None)
        if forced is not None:
            idx = by_scen[forced][-1]
        elif count.get(prev, 0) >= n:
            idx = alive[-1]  # only the previous scenario is left: unavoidable
        else:
            while True:  # uniform over the remaining items of other scenarios
                idx = alive[rng.randrange(len(alive))]
                if pool[idx][1] != prev:
                    break
        take(idx)
        prev = pool[idx][1]
        n -= 1
    return out


@dataclass(frozen=True)
class AssignmentPlan:
    """New queue entries per rater: (item, scenario, kind) in order, appended to the queue."""

    entries: dict[int, list[tuple[str, str, str]]]
    moved: dict[tuple[int, str], int]  # (old rater, item) -> new rater, for unstarted work


@dataclass(frozen=True)
class AssignResult:
    raters: int
    items: int
    added: int
    repeats: int
    moved: int
    loads: dict[str, int]
    attention: int = 0
    skipped: tuple[str, ...] = ()  # active raters left out because they are not qualified
    attention_short: int = 0  # checks wanted but not available (too few attention items)
    pairs: bool = False  # dealt side-by-side pairs (h2h assign --pairs), not single items

    def message(self) -> Msg:
        """What the assignment did, as the CLI prints it (and the app shows it, translated)."""
        lo, hi = (min(self.loads.values()), max(self.loads.values())) if self.loads else (0, 0)
        parts = [Msg("{added} assignments added ({repeats} hidden repeats, {attention} "
                     "attention checks), {moved} unstarted moved to new raters; {raters} "
                     "raters, load {lo}–{hi} items each (hidden repeats and checks on top)",
                     added=self.added, repeats=self.repeats,
                     attention=self.attention, moved=self.moved, raters=self.raters, lo=lo,
                     hi=hi)]
        if self.skipped:
            parts.append(Msg("not qualified yet, so no real items: {names} "
                             "(--include-unqualified deals to them anyway)",
                             names=", ".join(self.skipped)))
        if self.attention_short and self.pairs:
            parts.append(Msg("{n} attention-check pairs could not be placed: add more with "
                             "the command h2h pairs attention", n=self.attention_short))
        elif self.attention_short:
            parts.append(Msg("{n} attention checks could not be placed: add more with the "
                             "command h2h quality attention add", n=self.attention_short))
        return join_msgs("; ", parts)

    def __str__(self) -> str:
        return str(self.message())


def plan(items: dict[str, str], raters: list[int], existing: dict[int, list[tuple[str, bool]]],
         *, k: int, seed: int, repeat_share: float = 0.0, min_gap: int = 5
         ) -> AssignmentPlan:
    """Pure planning: ``items`` id -> scenario; ``existing[rater]`` = [(item, started)] in
    queue order (primary assignments only). Returns what to add and what to move."""
    if k < 1:
        raise H2HError(Msg("--k must be at least 1; got {k}", k=k))
    if k > len(raters):
        raise H2HError(Msg("--k {k} needs at least {k} active raters to deal to; {n} can be "
                           "dealt to: active raters who have qualified (all active ones with "
                           "--include-unqualified; simulated demo raters never). Add raters "
                           "with h2h raters add", k=k, n=len(raters)))
    if not 0 <= repeat_share <= 0.5:
        raise H2HError(Msg("--repeats must be between 0 and 0.5; got {share}",
                           share=repeat_share))
    rng = random.Random(seed)
    have: dict[str, set[int]] = defaultdict(set)
    load: Counter[int] = Counter({r: 0 for r in raters})
    for r, queue in existing.items():
        for item, _ in queue:
            have[item].add(r)
            if r in load:
                load[r] += 1
    new: dict[int, list[str]] = defaultdict(list)
    # 1. deal items lacking raters to the least-loaded raters who do not have them yet
    order = sorted(items)
    rng.shuffle(order)
    for it in order:
        need = k - len(have[it])
        if need <= 0:
            continue
        cands = [r for r in raters if r not in have[it]]
        rng.shuffle(cands)
        cands.sort(key=lambda r: load[r])
        for r in cands[:need]:
            have[it].add(r)
            load[r] += 1
            new[r].append(it)
    # 2. balance: the least-loaded rater (e.g. one added mid-study) takes over unstarted
    #    assignments from the most-loaded, one at a time, until loads differ by at most one
    movable = {r: [it for it, started in existing.get(r, []) if not started] for r in raters}
    for r in raters:
        rng.shuffle(movable[r])
    moved: dict[tuple[int, str], int] = {}
    while True:
        recv = min(raters, key=lambda r: (load[r], r))
        donors = sorted((r for r in raters if load[r] - load[recv] > 1),
                        key=lambda r: (-load[r], r))
        took = False
        for d in donors:
            for idx, it in enumerate(movable[d]):
                if recv not in have[it]:
                    movable[d].pop(idx)
                    have[it].discard(d)
                    have[it].add(recv)
                    load[d] -= 1
                    load[recv] += 1
                    moved[(d, it)] = recv
                    new[recv].append(it)
                    took = True
                    break
            if took:
                break
        if not took:
            break
    # 3. order each rater's new items after their existing queue; add hidden repeats
    entries: dict[int, list[tuple[str, str, str]]] = {}
    for r in raters:
        if not new[r]:
            continue
        queue = existing.get(r, [])
        last = items.get(queue[-1][0]) if queue else None
        ordered = counterbalanced_order([(it, items[it]) for it in new[r]], rng, last)
        seq = [(it, sc, "primary") for it, sc in ordered]
        n_rep = int(round(repeat_share * len(seq)))
        if n_rep:
            seq = _insert_repeats(seq, n_rep, rng, min_gap)
        entries[r] = seq
    return AssignmentPlan(entries, moved)


def _insert_repeats(seq: list[tuple[str, str, str]], n_rep: int, rng: random.Random,
                    min_gap: int) -> list[tuple[str, str, str]]:
    """Insert ``n_rep`` repeats, each at least ``min_gap`` places after its first showing and
    never next to an item of the same scenario."""
    out = list(seq)
    candidates = list(range(len(seq)))
    rng.shuffle(candidates)
    placed = 0
    for src in candidates:
        if placed == n_rep:
            break
        item, scen, _ = seq[src]
        first = next(i for i, e in enumerate(out) if e[0] == item and e[2] == "primary")
        slots = [p for p in range(first + min_gap + 1, len(out) + 1)
                 if (p == 0 or out[p - 1][1] != scen) and (p == len(out) or out[p][1] != scen)]
        if not slots:
            continue
        out.insert(rng.choice(slots), (item, scen, "repeat"))
        placed += 1
    return out


def _insert_attention(seq: list[tuple[str, str, str]], checks: list[tuple[str, str]],
                      rng: random.Random) -> list[tuple[str, str, str]]:
    """Put each check at a random place, never next to an item of the same scenario."""
    out = list(seq)
    for item, scen in checks:
        slots = [p for p in range(len(out) + 1)
                 if (p == 0 or out[p - 1][1] != scen) and (p == len(out) or out[p][1] != scen)]
        out.insert(rng.choice(slots or [len(out)]), (item, scen, "attention"))
    return out


def assign(engine: Engine, *, k: int, seed: int = 0, repeat_share: float = 0.0,
           min_gap: int = 5, attention_rate: float | None = None,
           include_unqualified: bool = False,
           only: Collection[str] | None = None) -> AssignResult:
    """Plan and store assignments for every active human rater (not admins or simulated);
    ``only`` deals just these items (an active-labelling draw)."""
    from data.quality import (
        attention_checks,
        attention_item_ids,
        get_settings,
        gold_item_ids,
        qualified_rater_ids,
    )

    rate = get_settings(engine).attention_rate if attention_rate is None else attention_rate
    if not 0 <= rate <= 0.5:
        raise H2HError(Msg("--attention must be between 0 and 0.5; got {rate}", rate=rate))
    qualified = qualified_rater_ids(engine)
    not_real = set(gold_item_ids(engine)) | attention_item_ids(engine)
    # a side-by-side pair's check item is shown only inside its pair (h2h assign --pairs)
    checks = sorted(i for i, c in attention_checks(engine).items() if c.kind != "pair")
    with write_session(engine) as s:
        active = s.exec(select(Rater).where(Rater.active == True, Rater.role == "rater",  # noqa: E712
                                            Rater.simulated == False)  # noqa: E712
                        .order_by(Rater.id)).all()
        if not active:
            raise H2HError(Msg("no active raters to assign to; add some with `h2h raters add`"))
        raters = [r for r in active if include_unqualified or r.id in qualified]
        skipped = tuple(r.name for r in active if r not in raters)
        if not raters:
            raise H2HError(Msg("no rater has qualified yet: raters pass training on the gold "
                               "items first (or an admin releases them); pass "
                               "--include-unqualified to deal to them anyway"))
        all_items = dict(s.exec(select(Item.id, Item.scenario)).all())
        items = {i: sc for i, sc in all_items.items()
                 if i not in not_real and (only is None or i in only)}
        if not items:
            raise H2HError(Msg("no items to assign; import some with `h2h import items`"))
        rows = s.exec(select(Assignment.rater_id, Assignment.item_id, Assignment.kind,
                             Assignment.completed_at)
                      .order_by(Assignment.rater_id, Assignment.position)).all()
        rated = set(s.exec(select(Rating.rater_id, Rating.item_id).distinct()).all())
        existing: dict[int, list[tuple[str, bool]]] = defaultdict(list)
        had_check: dict[int, set[str]] = defaultdict(set)
        for rid, item_id, kind, done in rows:
            if kind == "primary" and item_id in items:
                existing[rid].append((item_id, done is not None or (rid, item_id) in rated))
            elif kind == "attention":
                had_check[rid].add(item_id)
        p = plan(items, [r.id for r in raters], existing, k=k, seed=seed,
                 repeat_share=repeat_share, min_gap=min_gap)
        rng = random.Random(f"attention:{seed}")
        n_att = short = 0
        for rid, seq in p.entries.items():
            want = int(round(rate * sum(e[2] == "primary" for e in seq)))
            free = [c for c in checks if c not in had_check[rid]]
            rng.shuffle(free)
            use = free[:want]
            short += want - len(use)
            n_att += len(use)
            p.entries[rid] = _insert_attention(seq, [(c, all_items[c]) for c in use], rng)
        for (old, item) in p.moved:
            s.exec(delete(Assignment).where(Assignment.rater_id == old,
                                            Assignment.item_id == item))
        s.flush()
        added = repeats = 0
        tops = dict(s.exec(select(Assignment.rater_id, func.max(Assignment.position))
                           .group_by(Assignment.rater_id)).all())
        now = utcnow()
        new_rows = []
        for rid, seq in p.entries.items():
            start = (tops.get(rid) or 0) + 1
            for off, (item, _scen, kind) in enumerate(seq):
                new_rows.append({"rater_id": rid, "item_id": item, "position": start + off,
                                 "kind": kind, "created_at": now})
                repeats += kind == "repeat"
        added = len(new_rows)
        for i in range(0, len(new_rows), 5000):  # executemany in chunks
            s.execute(sa.insert(Assignment), new_rows[i:i + 5000])
        s.flush()
        loads = dict(s.exec(select(Rater.name, func.count(Assignment.id))
                            .join(Assignment, Assignment.rater_id == Rater.id)
                            .where(Assignment.kind == "primary").group_by(Rater.name)).all())
    return AssignResult(len(raters), len(items), added, repeats, len(p.moved),
                        {r.name: loads.get(r.name, 0) for r in raters}, n_att, skipped, short)
