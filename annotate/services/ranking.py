"""The Model ranking page's data: the prediction-powered leaderboard of a stored judge
configuration (as `h2h leaderboard`), its rows for a table, its forest plot, and the
active-labelling suggestion (as `h2h assign --to-shrink`). Streamlit-free."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy.engine import Engine

from analysis.ppi_board import BoardOptions, ppi_leaderboard
from analysis.ppi_study import BoardFrames, board_frames, draws_info, study_draws
from analysis.report.format import fmt_est
from annotate.services.i18n import N_

__all__ = ["board", "BoardInputs", "board_inputs", "board_of", "table_rows", "grouped_notes",
           "forest", "COLUMNS", "suggestion", "deal"]

COLUMNS = {N_("Dimension"): ("Dimension", "text"), N_("Model"): ("Model", "text"),
           N_("Human-rated"): ("Human-rated", "count"), N_("Judged"): ("Judged", "count"),
           N_("Humans only"): ("Humans only", "text"),
           N_("Judge only (uncalibrated)"): ("Judge only (uncalibrated)", "text"),
           N_("Combined"): ("Combined", "text"), N_("Rank"): ("Rank", "text")}


@dataclass(frozen=True, eq=False)
class BoardInputs:
    """What a judge's leaderboard is computed from: the study's frames for that judge, the
    active-labelling draws recorded for it (None: none), and their summary."""
    frames: BoardFrames
    draws: pd.DataFrame | None
    active_draws: list[dict[str, Any]]


def board_inputs(engine: Engine, judge: str) -> BoardInputs:
    """The study's frames and draws for ``judge``'s leaderboard (cheap reads)."""
    frames = board_frames(engine, judge=judge)
    h = frames.context["judge"].get("hash")
    return BoardInputs(frames, study_draws(engine, h, frames.items), draws_info(engine, h))


def board_of(inputs: BoardInputs, *, estimator: str = "ppi++", B: int = 1000,
             seed: int = 0) -> dict:
    """The prediction-powered leaderboard of :func:`board_inputs` (the costly part)."""
    f = inputs.frames
    return ppi_leaderboard(f.items, f.human, f.judge, f.scales,
                           options=BoardOptions(estimator=estimator,  # type: ignore[arg-type]
                                                B=B, seed=seed),
                           draws=inputs.draws,
                           context={**f.context, "active_draws": inputs.active_draws})


def board(engine: Engine, judge: str, *, estimator: str = "ppi++", B: int = 1000,
          seed: int = 0) -> dict:
    """The leaderboard JSON of `h2h leaderboard --judge JUDGE --json`."""
    return board_of(board_inputs(engine, judge), estimator=estimator, B=B, seed=seed)


def table_rows(res: dict, labels: dict[str, str]) -> list[dict]:
    """One row per model and dimension over all task families (best first)."""
    ranks = {(x["dimension"], m["model"]): m for x in res["meta"]["ranks"]
             if x["task"] is None for m in x["models"]}
    out = []
    for r in sorted((r for r in res["rows"] if r["task"] is None),
                    key=lambda r: (list(labels).index(r["dimension"])
                                   if r["dimension"] in labels else 99,
                                   -(r["estimate"] or -1e9))):
        rk = ranks.get((r["dimension"], r["model"]))
        out.append({
            "Dimension": labels.get(r["dimension"], r["dimension"]), "Model": r["model"],
            "Human-rated": r["n_human"], "Judged": r["n_judge"],
            "Humans only": fmt_est(*r["human_only"].values(), "points"),
            "Judge only (uncalibrated)": fmt_est(*r["judge_only"].values(), "points"),
            "Combined": fmt_est(r["estimate"], r["low"], r["high"], "points"),
            "Rank": "" if rk is None else (f"{rk['rank']}" if rk["low"] is None
                                           else f"{rk['rank']} [{rk['low']}–{rk['high']}]")})
    return out


def grouped_notes(res: dict, labels: dict[str, str]) -> list[str]:
    """The all-tasks notes, one line per note text with the models and dimensions it is
    about (the demo's page listed "every judged item is human-rated …" 15 times; a user
    trial): ``note — model (Dimension, Dimension); model (Dimension)``, in first-seen order."""
    groups: dict[str, dict[str, list[str]]] = {}
    for n in res["meta"]["notes"]:
        if n["task"] is None:
            dims = groups.setdefault(n["note"], {}).setdefault(n["model"], [])
            dims.append(labels.get(n["dimension"], n["dimension"]))
    return [f"{note} — " + "; ".join(f"{m} ({', '.join(d)})" for m, d in models.items())
            for note, models in groups.items()]


def forest(res: dict, labels: dict[str, str]):
    """The report's forest plot (plotly figure) or None."""
    from analysis.report.sec_ranking import ranking_figure

    fig = ranking_figure(res, labels, list(labels))
    return None if fig is None else fig.fig


def suggestion(engine: Engine, judge: str, *, budget: int, seed: int = 0) -> str:
    """What an active draw of ``budget`` items would do (nothing is stored)."""
    from annotate.services.active import describe_plan, plan_for

    plan, _ = plan_for(engine, judge, budget=budget, seed=seed)
    return describe_plan(plan, judge)


def deal(engine: Engine, judge: str, *, budget: int, seed: int = 0, k: int = 1) -> str:
    """Store the draw and deal its items to the raters (k each); what happened, in words."""
    from annotate.services.active import draw_and_report
    from annotate.services.assignment import assign

    picked, text = draw_and_report(engine, judge, budget=budget, seed=seed)
    if picked:
        text += "\n" + str(assign(engine, k=k, seed=seed, only=set(picked)))
    return text
