"""`h2h arena`: Bradley–Terry rankings from side-by-side preferences (humans, or a pairwise
judge), with the judge's position bias and its agreement with the humans.

``--json`` prints the contract::

    {"rows": [{"model", "dimension", "log_strength", "low", "high", "rank",
               "n_comparisons"}],
     "ties": "<how ties were treated>", ...}

``rows`` hold exactly those keys (``model`` is the player: a model, a condition or both, see
``--by``); a model without a finite strength has nulls there, never a number, and
``dimensions`` says which models cannot be ranked against which and why.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from data.cli import DbOption, check_bootstrap, check_seed
from data.errors import H2HError

if TYPE_CHECKING:
    from .arena_study import PairwiseStudy
    from .bradley_terry import BTResult

__all__ = ["arena_cmd", "arena_json", "ROW_KEYS"]

out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160,
              markup=False)
ROW_KEYS = ("model", "dimension", "log_strength", "low", "high", "rank", "n_comparisons")


def _r(v: float | None, nd: int = 6) -> float | None:
    return None if v is None else round(v, nd)


def _rows(fits: dict[str, BTResult]) -> list[dict[str, Any]]:
    rows = []
    for dim, r in fits.items():
        order = sorted(range(len(r.players)),
                       key=lambda k: (r.rank[k] is None, r.rank[k] or 0,
                                      -(r.log_strength[k] or 0), r.players[k]))
        for k in order:
            if r.n_comparisons[k] == 0:
                continue  # compared with nobody on this dimension
            rows.append({"model": r.players[k], "dimension": dim,
                         "log_strength": _r(r.log_strength[k]), "low": _r(r.low[k]),
                         "high": _r(r.high[k]), "rank": r.rank[k],
                         "n_comparisons": r.n_comparisons[k]})
    return rows


def _dimension(r: BTResult) -> dict[str, Any]:
    from .bradley_terry import elo

    seen = [k for k in range(len(r.players)) if r.n_comparisons[k]]
    return {
        "n_comparisons": r.n, "n_ties": r.n_ties, "nu": _r(r.nu),
        "n_scenarios": r.n_scenarios, "n_boot_valid": r.n_boot_valid,
        "groups": [list(g) for g in r.groups if any(r.n_comparisons[r.index(p)] for p in g)],
        "cannot_rank": [{"above": list(x.above), "below": list(x.below), "kind": x.kind,
                         "reason": str(x.reason)} for x in r.relations
                        if all(r.n_comparisons[r.index(p)] for p in x.above + x.below)],
        "elo": {r.players[k]: _r(elo(r.log_strength[k]), 1) for k in seen},
        "win_rates": {r.players[i]: {r.players[j]: {"rate": _r(r.win_rate(i, j)[0], 4),
                                                     "n": r.win_rate(i, j)[1]}
                                     for j in seen if j != i and r.win_rate(i, j)[1]}
                      for i in seen},
        "notes": [str(n) for n in r.notes],
    }


def _bias(j) -> dict[str, Any]:
    b = j.bias
    return {"first_share": _r(b.first_share), "low": _r(b.first_low),
            "high": _r(b.first_high), "n_decisive": b.n_decisive, "n_answers": b.n_answers,
            "consistency": _r(b.consistency), "consistency_low": _r(b.consistency_low),
            "consistency_high": _r(b.consistency_high), "n_both_orders": b.n_complete,
            "inconsistent_favouring_first": b.favour_first,
            "inconsistent_favouring_second": b.favour_second,
            "incomplete": j.order.incomplete}


def arena_json(ps: PairwiseStudy, judge: str | None) -> dict[str, Any]:
    """The ``--json`` document of the humans' ranking, or of the judge ``judge``'s."""
    j = next((x for x in ps.judges if judge in (x.name, x.hash)), None) if judge else None
    fits = j.fits if j is not None else ps.humans
    doc: dict[str, Any] = {
        "rows": _rows(fits),
        "ties": j.ties if j is not None else ps.human_ties,
        "source": f"judge {j.name}" if j is not None else "humans",
        "by": ps.by,
        "bootstrap": {"B": ps.B, "seed": ps.seed, "resampling": "scenarios", "ci": 0.95,
                      "interval": "percentile"},
        "elo_scale": "1000 + 400 * log10(strength): a display of the same log-strengths",
        "n_pairs": ps.n_pairs, "n_preferences": ps.n_preferences,
        "dimensions": {d: _dimension(r) for d, r in fits.items()},
    }
    if j is not None:
        doc["inconsistent"] = ps.inconsistent
        doc["position_bias"] = _bias(j)
        doc["agreement"] = [
            {"dimension": k.dimension, "n_pairs": k.n_pairs,
             "judge_kappa": _r(k.judge_kappa), "judge_low": _r(k.judge_low),
             "judge_high": _r(k.judge_high), "judge_n": k.judge_n,
             "human_kappa": _r(k.human_kappa), "human_low": _r(k.human_low),
             "human_high": _r(k.human_high), "human_n": k.human_n,
             "reason": None if k.reason is None else str(k.reason)} for k in j.kappas]
        doc["ranking_agreement"] = [
            {"dimension": t.dimension, "kendall_tau_b": _r(t.tau), "low": _r(t.low),
             "high": _r(t.high), "models": list(t.models), "n_boot": t.n_boot,
             "reason": None if t.reason is None else str(t.reason)} for t in j.taus]
    return doc


def _ci(lo: float | None, hi: float | None, nd: int = 2) -> str:
    return "" if lo is None or hi is None else f" [{lo:.{nd}f}, {hi:.{nd}f}]"


def _print(doc: dict[str, Any], elo: bool, matrix: bool) -> None:
    counts = (f"{doc['n_preferences']} human preferences on {doc['n_pairs']} pairs"
              if doc["source"] == "humans" else
              f"its answers on the study's {doc['n_pairs']} pairs; comparisons per dimension "
              "below")
    b = doc["bootstrap"]
    intervals = (f"95% percentile intervals from {b['B']} scenario resamples, seed {b['seed']}"
                 if b["B"] else "no intervals (--bootstrap 0)")
    out.print(f"Bradley–Terry rankings of the {doc['source']} ({counts}; players: "
              f"{doc['by']}); {intervals}.")
    for dim, info in doc["dimensions"].items():
        t = Table("rank", "model", "log-strength [95% CI]", *(["Elo-like"] if elo else []),
                  "n", title=f"{dim}: {info['n_comparisons']} comparisons, "
                             f"{info['n_ties']} ties", title_justify="left")
        for row in (r for r in doc["rows"] if r["dimension"] == dim):
            no_ci = " [no interval: see the notes]" if doc["bootstrap"]["B"] and \
                row["low"] is None else ""
            s = ("not estimable" if row["log_strength"] is None else
                 f"{row['log_strength']:+.3f}{_ci(row['low'], row['high'])}{no_ci}")
            e = info["elo"].get(row["model"])
            t.add_row("—" if row["rank"] is None else str(row["rank"]), row["model"], s,
                      *([("—" if e is None else f"{e:.0f}")] if elo else []),
                      str(row["n_comparisons"]))
        out.print(t)
        for x in info["cannot_rank"]:
            out.print(f"Cannot be ranked against each other: {x['reason']}")
        if len(info["groups"]) > 1:
            out.print("Strengths are on separate scales, one per group: "
                      + "; ".join("{" + ", ".join(g) + "}" for g in info["groups"])
                      + " (no number compares models of different groups)")
        for n in info["notes"]:
            out.print(f"Note: {n}")
        if matrix:
            models = list(info["win_rates"])
            m = Table("row beat column", *models, title=f"{dim}: win rates (a tie counts "
                      "half) and n", title_justify="left")
            for a in models:
                cells = []
                for b in models:
                    c = info["win_rates"][a].get(b)
                    cells.append("—" if a == b else "" if c is None
                                 else f"{c['rate']:.2f} ({c['n']})")
                m.add_row(a, *cells)
            out.print(m)
    out.print(f"Ties: {doc['ties']}.")
    if "position_bias" in doc:
        b = doc["position_bias"]
        share = "not estimable (no decisive answer)" if b["first_share"] is None else \
            f"{b['first_share']:.3f}{_ci(b['low'], b['high'], 3)}"
        cons = "not estimable (no pair with both orders scored)" if b["consistency"] is None \
            else f"{b['consistency']:.3f}{_ci(b['consistency_low'], b['consistency_high'], 3)}"
        out.print(f"Position bias: the first-shown reply won {share} of "
                  f"{b['n_decisive']} decisive answers (0.5: no bias). Consistency: the two "
                  f"orders agreed on {cons} of {b['n_both_orders']} pairs "
                  f"({b['inconsistent_favouring_first']} inconsistent ones chose the first "
                  f"reply both times, {b['inconsistent_favouring_second']} the second); "
                  f"inconsistent pairs: --inconsistent {doc['inconsistent']}.")
        t = Table("dimension", "pairs", "judge–human κ [95% CI] (n)",
                  "human–human κ [95% CI] (n)", "Kendall τ_b [95% CI]",
                  title="Humans against the judge (κ on a/b/tie on pairs with ≥ 2 humans; "
                        "τ between the rankings)", title_justify="left")
        taus = {x["dimension"]: x for x in doc["ranking_agreement"]}
        for k in doc["agreement"]:
            jk = "—" if k["judge_kappa"] is None else \
                f"{k['judge_kappa']:.2f}{_ci(k['judge_low'], k['judge_high'])} ({k['judge_n']})"
            hk = "—" if k["human_kappa"] is None else \
                f"{k['human_kappa']:.2f}{_ci(k['human_low'], k['human_high'])} ({k['human_n']})"
            tau = taus.get(k["dimension"], {})
            tt = "—" if tau.get("kendall_tau_b") is None else \
                f"{tau['kendall_tau_b']:.2f}{_ci(tau['low'], tau['high'])}"
            t.add_row(k["dimension"], str(k["n_pairs"]), jk, hk, tt)
        out.print(t)
        for x in list(doc["agreement"]) + list(doc["ranking_agreement"]):
            if x.get("reason"):
                out.print(f"{x['dimension']}: {x['reason']}")


def arena_cmd(
    db: DbOption = None,
    judge: Annotated[str | None, typer.Option(help="Rank by this pairwise judge's verdicts "
                                              "(name or hash) and compare it with the "
                                              "humans. Default: the humans' "
                                              "preferences.")] = None,
    by: Annotated[str, typer.Option(help="What is ranked: model, condition (SAP against "
                                    "baseline) or model+condition.")] = "model",
    dimensions: Annotated[str | None, typer.Option(help="Only these dimensions "
                                                   "(comma-separated).")] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples of the scenarios (0: "
                                           "no intervals).", callback=check_bootstrap)] = 1000,
    seed: Annotated[int, typer.Option(callback=check_seed, help="Seed of the resampling.")] = 0,
    inconsistent: Annotated[str, typer.Option(help="A pair on which the judge's two orders "
                                              "disagree counts as a tie, or is dropped.")]
    = "tie",
    elo: Annotated[bool, typer.Option("--elo", help="Also show an Elo-like scale (1000 + "
                                      "400·log10 of the strength).")] = False,
    matrix: Annotated[bool, typer.Option("--matrix", help="Also show the win-rate "
                                         "matrix.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Rank models from side-by-side preferences: Bradley–Terry per dimension (Davidson's
    model for ties), log-strengths centred to 0 with bootstrap intervals over scenarios.
    Models that cannot be ranked against each other (never compared, or one never lost)
    are named and get no number.

    Example: h2h arena --db pilot.db --judge sonnet-pairs --json
    """
    from data.engine import get_engine

    from .arena_study import pairwise_study

    engine = get_engine(db)
    dims = tuple(d.strip() for d in (dimensions or "").split(",") if d.strip()) or None
    ps = pairwise_study(engine, judges=[judge] if judge else (), by=by,  # type: ignore[arg-type]
                        B=bootstrap, seed=seed, inconsistent=inconsistent,  # type: ignore[arg-type]
                        dimensions=dims)
    if not ps.n_pairs:
        raise H2HError("no pairs in this study yet: make them with `h2h pairs make`, or import "
                       "preferences with `h2h import preferences`")
    if judge is None and not ps.n_preferences:
        raise H2HError("no human preferences yet: raters compare pairs in the app (`h2h assign "
                       "--pairs`), or import them with `h2h import preferences`; a pairwise "
                       "judge's ranking: --judge NAME")
    doc = arena_json(ps, ps.judges[0].hash if judge else None)
    if as_json:
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
        return
    _print(doc, elo, matrix)
