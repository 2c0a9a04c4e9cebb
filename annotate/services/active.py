"""The active-labelling draw as a service (`h2h assign --to-shrink`, the Leaderboard page):
plan it from the study, store it, and say what it means in words."""

from __future__ import annotations

import numpy as np
from sqlalchemy.engine import Engine

from data.errors import H2HError

__all__ = ["plan_for", "draw_and_report", "describe_plan"]


def plan_for(engine: Engine, judge: str, *, budget: int, seed: int = 0,
             halfwidth: float = 0.1):
    """The plan for a stored judge configuration, and the configuration's hash (nothing
    is stored)."""
    from analysis.active import plan_draw
    from analysis.ppi_study import board_frames

    frames = board_frames(engine, judge=judge)
    try:
        plan = plan_draw(frames.items, frames.human, frames.judge, frames.scales,
                         budget=budget, seed=seed, halfwidth=halfwidth)
    except ValueError as exc:
        raise H2HError(f"--to-shrink: {exc}") from None
    return plan, frames.context["judge"]["hash"]


def _distinct(steps: list[tuple[float, float]]) -> list[tuple[str, float]]:
    """The steps' spreads with as many decimals (2 to 4) as tell them apart: two steps at
    0.4714 and 0.4743 both read "spread 0.47" (a user trial)."""
    for nd in (2, 3, 4):
        labels = [f"{u:.{nd}f}" for u, _ in steps]
        if len(set(labels)) == len(labels):
            break
    return [(lab, sd) for lab, (_, sd) in zip(labels, steps, strict=True)]


def describe_plan(plan, judge: str) -> str:
    """The plan in plain words: allocation per model, the residual spread it weights by,
    how many more ratings ± halfwidth needs, and the notes."""
    fit = plan.fit
    lines = [f"Active draw for judge '{judge}' (seed {plan.seed}): {len(plan.picked)} items "
             f"picked of a budget of {plan.budget}."]
    lines.append("Per model (the split that makes the sum of the models' standard errors "
                 "smallest): " + ", ".join(f"{m} {n}" for m, n in plan.allocation.items())
                 + ".")
    steps = [(u, sd) for i, (u, sd) in enumerate(zip(fit.spread, fit.sd, strict=True))
             if i == 0 or sd != fit.sd[i - 1]]
    if len(steps) > 6:  # the fit's shape, not every block
        steps = [steps[i] for i in np.linspace(0, len(steps) - 1, 6).round().astype(int)]
    lines.append("Within a model, in proportion to the residual SD expected from the spread of "
                 f"the judge's samples (fitted on {fit.n} rated item-dimensions; never below "
                 f"{plan.floor:.0%} of uniform's probability): "
                 + ", ".join(f"spread {u}: {sd:.2f}" for u, sd in _distinct(steps))
                 + f"; no judge score: {fit.unscored_sd:.2f}.")
    worst: dict[str, int | None] = {}
    for n in plan.needed:
        cur = worst.get(n["model"], 0)
        worst[n["model"]] = None if n["more"] is None or cur is None else max(cur, n["more"])
    if worst:
        reach = {m: v for m, v in worst.items() if v is not None}
        unreachable = [m for m, v in worst.items() if v is None]
        if reach:
            lines.append(f"For ±{plan.halfwidth:g} on every model and dimension: about "
                         f"{sum(reach.values())} more human-rated items (uniform picks; an "
                         "active draw needs no more): "
                         + ", ".join(f"{m} {v}" for m, v in reach.items()) + ".")
        if unreachable:
            lines.append(f"±{plan.halfwidth:g} is not reachable even with every item rated: "
                         f"{', '.join(unreachable)}.")
    lines += [f"Note: {n}" for n in plan.notes]
    return "\n".join(lines)


def draw_and_report(engine: Engine, judge: str, *, budget: int, seed: int = 0,
                    halfwidth: float = 0.1) -> tuple[tuple[str, ...], str]:
    """Plan the draw, store it, and return the picked items with the plan in words."""
    from data.draws import save_draw

    if budget < 1:
        raise H2HError(f"--budget must be 1 or more; got {budget}")
    plan, config_hash = plan_for(engine, judge, budget=budget, seed=seed, halfwidth=halfwidth)
    if plan.picked:
        save_draw(engine, config_hash, seed=seed, budget=budget, halfwidth=halfwidth,
                  rated_before=plan.rated_before, probability=plan.probability,
                  picked=plan.picked)
    return plan.picked, describe_plan(plan, judge)
