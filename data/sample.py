"""The bundled sample study and a seeded simulator of raters.

The sample holds 43 scenarios written for h2htalk across the three H2HTalk task families, each
answered by three fictional companion models of clearly different quality (aster-70b strong,
birch-8b middling, cedar-1b weak), several as SAP / baseline pairs, some in Chinese.

The simulator gives the demo ratings for every page and report. Each response carries the
author's intended score per dimension (``metadata.intended_quality``); a simulated rater's score
is ``round(intended + item jitter + rater leniency + noise)`` clipped to the scale, with an
occasional "cannot rate". Simulated raters are flagged ``simulated`` in the database and every
export and page says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np
from sqlalchemy.engine import Engine
from sqlmodel import select

from .engine import read_session, write_session
from .importing import ImportResult, import_item_records, import_rating_records, item_tasks
from .items import ItemRecord, parse_items
from .models import Item, Pair, Rater
from .ratings import RatingRecord
from .rubric import Rubric

__all__ = ["SAMPLE_FILES", "load_sample_items", "SimulationSpec", "simulate_ratings",
           "build_sample_study", "sample_gold", "add_sample_quality", "add_sample_pairs"]

SAMPLE_FILES = ("items_dialogue.jsonl", "items_recollection.jsonl", "items_itinerary.jsonl")


def load_sample_items(tasks: tuple[str, ...]) -> list[ItemRecord]:
    """All bundled sample items, validated like any user file."""
    out: list[ItemRecord] = []
    for name in SAMPLE_FILES:
        text = resources.files("data").joinpath("sample", name).read_text("utf-8")
        out.extend(parse_items(text, name, tasks))
    return out


@dataclass(frozen=True)
class SimulationSpec:
    """How the simulated raters behave. Defaults give α around .6-.8, like real studies."""

    n_raters: int = 6
    raters_per_item: int = 3
    seed: int = 20251
    leniency_sd: float = 0.35
    noise_low: float = 0.35
    noise_high: float = 0.75
    item_jitter_sd: float = 0.3
    p_cannot_rate: float = 0.015
    name_prefix: str = "sim-rater-"


def simulate_ratings(items: list[ItemRecord], rubric: Rubric,
                     spec: SimulationSpec = SimulationSpec()) -> list[RatingRecord]:
    """Simulated long-format ratings for ``items``; the same spec always gives the same rows."""
    if spec.raters_per_item > spec.n_raters:
        raise ValueError("raters_per_item cannot exceed n_raters")
    rng = np.random.default_rng(spec.seed)
    names = [f"{spec.name_prefix}{i + 1}" for i in range(spec.n_raters)]
    leniency = rng.normal(0.0, spec.leniency_sd, spec.n_raters)
    noise = rng.uniform(spec.noise_low, spec.noise_high, spec.n_raters)
    order = rng.permutation(len(items))
    out: list[RatingRecord] = []
    line = 1
    for slot, idx in enumerate(order):
        item = items[idx]
        # a rotating panel (1,2,3), (2,3,4), … : every rater shares items with several others,
        # so the design is connected (the rater model can place all raters on one scale)
        who = [(slot + j) % spec.n_raters for j in range(spec.raters_per_item)]
        intended = item.metadata.get("intended_quality", {}) if item.metadata else {}
        for dim in rubric.dimensions_for(item.task):
            base = float(intended.get(dim.key, (dim.min + dim.max) / 2))
            latent = base + rng.normal(0.0, spec.item_jitter_sd)
            for r in who:
                line += 1
                if rng.random() < spec.p_cannot_rate:
                    out.append(RatingRecord(line, item.id, names[r], dim.key, None,
                                            "simulated: cannot rate", ()))
                    continue
                raw = latent + leniency[r] + rng.normal(0.0, noise[r])
                score = int(np.clip(np.rint(raw), dim.min, dim.max))
                flags: tuple[str, ...] = ()
                if dim.key == "safety" and score <= 2 and rng.random() < 0.8:
                    flags = ("red_flag",)
                out.append(RatingRecord(line, item.id, names[r], dim.key, score, "", flags))
    return out


def build_sample_study(engine: Engine, rubric: Rubric,
                       spec: SimulationSpec = SimulationSpec()) -> tuple[ImportResult,
                                                                        ImportResult]:
    """Import the sample items and simulated ratings into an initialised study."""
    items = load_sample_items(rubric.tasks)
    res_items = import_item_records(engine, items, file="sample items")
    known = item_tasks(engine)
    ratings = [r for r in simulate_ratings(items, rubric, spec) if r.item_id in known]
    res_ratings = import_rating_records(engine, ratings, file="simulated ratings",
                                        source="simulated", simulated=True, add_raters=True)
    return res_items, res_ratings


def sample_gold(rubric: Rubric, per_task: int = 2) -> list:
    """Gold scores for the demo: for each task family, replies by the strongest and the
    weakest model, scored at their author's intended quality. Each dimension's rationale is
    its level and anchor, followed by the author's note on the reply as a whole — the same
    note on every dimension of the item, which the training page shows once, under the
    reply (docs/formats.md, "Gold scores")."""
    from .quality import GoldRecord

    items = load_sample_items(rubric.tasks)
    out, line = [], 1
    for task in rubric.tasks:
        pool = [it for it in items if it.task == task and it.metadata
                and it.metadata.get("intended_quality")]
        picks = [it for it in pool if it.model == "aster-70b"][:per_task // 2 + per_task % 2]
        picks += [it for it in pool if it.model == "cedar-1b"][:per_task // 2]
        for it in picks:
            for d in rubric.dimensions_for(task):
                v = it.metadata["intended_quality"].get(d.key)
                if v is None or v not in d.values:
                    continue
                lv = next(lv for lv in d.levels if lv.value == v)
                why = f"{lv.label}: {lv.anchor}"
                if it.metadata.get("notes"):
                    why += f" {it.metadata['notes']}"
                line += 1
                out.append(GoldRecord(line, it.id, d.key, int(v), why))
    return out


def add_sample_quality(engine: Engine, rubric: Rubric, n_checks: int = 6, seed: int = 0
                       ) -> tuple[int, list[str]]:
    """Gold items (the training round) and instructed-response attention checks for the demo.
    Returns (gold items, attention-check item ids)."""
    from .quality import add_instructed_checks, import_gold

    gold = sample_gold(rubric)
    import_gold(engine, gold)
    checks = add_instructed_checks(engine, n_checks, 2, seed)
    return len({g.item_id for g in gold}), checks


def add_sample_pairs(engine: Engine, rubric: Rubric, seed: int = 20251,
                     per_pair: int = 3) -> tuple[int, int]:
    """Pairs of the demo's replies (``h2h pairs make``, every model pair per scenario) and
    simulated preferences between them: ``per_pair`` of the simulated raters each compare a
    pair on every dimension, preferring the reply of higher intended quality (plus the
    rater's noise); a difference under half a point is "about the same", over one and a half
    "much better". Returns (pairs, preferences)."""
    from .pairs import make_pairs
    from .preferences import PreferenceRecord, import_preference_records

    made = make_pairs(engine, seed=seed)
    rng = np.random.default_rng([seed, 2])
    names = [f"{SimulationSpec().name_prefix}{i + 1}" for i in range(SimulationSpec().n_raters)]
    noise = rng.uniform(0.4, 0.8, len(names))
    with read_session(engine) as s:
        pairs = s.exec(select(Pair.item_a, Pair.item_b).where(Pair.attention.is_(None))
                       .order_by(Pair.position)).all()
        meta = {i: (t, m or {}) for i, t, m in s.exec(select(Item.id, Item.task, Item.meta))}
    records, line = [], 1
    for k, (a, b) in enumerate(pairs):
        task, qa = meta[a][0], meta[a][1].get("intended_quality", {})
        qb = meta[b][1].get("intended_quality", {})
        for r in [(k + j) % len(names) for j in range(per_pair)]:
            for d in rubric.dimensions_for(task):
                mid = (d.min + d.max) / 2
                diff = float(qa.get(d.key, mid)) - float(qb.get(d.key, mid)) \
                    + rng.normal(0.0, noise[r])
                line += 1
                winner = "tie" if abs(diff) < 0.5 else ("a" if diff > 0 else "b")
                strength = None if winner == "tie" else (2 if abs(diff) > 1.5 else 1)
                records.append(PreferenceRecord(line, a, b, names[r], d.key, winner,
                                                strength, "", None))
    with write_session(engine) as s:  # the simulated raters are flagged as such
        for n in names:
            if s.exec(select(Rater).where(Rater.name == n)).first() is None:
                s.add(Rater(name=n, role="rater", code_hash=None, simulated=True))
    res = import_preference_records(engine, records, file="simulated preferences")
    return made.added + made.existing, res.added
