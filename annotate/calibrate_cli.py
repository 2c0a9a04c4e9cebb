"""`h2h calibrate`: run judge configurations on the human-rated items and compare them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

# The statistics and the database layer are imported inside the command (issue 16: `h2h
# --help` and the other commands must not pay for them).
from data import cli as data_cli
from data.errors import H2HError

__all__ = ["calibrate_cmd"]

out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 120)


def _f(x, nd=3) -> str:
    return "—" if x is None else f"{x:.{nd}f}"


def _run_configs(engine, configs: list[str], items: list[str], *, base_url: str | None,
                 yes: bool, prices: Path | None) -> None:
    """Judge the calibration items with each stored configuration, after a cost estimate."""
    from judge.config import spec_from_row
    from judge.judging import Filters, plan_judging
    from judge.prices import load_prices
    from judge.progress import format_usd
    from judge.providers import make_provider
    from judge.run import dry_run, run_judge
    from judge.store import find_config

    table = load_prices(prices)
    plans = []
    total = 0.0
    unknown = False
    for name in configs:
        row = find_config(engine, name)
        if row.provider == "simulated":
            out.print(f"{name}: simulated demo judge, not run (its judgments are stored)")
            continue
        spec = spec_from_row(row)
        plan = plan_judging(engine, spec, Filters(items=tuple(items)))
        d = dry_run(plan, table)
        plans.append((spec, plan))
        if d.cost is None:
            unknown = True
        else:
            total += d.cost
        out.print(f"{spec.display_name}: {d.calls} calls to make, about {d.input_tokens:,} "
                  f"input / {d.output_tokens:,} output tokens, "
                  f"{format_usd(d.cost) if d.cost is not None else 'cost unknown'}")
    est = format_usd(total) + (" plus configurations without a price" if unknown else "")
    if not any(p.units for _, p in plans):
        out.print("Every calibration judgment is already stored; nothing to run.")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise H2HError(f"estimated cost {est}: pass --yes to run without asking")
        if not typer.confirm(f"Run these judgments for about {est}?"):
            raise H2HError("cancelled; nothing was sent")
    for spec, plan in plans:
        if not plan.units:
            continue
        prov = make_provider(spec.provider, base_url=base_url, structured=spec.structured)
        _, stats = run_judge(engine, spec, prov, filters=Filters(items=tuple(items)),
                             prices=table, show_progress=sys.stdout.isatty())
        out.print(f"{spec.display_name}: {stats}")


def calibrate_cmd(
    configs: Annotated[list[str], typer.Option("--configs", help="Judge configurations by name "
                                               "(comma-separated or repeated), two or more to "
                                               "compare.")],
    db: data_cli.DbOption = None,
    sample: Annotated[int | None, typer.Option(help="Use a seeded sample of this many "
                                               "human-rated items.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample and of the bootstrap.")] = 0,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples B.")] = 1000,
    alt_epsilon: Annotated[float, typer.Option("--alt-epsilon")] = 0.2,
    run: Annotated[bool, typer.Option("--run", help="First judge the calibration items with "
                                      "each stored configuration (cost estimate shown).")]
    = False,
    yes: Annotated[bool, typer.Option("--yes", help="With --run, do not ask before paying.")]
    = False,
    base_url: Annotated[str | None, typer.Option("--base-url", help="With --run, the "
                                                 "provider's server URL.")] = None,
    prices: Annotated[Path | None, typer.Option(help="Price table TOML (default: the bundled "
                                                "one, or $H2H_PRICES).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")]
    = False,
) -> None:
    """Which judge configuration can stand in for the human raters, per dimension?

    Paired item bootstrap of QWK, alpha with the judge and MAE between configurations (Holm
    across dimensions), the alternative annotator test, bias diagnostics and a verdict.

    Example: h2h calibrate --configs sonnet-v1,sonnet-v2 --run --sample 200 --seed 1
    """
    from analysis.analyze import AnalysisOptions
    from annotate.services.calibration import calibration_items, compare_configs
    from data.engine import get_engine

    names = [c.strip() for v in configs for c in v.split(",") if c.strip()]
    if not names:
        raise H2HError("--configs: name at least one judge configuration")
    engine = get_engine(db)
    items = calibration_items(engine, sample, seed)
    say = Console(stderr=True, highlight=False, soft_wrap=True) if as_json else out
    say.print(f"Calibration set: {len(items)} human-rated items"
              + (f" (seeded sample, seed {seed})" if sample else ""))
    if run:
        _run_configs(engine, names, items, base_url=base_url, yes=yes, prices=prices)
    res = compare_configs(engine, names, items=items,
                          options=AnalysisOptions(B=bootstrap, seed=seed,
                                                  alt_epsilon=alt_epsilon))
    if as_json:
        sys.stdout.write(json.dumps(res, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        return
    for dim, r in res.items():
        t = Table(title=f"{dim}: {r['n_items']} items, paired bootstrap B={r['B']}, "
                        f"seed={r['seed']}", title_justify="left")
        for col in ("configuration", "QWK [95% CI]", "α with judge", "MAE", "bias",
                    "alt-test", "unscored"):
            t.add_column(col)
        for name, c in r["configs"].items():
            q = c["qwk"]
            alt = c.get("alt_test") or {}
            t.add_row(name, f"{_f(q['value'])} [{_f(q['low'])}, {_f(q['high'])}]",
                      _f(c["alpha_with_judge"]["value"]), _f(c["mae"]["value"]),
                      _f(c["bias"]), {True: "pass", False: "fail"}.get(alt.get("passed"), "—"),
                      _f(c.get("unscored_rate"), 2))
        hc = r["human_ceiling"]
        t.add_row("[dim]human ceiling[/dim]", _f(hc.get("qwk")), _f(hc.get("alpha_humans")),
                  _f(hc.get("mae")), "", "", "")
        out.print(t)
        for p in r["pairs"]:
            out.print(f"  {p['a']} − {p['b']} {p['metric']}: {_f(p['diff'])} "
                      f"[{_f(p['low'])}, {_f(p['high'])}], Holm p = {_f(p.get('p_holm'))}")
        out.print(f"  [bold]{r['verdict']['text']}[/bold]")
        for c in r["verdict"].get("caveats", []):
            out.print(f"  note: {c}")
