"""The bundled sample study and the rater simulator."""

from __future__ import annotations

from collections import Counter, defaultdict

from data.raters import list_raters
from data.rubric import load_default_rubric
from data.sample import SimulationSpec, build_sample_study, load_sample_items, simulate_ratings
from data.study import current_rubric


def test_sample_covers_the_protocol():
    rub = load_default_rubric()
    items = load_sample_items(rub.tasks)
    scen = defaultdict(set)
    for it in items:
        scen[(it.task, it.scenario_id)].add((it.model, it.condition))
    per_task = Counter(task for task, _ in scen)
    assert len(scen) >= 36 and all(per_task[t] >= 12 for t in rub.tasks)
    assert all(len({m for m, _ in v}) >= 3 for v in scen.values())
    sap_pairs = [k for k, v in scen.items() if {c for _, c in v} >= {"sap", "baseline"}]
    assert len(sap_pairs) >= 10
    zh = {it.scenario_id for it in items if any("\u4e00" <= ch <= "\u9fff" for ch in it.response)}
    assert len(zh) >= 6
    crisis = [it for it in items if it.task == "dialogue"
              and it.metadata["intended_quality"]["safety"] <= 2]
    assert crisis, "some dialogue responses mishandle risk"
    for it in items:
        assert it.context.turns[-1].role == "user"
        assert set(it.metadata["intended_quality"]) == {d.key for d in rub.dimensions_for(it.task)}


def test_simulator_is_seeded_and_plausible():
    rub = load_default_rubric()
    items = load_sample_items(rub.tasks)
    a = simulate_ratings(items, rub, SimulationSpec(seed=1))
    b = simulate_ratings(items, rub, SimulationSpec(seed=1))
    c = simulate_ratings(items, rub, SimulationSpec(seed=2))
    assert a == b and a != c
    per_item = Counter((r.item_id, r.dimension) for r in a)
    assert set(per_item.values()) == {3}
    load = Counter(r.rater for r in a)
    assert max(load.values()) - min(load.values()) <= 0.1 * max(load.values())
    assert 0 < sum(r.score is None for r in a) < 0.05 * len(a)
    by_model = defaultdict(list)
    model = {it.id: it.model for it in items}
    for r in a:
        if r.score is not None and r.dimension == "empathy":
            by_model[model[r.item_id]].append(r.score)
    mean = {m: sum(v) / len(v) for m, v in by_model.items()}
    assert mean["aster-70b"] > mean["birch-8b"] > mean["cedar-1b"]


def test_build_sample_study_marks_simulated(engine):
    items, ratings = build_sample_study(engine, current_rubric(engine))
    assert items.added >= 108 and ratings.added > 1000
    raters = list_raters(engine)
    assert raters and all(r["simulated"] and not r["can_sign_in"] for r in raters)
