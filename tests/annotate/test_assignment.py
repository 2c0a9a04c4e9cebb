"""Assignment: exact overlap, balanced load, counterbalanced order, hidden repeats, and
mid-study raters who get work without reshuffling what is done."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from annotate.services.assignment import assign, counterbalanced_order, plan
from data.engine import write_session
from data.errors import H2HError
from data.importing import import_item_records
from data.items import ItemRecord
from data.models import Rater
from data.rating_service import save_item_ratings
from tests.helpers import item


@st.composite
def studies(draw):
    n_scen = draw(st.integers(2, 40))
    per = draw(st.lists(st.integers(1, 4), min_size=n_scen, max_size=n_scen))
    items = {f"s{s}-{j}": f"s{s}" for s in range(n_scen) for j in range(per[s])}
    n_raters = draw(st.integers(1, 9))
    k = draw(st.integers(1, n_raters))
    return items, list(range(1, n_raters + 1)), k, draw(st.integers(0, 10 ** 6))


def _adjacent_same(seq) -> int:
    return sum(1 for a, b in zip(seq, seq[1:], strict=False) if a[1] == b[1])


def _best_possible(scenarios: list[str]) -> int:
    """Fewest unavoidable same-scenario neighbours: max(0, biggest - (rest + 1))."""
    c = Counter(scenarios)
    big = max(c.values())
    return max(0, big - (len(scenarios) - big + 1))


@settings(max_examples=80, deadline=None)
@given(studies(), st.sampled_from([0.0, 0.1, 0.3]))
def test_plan_properties(study, share):
    items, raters, k, seed = study
    p = plan(items, raters, {}, k=k, seed=seed, repeat_share=share, min_gap=3)
    primary = {r: [e for e in seq if e[2] == "primary"] for r, seq in p.entries.items()}
    per_item = Counter(it for seq in primary.values() for it, _, _ in seq)
    assert set(per_item) == set(items) and set(per_item.values()) == {k}  # overlap exact
    loads = [len(primary.get(r, [])) for r in raters]
    assert max(loads) - min(loads) <= 1  # balanced within one
    for seq in p.entries.values():
        scen = [sc for _, sc, _ in seq]
        prim_scen = [sc for _, sc, kind in seq if kind == "primary"]
        assert _adjacent_same(seq) <= _best_possible(scen) + _best_possible(prim_scen)
        reps = [(i, it) for i, (it, _, kind) in enumerate(seq) if kind == "repeat"]
        for pos, it in reps:  # a repeat comes at least min_gap after the first showing
            first = next(i for i, (x, _, kind) in enumerate(seq) if x == it and
                         kind == "primary")
            assert pos - first > 3
        assert len({it for _, it in reps}) == len(reps)
    again = plan(items, raters, {}, k=k, seed=seed, repeat_share=share, min_gap=3)
    assert again == p  # seeded


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=60), st.integers(0, 999))
def test_counterbalanced_order_is_optimal(scenarios, seed):
    items = [(f"{s}{i}", s) for i, s in enumerate(scenarios)]
    out = counterbalanced_order(items, random.Random(seed))
    assert sorted(out) == sorted(items)
    assert _adjacent_same(out) == _best_possible(scenarios)


def test_repeats_present_when_asked():
    items = {f"i{i}": f"s{i // 2}" for i in range(100)}
    p = plan(items, [1, 2, 3, 4], {}, k=2, seed=3, repeat_share=0.1)
    for seq in p.entries.values():
        assert sum(kind == "repeat" for _, _, kind in seq) == 5


def _study(engine, n_items=60, raters=("ann", "bo", "cy")):
    recs = [ItemRecord.model_validate(item(f"it{i:03d}", scenario=f"sc{i // 3}"))
            for i in range(n_items)]
    import_item_records(engine, recs, file="t")
    with write_session(engine) as s:
        for name in raters:
            s.add(Rater(name=name, role="rater", code_hash=f"sha256:{name}"))


def _queues(engine) -> dict[str, list[tuple[int, str, str, object]]]:
    with engine.connect() as c:
        rows = c.execute(sa.text(
            "SELECT r.name, a.position, a.item_id, a.kind, a.completed_at FROM assignment a "
            "JOIN rater r ON r.id = a.rater_id ORDER BY r.name, a.position")).all()
    out: dict[str, list] = {}
    for name, pos, it, kind, done in rows:
        out.setdefault(name, []).append((pos, it, kind, done))
    return out


def test_mid_study_rater_gets_work_without_reshuffling(engine):
    _study(engine)
    res = assign(engine, k=2, seed=1)
    assert res.added == 120 and set(res.loads.values()) == {40}
    with engine.connect() as c:
        rid = {n: i for i, n in c.execute(sa.text("SELECT id, name FROM rater")).all()}
    before = _queues(engine)
    # ann and bo finish their first 10 items
    for name in ("ann", "bo"):
        for pos, it, _kind, _ in before[name][:10]:
            save_item_ratings(engine, rater_id=rid[name], item_id=it,
                              scores={"empathy": 3, "safety": 4, "fluency": 5},
                              assignment_id=_aid(engine, rid[name], pos))
    done_before = {n: [e[:3] for e in q if e[3] is not None] for n, q in _queues(engine).items()}
    with write_session(engine) as s:
        s.add(Rater(name="dee", role="rater", code_hash="sha256:dee"))
    res2 = assign(engine, k=2, seed=2)
    after = _queues(engine)
    assert res2.moved == 30 and res2.loads == {"ann": 30, "bo": 30, "cy": 30, "dee": 30}
    for n, done in done_before.items():  # done work stays where it was
        assert [e[:3] for e in after[n] if e[3] is not None] == done
    per_item = Counter(it for q in after.values() for _, it, kind, _ in q if kind == "primary")
    assert set(per_item.values()) == {2}
    assert assign(engine, k=2, seed=3).added == 0  # nothing left to do


def _aid(engine, rater_id, pos) -> int:
    with engine.connect() as c:
        return c.execute(sa.text("SELECT id FROM assignment WHERE rater_id=:r AND position=:p"),
                         {"r": rater_id, "p": pos}).scalar_one()


def test_assign_errors_are_clear(engine):
    with pytest.raises(H2HError, match="no active raters"):
        assign(engine, k=1)
    _study(engine, raters=("ann",))
    with pytest.raises(H2HError, match="--k 2 needs at least 2 active raters"):
        assign(engine, k=2)
    with pytest.raises(H2HError, match="--repeats must be between 0 and 0.5"):
        assign(engine, k=1, repeat_share=0.9)
