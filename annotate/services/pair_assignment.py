"""Who compares which pairs, in which order, on which side (``h2h assign --pairs``).

Pairs are dealt like single items (:func:`annotate.services.assignment.plan`): ``k`` raters
per pair, loads within one of each other, no two pairs of one scenario in a row, hidden
repeats ``min_gap`` or more places after the first showing, attention-check pairs mixed in at
``attention_rate``; running it again only adds. On top of that, the **sides are blinded and
counterbalanced**: whether a rater sees the pair's first reply on the left is drawn so that
every rater has as many pairs one way as the other, and every pair is shown one way to as
many of its raters as the other (both give or take one: an Euler split of the raters × pairs
graph, seeded). A hidden repeat is shown with the sides swapped.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Hashable, Sequence

import sqlalchemy as sa
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import delete, select

from data.engine import write_session
from data.errors import H2HError
from data.models import Pair, PairAssignment, Preference, Rater, utcnow
from messages import Msg

from .assignment import AssignResult, _insert_attention, plan

__all__ = ["balanced_sides", "assign_pairs"]


def balanced_sides(edges: Sequence[tuple[Hashable, Hashable]], rng: random.Random
                   ) -> list[bool]:
    """One boolean per (rater, pair) edge such that every rater and every pair has as many
    True as False, give or take one.

    An Euler split: odd-degree vertices are joined to one extra vertex, then every closed
    walk (Hierholzer's algorithm) is coloured alternately. A walk leaves a vertex by the
    edge after the one it came in by, so every visit adds one of each colour; the raters ×
    pairs graph is bipartite, so a walk that never meets the extra vertex has even length
    and its first and last edges differ too. Only the extra vertex can end up unbalanced.
    """
    extra = object()
    ends: list[tuple[object, object]] = [(("r", r), ("p", p)) for r, p in edges]
    degree: dict[object, int] = defaultdict(int)
    for u, v in ends:
        degree[u] += 1
        degree[v] += 1
    for node in sorted((n for n, d in degree.items() if d % 2), key=repr):
        ends.append((node, extra))
    adj: dict[object, list[int]] = defaultdict(list)
    for e, (u, v) in enumerate(ends):
        adj[u].append(e)
        adj[v].append(e)
    for lst in adj.values():
        rng.shuffle(lst)
    used = [False] * len(ends)
    colour: list[bool | None] = [None] * len(ends)
    starts = ([extra] if extra in adj else []) + sorted((n for n in adj if n is not extra),
                                                        key=repr)
    for start in starts:
        if all(used[e] for e in adj[start]):
            continue
        # Hierholzer: the circuit as a list of edges, in the order they are walked
        stack: list[tuple[object, int | None]] = [(start, None)]
        circuit: list[int] = []
        while stack:
            node, via = stack[-1]
            while adj[node] and used[adj[node][-1]]:
                adj[node].pop()
            if adj[node]:
                e = adj[node].pop()
                used[e] = True
                u, v = ends[e]
                stack.append((v if u == node else u, e))
            else:
                stack.pop()
                if via is not None:
                    circuit.append(via)
        first = rng.random() < 0.5
        for k, e in enumerate(circuit):
            colour[e] = first if k % 2 == 0 else not first
    return [bool(c) for c in colour[:len(edges)]]


def assign_pairs(engine: Engine, *, k: int, seed: int = 0, repeat_share: float = 0.0,
                 min_gap: int = 5, attention_rate: float | None = None,
                 include_unqualified: bool = False,
                 only: Sequence[str] | None = None) -> AssignResult:
    """Deal the study's pairs to every active human rater (see the module docstring), or
    only to the raters named in ``only``."""
    from data.quality import get_settings, qualified_rater_ids

    rate = get_settings(engine).attention_rate if attention_rate is None else attention_rate
    if not 0 <= rate <= 0.5:
        raise H2HError(Msg("--attention must be between 0 and 0.5; got {rate}", rate=rate))
    qualified = qualified_rater_ids(engine)
    with write_session(engine) as s:
        active = s.exec(select(Rater).where(Rater.active == True, Rater.role == "rater",  # noqa: E712
                                            Rater.simulated == False)  # noqa: E712
                        .order_by(Rater.id)).all()
        if not active:
            raise H2HError(Msg("no active raters to assign to; add some with `h2h raters add`"))
        if only is not None:
            active = [r for r in active if r.name in set(only)]
        raters = [r for r in active if include_unqualified or r.id in qualified]
        skipped = tuple(r.name for r in active if r not in raters)
        if not raters:
            raise H2HError(Msg("no rater has qualified yet: raters pass training on the gold "
                               "items first (or an admin releases them); pass "
                               "--include-unqualified to deal to them anyway"))
        rows = s.exec(select(Pair.id, Pair.scenario, Pair.attention)).all()
        pairs = {str(pid): scen for pid, scen, att in rows if att is None}
        checks = sorted(((str(pid), scen) for pid, scen, att in rows if att is not None),
                        key=lambda x: int(x[0]))
        if not pairs:
            raise H2HError(Msg("no pairs to assign; make them with `h2h pairs make`"))
        done = set(s.exec(select(Preference.rater_id, Preference.pair_id).distinct()).all())
        existing: dict[int, list[tuple[str, bool]]] = defaultdict(list)
        had_check: dict[int, set[str]] = defaultdict(set)
        for rid, pid, kind, completed in s.exec(
                select(PairAssignment.rater_id, PairAssignment.pair_id, PairAssignment.kind,
                       PairAssignment.completed_at)
                .order_by(PairAssignment.rater_id, PairAssignment.position)).all():
            if kind == "primary" and str(pid) in pairs:
                existing[rid].append((str(pid), completed is not None or (rid, pid) in done))
            elif kind == "attention":
                had_check[rid].add(str(pid))
        p = plan(pairs, [r.id for r in raters], existing, k=k, seed=seed,
                 repeat_share=repeat_share, min_gap=min_gap)
        rng = random.Random(f"pair-sides:{seed}")
        primary = [(rid, key) for rid, seq in p.entries.items() for key, _s, kind in seq
                   if kind == "primary"]
        sides = dict(zip(primary, balanced_sides(primary, rng), strict=True))
        att_rng = random.Random(f"pair-attention:{seed}")
        n_att = short = 0
        for rid, seq in p.entries.items():
            want = int(round(rate * sum(e[2] == "primary" for e in seq)))
            free = [c for c in checks if c[0] not in had_check[rid]]
            att_rng.shuffle(free)
            use = free[:want]
            short += want - len(use)
            n_att += len(use)
            p.entries[rid] = _insert_attention(seq, use, att_rng)
        for old, key in p.moved:
            s.exec(delete(PairAssignment).where(PairAssignment.rater_id == old,
                                                PairAssignment.pair_id == int(key)))
        s.flush()
        tops = dict(s.exec(select(PairAssignment.rater_id, func.max(PairAssignment.position))
                           .group_by(PairAssignment.rater_id)).all())
        now = utcnow()
        new_rows = []
        repeats = 0
        for rid, seq in p.entries.items():
            start = (tops.get(rid) or 0) + 1
            for off, (key, _scen, kind) in enumerate(seq):
                if kind == "attention":
                    flipped = att_rng.random() < 0.5
                else:  # a repeat shows the sides the other way round
                    flipped = sides[(rid, key)] != (kind == "repeat")
                new_rows.append({"rater_id": rid, "pair_id": int(key), "position": start + off,
                                 "kind": kind, "flipped": flipped, "created_at": now})
                repeats += kind == "repeat"
        for i in range(0, len(new_rows), 5000):
            s.execute(sa.insert(PairAssignment), new_rows[i:i + 5000])
        s.flush()
        loads = dict(s.exec(select(Rater.name, func.count(PairAssignment.id))
                            .join(PairAssignment, PairAssignment.rater_id == Rater.id)
                            .where(PairAssignment.kind == "primary").group_by(Rater.name)).all())
    return AssignResult(len(raters), len(pairs), len(new_rows), repeats, len(p.moved),
                        {r.name: loads.get(r.name, 0) for r in raters}, n_att, skipped, short,
                        pairs=True)
