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

__all__ = ["SIMULATED_JUDGES", "add_simulated_judges"]

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


