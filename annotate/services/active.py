"""The active-labelling draw as a service (`h2h assign --to-shrink`, the Leaderboard page):
plan it from the study, store it, and say what it means in words."""

from __future__ import annotations

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


def describe_plan(plan, judge: str) -> str:
    """The plan in plain words: allocation per model, how many more ratings ± halfwidth
    needs, and the notes."""
    from analysis.active import STRATA

    lines = [f"Active draw for judge '{judge}' (seed {plan.seed}): {len(plan.picked)} items "
             f"picked of a budget of {plan.budget}."]
    lines.append("Per model (Neyman allocation on the residual spread of human - judge): "
                 + ", ".join(f"{m} {n}" for m, n in plan.allocation.items()) + ".")
    lines.append("Within a model, by the judge's self-consistency: residual spread "
                 + ", ".join(f"{s} {v:.2f}" for s, v in zip(STRATA, plan.stratum_rms,
                                                           strict=True)) + ".")
    worst: dict[str, int | None] = {}
    for n in plan.needed:
        cur = worst.get(n["model"], 0)
        worst[n["model"]] = None if n["more"] is None or cur is None else max(cur, n["more"])
    if worst:
        total = sum(v for v in worst.values() if v is not None)
        unreachable = [m for m, v in worst.items() if v is None]
        lines.append(f"For ±{plan.halfwidth:g} on every model and dimension: about {total} "
                     "more human-rated items (uniform picks): "
                     + ", ".join(f"{m} {v if v is not None else 'not reachable'}"
                                 for m, v in worst.items()) + "."
                     + (f" Not reachable even with every item rated: "
                        f"{', '.join(unreachable)}." if unreachable else ""))
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
