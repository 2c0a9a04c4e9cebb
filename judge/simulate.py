"""Simulated judges for the demo study, so every page and report has judge data to show.

Two configurations with provider ``simulated`` (never runnable, always labelled as such):

* ``sim-judge-plain`` — a lenient judge (+0.6 points) with much noise that also rewards long
  replies, one sample;
* ``sim-judge-anchored`` — close to the responses' intended quality, three samples.

Scores follow each response's ``metadata.intended_quality`` like the simulated raters do, and
about 2% of judgments are stored as unscored (invalid reply) with a reason, as real runs have.
"""

from __future__ import annotations

import numpy as np
from sqlalchemy.engine import Engine
from sqlmodel import select

from data.engine import write_session
from data.models import Item, Judgment
from data.rubric import Rubric

from .config import JudgeSpec
from .prompts import load_judge_template

__all__ = ["SIMULATED_JUDGES", "add_simulated_judges", "SIMULATED_PAIRWISE",
           "add_simulated_pairwise_judge"]

SIMULATED_JUDGES = {
    "sim-judge-plain": {"lenience": 0.6, "noise": 0.9, "length_effect": 0.8, "samples": 1},
    "sim-judge-anchored": {"lenience": 0.05, "noise": 0.45, "length_effect": 0.0, "samples": 3},
}


def add_simulated_judges(engine: Engine, rubric: Rubric, seed: int = 7) -> int:
    """Store the simulated configurations and their judgments; returns judgments stored."""
    rng = np.random.default_rng(seed)
    template = load_judge_template(None)
    n = 0
    with write_session(engine) as s:
        items = s.exec(select(Item).order_by(Item.position)).all()
        lengths = np.array([len(it.response) for it in items], float)
        z_len = (lengths - lengths.mean()) / (lengths.std() or 1.0)
        for name, p in SIMULATED_JUDGES.items():
            # JudgeSpec validates real providers; the simulated row is written directly and
            # hashed like a real configuration of the same template and parameters.
            spec = JudgeSpec("anthropic", name, template, rubric.version, name=name,
                             samples=p["samples"], temperature=1.0 if p["samples"] > 1 else 0.0)
            row = spec.row()
            row.provider = "simulated"
            row.hash = "sim" + row.hash[3:]
            s.add(row)
            s.flush()
            for i, it in enumerate(items):
                intended = (it.meta or {}).get("intended_quality", {})
                for d in rubric.dimensions_for(it.task):
                    base = float(intended.get(d.key, (d.min + d.max) / 2))
                    for sample in range(p["samples"]):
                        raw = (base + p["lenience"] + p["length_effect"] * z_len[i] * 0.5
                               + rng.normal(0, p["noise"]))
                        score = float(np.clip(np.rint(raw), d.min, d.max))
                        unscored = rng.random() < 0.02
                        s.add(Judgment(
                            config_hash=row.hash, item_id=it.id, item_hash=it.content_hash,
                            dimension=d.key, sample=sample,
                            score=None if unscored else score,
                            outcome="invalid_reply" if unscored else "scored",
                            unscored_reason="simulated: reply had no score" if unscored
                            else None,
                            raw_reply="(simulated judge: no model was called)",
                            reasoning="" if unscored else
                            f"(simulated) {d.label} looks like level {score:g}."))
                        n += 1
    return n




SIMULATED_PAIRWISE = {"sim-judge-pairwise": {"first_bias": 0.5, "noise": 0.6, "tie_band": 0.4}}
"""A simulated pairwise judge for the demo: it prefers the reply of higher intended quality,
with noise, and leans towards the reply shown first by half a point (a position bias the
report and ``h2h arena --judge`` measure); a difference within the tie band is a tie."""


def add_simulated_pairwise_judge(engine: Engine, rubric: Rubric, seed: int = 7) -> int:
    """Store the simulated pairwise configuration and its answers on every pair, both
    orders; returns the answers stored."""
    from sqlalchemy.orm import aliased

    from data.models import Pair, PairJudgment
    from data.pairs import pair_hash

    from .pairwise import to_winner
    from .prompts import load_pairwise_template

    rng = np.random.default_rng([seed, 3])
    n = 0
    a, b = aliased(Item), aliased(Item)
    with write_session(engine) as s:
        pairs = s.exec(select(Pair.id, a.task, a.meta, b.meta, a.content_hash, b.content_hash)
                       .join(a, a.id == Pair.item_a).join(b, b.id == Pair.item_b)
                       .where(Pair.attention.is_(None)).order_by(Pair.position)).all()
        for name, p in SIMULATED_PAIRWISE.items():
            spec = JudgeSpec("anthropic", name, load_pairwise_template(None), rubric.version,
                             mode="pairwise", name=name, temperature=0.0)
            row = spec.row()
            row.provider = "simulated"
            row.hash = "sim" + row.hash[3:]
            s.add(row)
            s.flush()
            for pid, task, meta_a, meta_b, ha, hb in pairs:
                qa = (meta_a or {}).get("intended_quality", {})
                qb = (meta_b or {}).get("intended_quality", {})
                for d in rubric.dimensions_for(task):
                    mid = (d.min + d.max) / 2
                    gap = float(qa.get(d.key, mid)) - float(qb.get(d.key, mid))
                    for order, sign in (("ab", 1.0), ("ba", -1.0)):
                        diff = sign * gap + p["first_bias"] + rng.normal(0, p["noise"])
                        verdict = ("tie" if abs(diff) < p["tie_band"] else
                                   "first" if diff > 0 else "second")
                        said = {"first": "A", "second": "B", "tie": "tie"}[verdict]
                        s.add(PairJudgment(
                            config_hash=row.hash, pair_id=pid, pair_hash=pair_hash(ha, hb),
                            dimension=d.key, order=order, sample=0, verdict=verdict,
                            winner=to_winner(verdict, order), outcome="scored",
                            raw_reply=f'{{"winner": "{said}"}}',
                            reasoning="simulated: no model was called"))
                        n += 1
    return n
