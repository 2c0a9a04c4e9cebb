"""`h2h leaderboard`: companion models at the judge's scale with the humans' validity."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from data.cli import check_bootstrap, check_seed
from data.errors import H2HError

__all__ = ["leaderboard_cmd", "print_board"]

out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 170)


def leaderboard_cmd(
    db: Annotated[str | None, typer.Option("--db", help="Study database.")] = None,
    judge: Annotated[str | None, typer.Option(
        "--judge", help="A stored judge configuration (name or hash; see `h2h judge configs`), "
        "or with --judges the judge in the CSV.")] = None,
    judges: Annotated[Path | None, typer.Option(
        "--judges", help="Long CSV item_id,judge,dimension,score[,sample] (the format `h2h "
        "analyze --judges` takes) instead of a stored configuration.")] = None,
    estimator: Annotated[str, typer.Option(
        help="The combined column: ppi++ (power-tuned, default), ppi (lambda = 1), human "
        "(humans only) or judge (judge only, uncalibrated).")] = "ppi++",
    human_value: Annotated[str, typer.Option(
        "--human-value", help="An item's human value: mean (of its ratings) or fair (the "
        "many-facet Rasch model's fair score, adjusted for rater severity).")] = "mean",
    min_human: Annotated[int, typer.Option(
        "--min-human", help="Fewest human-rated items a model needs for a combined "
        "value.")] = 10,
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", help="Bootstrap resamples B for the rank intervals (0: none).",
        callback=check_bootstrap)] = 1000,
    seed: Annotated[int, typer.Option(callback=check_seed, help="Seed of the bootstrap.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the JSON here.")] = None,
) -> None:
    """Model means per dimension and task family: humans only, judge only (uncalibrated) and
    the two combined by prediction-powered inference (PPI++), with rank intervals and
    pairwise tests (Holm).

    Example: h2h leaderboard --db pilot.db --judge sonnet-v1 --json
    """
    from data.engine import get_engine

    from .io import JUDGES_REQUIRED, read_long_csv
    from .ppi_board import BoardOptions, ppi_leaderboard
    from .ppi_study import board_frames, draws_info, study_draws

    if out_file is not None:  # checked before any work, as every --out is
        from data.outfiles import check_out_file
        out_file = check_out_file(out_file, example="leaderboard.json")
    if human_value not in ("mean", "fair"):
        raise H2HError(f"--human-value: '{human_value}' is not mean or fair")
    try:
        opts = BoardOptions(estimator=estimator, min_human=min_human,  # type: ignore[arg-type]
                            B=bootstrap, seed=seed)
    except ValueError as exc:
        raise H2HError(f"--{str(exc).replace('min_human', 'min-human')}") from None
    engine = get_engine(db)
    csv = read_long_csv(judges, JUDGES_REQUIRED, ("sample",)) if judges is not None else None
    frames = board_frames(engine, judge=judge, judges_csv=csv,
                          csv_name=judges.name if judges is not None else None,
                          human_value=human_value)  # type: ignore[arg-type]
    config_hash = frames.context["judge"].get("hash")
    draws = study_draws(engine, config_hash, frames.items)
    context = {**frames.context, "active_draws": draws_info(engine, config_hash)}
    res = ppi_leaderboard(frames.items, frames.human, frames.judge, frames.scales,
                          options=opts, draws=draws, context=context)
    text = json.dumps(res, indent=2, ensure_ascii=False, allow_nan=False)
    if out_file is not None:
        from data.outfiles import write_out_text
        write_out_text(out_file, text + "\n")
    if as_json:
        sys.stdout.write(text + "\n")
    else:
        print_board(res, out)


def _est(t: dict, nd: int = 2) -> str:
    if t["estimate"] is None:
        return "not estimable"
    ci = "" if t["low"] is None else f" [{t['low']:.{nd}f}, {t['high']:.{nd}f}]"
    return f"{t['estimate']:.{nd}f}{ci}"


def print_board(res: dict, console: Console) -> None:
    """The leaderboard as tables: one per dimension, the notes, ranks and pairwise verdicts."""
    meta = res["meta"]
    j = meta.get("judge", {})
    console.print(f"Judge: {j.get('name')}"
                  + (f" ({j['hash'][:8]}, {j.get('provider')} {j.get('model')})"
                     if j.get("hash") else f" (from {j.get('source')})")
                  + f"; human value: {meta.get('human_value', 'mean')}; combined: "
                  f"{meta['estimator']}; {meta['level']:.0%} CIs; B = {meta['B']}, seed = "
                  f"{meta['seed']}; {meta['design']}.")
    ranks = {(r["dimension"], r["task"]): {m["model"]: m for m in r["models"]}
             for r in meta["ranks"]}
    for dim in dict.fromkeys(r["dimension"] for r in res["rows"]):
        t = Table(title=f"{dim}", title_justify="left")
        for col in ("model", "task", "n human", "n judge", "human only",
                    "judge only (uncalibrated)", "combined", "method", "λ", "rank [interval]"):
            t.add_column(col)
        rows = [r for r in res["rows"] if r["dimension"] == dim]
        rows.sort(key=lambda r: (r["task"] is not None, r["task"] or "",
                                 -(r["estimate"] if r["estimate"] is not None else -9e9)))
        for r in rows:
            rk = ranks.get((dim, r["task"]), {}).get(r["model"])
            rank = "" if rk is None else (f"{rk['rank']}" + (
                f" [{rk['low']}, {rk['high']}]" if rk["low"] is not None else ""))
            t.add_row(r["model"], r["task"] or "all", str(r["n_human"]), str(r["n_judge"]),
                      _est(r["human_only"]), _est(r["judge_only"]), _est(r), r["method"] or "—",
                      "" if r["lambda"] is None else f"{r['lambda']:.2f}", rank)
        console.print(t)
    for left in meta["dimensions_left_out"]:
        console.print(f"{left['dimension']}: not estimable: {left['reason']}")
    verdicts = [(r["dimension"], p) for r in meta["ranks"] if r["task"] is None
                for p in r.get("pairwise", [])]
    if verdicts:
        console.print("Pairwise (all tasks; Holm-adjusted p across the pairs of a dimension):")
        for dim, p in verdicts:
            if p["verdict"] != "not distinguishable":
                console.print(f"  {dim}: {p['verdict']} (difference {p['difference']:+.2f} "
                              f"[{p['low']:+.2f}, {p['high']:+.2f}], p_holm = "
                              f"{p['p_holm']:.3g})")
        n_nd = sum(p["verdict"] == "not distinguishable" for _, p in verdicts)
        if n_nd:
            console.print(f"  {n_nd} pair(s) not distinguishable at this level")
    for d in meta["sap_vs_baseline"]:
        console.print(f"SAP − baseline, {d['model']}, {d['dimension']} ({d['design']}, "
                      f"n human {d['n_human']}, n judge {d['n_judge']}): combined {_est(d)}; "
                      f"human only {_est(d['human_only'])}; judge only "
                      f"{_est(d['judge_only'])}")
    if meta["notes"]:
        console.print("Notes:")
        for n in meta["notes"]:
            console.print(f"  {n['model']}, {n['dimension']}, {n['task'] or 'all tasks'}: "
                          f"{n['note']}")
    console.print(meta["method_sentence"])
