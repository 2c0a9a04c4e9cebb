"""The Model ranking page's data: the prediction-powered leaderboard of a stored judge
configuration (as `h2h leaderboard`), its rows for a table, its forest plot, and the
active-labelling suggestion (as `h2h assign --to-shrink`). Streamlit-free."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from analysis.ppi_board import BoardOptions, ppi_leaderboard
from analysis.ppi_study import board_frames, draws_info, study_draws
from analysis.report.format import fmt_est
from annotate.services.i18n import N_

__all__ = ["board", "table_rows", "forest", "COLUMNS", "suggestion", "deal"]

COLUMNS = {N_("Dimension"): ("Dimension", "text"), N_("Model"): ("Model", "text"),
           N_("Human-rated"): ("Human-rated", "count"), N_("Judged"): ("Judged", "count"),
           N_("Humans only"): ("Humans only", "text"),
           N_("Judge only (uncalibrated)"): ("Judge only (uncalibrated)", "text"),
           N_("Combined"): ("Combined", "text"), N_("Rank"): ("Rank", "text")}


def board(engine: Engine, judge: str, *, estimator: str = "ppi++", B: int = 1000,
          seed: int = 0) -> dict:
    """The leaderboard JSON of `h2h leaderboard --judge JUDGE --json`."""
    frames = board_frames(engine, judge=judge)
    h = frames.context["judge"].get("hash")
    return ppi_leaderboard(frames.items, frames.human, frames.judge, frames.scales,
                           options=BoardOptions(estimator=estimator,  # type: ignore[arg-type]
                                                B=B, seed=seed),
                           draws=study_draws(engine, h, frames.items),
                           context={**frames.context, "active_draws": draws_info(engine, h)})


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
