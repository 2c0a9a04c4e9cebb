"""`h2h calibrate drift --config NAME`: has the judge changed under the same name?

A fixed, seeded sample of items the configuration already judged is judged again with the
stored configuration (:mod:`judge.drift`); old and new scores are compared (weighted kappa,
the mean shift with its CI, a verdict and the items that moved most: :mod:`analysis.drift`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from data import cli as data_cli
from data.cli import check_bootstrap, check_seed
from data.errors import H2HError

__all__ = ["drift_cmd"]

out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)


def _f(x, signed: bool = False) -> str:
    if x is None:
        return "—"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def _print(name: str, res) -> None:
    m = res.mean_shift
    out.print(f"[bold]{name}: {res.text}[/bold]")
    out.print(f"Compared {res.n_pairs} scores on {res.n_items} items: {res.changed} changed; "
              f"weighted κ (quadratic) {_f(res.kappa)}; mean shift (new − old) "
              f"{_f(m.value, True)} [{_f(m.low, True)}, {_f(m.high, True)}] (95% CI, item "
              f"bootstrap B={res.B}, seed {res.seed}); stable means κ ≥ {res.kappa_min:g} and "
              f"the shift's CI within ±{res.margin:g} points.")
    t = Table(title="Per dimension", title_justify="left")
    for col in ("dimension", "scores", "weighted κ", "mean shift", "changed"):
        t.add_column(col)
    for dim, d in res.dimensions.items():
        t.add_row(dim, str(d.n_pairs), _f(d.kappa), _f(d.mean_shift, True), str(d.changed))
    out.print(t)
    if res.moved:
        out.print("Items that moved most (old → new):")
        for mv in res.moved:
            parts = ", ".join(f"{d} {o:g} → {n:g}" for d, (o, n) in mv.scores.items()
                              if o != n)
            out.print(f"  {mv.item_id}: {parts}")
    for n in res.notes:
        out.print(f"Note: {n}")


def drift_cmd(
    config: Annotated[str, typer.Option(help="The judge configuration to check (name or "
                                        "hash).")],
    db: data_cli.DbOption = None,
    sample: Annotated[int, typer.Option(help="How many of its judged items to judge again.")]
    = 30,
    seed: Annotated[int, typer.Option(help="Seed of the sample and of the bootstrap.",
                                      callback=check_seed)] = 0,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples B.",
                                           callback=check_bootstrap)]
    = 1000,
    margin: Annotated[float, typer.Option(help="The largest mean shift (points) still "
                                          "called stable.")] = 0.25,
    kappa_min: Annotated[float, typer.Option("--kappa-min", help="The least weighted kappa "
                                             "still called stable.")] = 0.8,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The provider's server "
                                                 "URL.")] = None,
    api_key_env: Annotated[str | None, typer.Option("--api-key-env")] = None,
    model_file: Annotated[Path | None, typer.Option("--model-file", help="--provider local: "
                                                    "where the GGUF file is now.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Calls in flight.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for one reply.")] = 120.0,
    max_retries: Annotated[int, typer.Option("--max-retries")] = 6,
    prices: Annotated[Path | None, typer.Option(help="Price table TOML.")] = None,
    dry: Annotated[bool, typer.Option("--dry-run", help="Say what would be judged; send "
                                      "nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Has the judge changed under the same name? Judge a fixed, seeded sample of its items
    again and compare: weighted kappa, the mean shift with its CI, stable or changed.

    Example: h2h calibrate drift --config sonnet-v1 --sample 40
    """
    import pandas as pd

    from analysis.drift import DriftOptions, drift
    from data.engine import get_engine
    from judge.cli_common import concurrency_for, print_run_stats, run_options
    from judge.drift import (
        finish_check,
        old_and_new,
        open_check,
        plan_check,
        run_check,
        sample_items,
    )
    from judge.prices import load_prices
    from judge.providers import make_provider
    from judge.resolve import SpecOptions, resolve_spec

    if sample < 1:
        raise H2HError(f"--sample must be at least 1, got {sample}")
    from judge.store import find_config

    engine = get_engine(db)
    row = find_config(engine, config)
    if row.provider not in ("anthropic", "openai", "local"):
        raise H2HError(f"'{row.name}' is a {row.provider} configuration: there is no model "
                       "to ask again")
    spec, _ = resolve_spec(engine, SpecOptions(config=config, model_file=model_file))
    con = Console(stderr=True, highlight=False, soft_wrap=True) if as_json else out
    say = con.print
    items = sample_items(engine, spec, sample, seed)
    if not items:
        raise H2HError(f"'{spec.display_name}' has no scored judgment of an item that is "
                       "unchanged since: judge items with it first")
    say(f"Drift check of '{spec.display_name}' ({spec.hash[:8]}): {len(items)} of its judged "
        f"items (seed {seed}) judged again with the stored configuration")
    if dry:
        say("Dry run: nothing was sent or stored.")
        return
    check = open_check(engine, spec, seed, len(items))
    plan = plan_check(engine, spec, check, items)
    table = load_prices(prices).for_server(spec.provider, base_url)
    n_calls, _ = concurrency_for(concurrency, spec.provider, base_url)
    prov = make_provider(spec.provider, base_url=base_url, api_key_env=api_key_env,
                         timeout=timeout, structured=spec.structured, concurrency=n_calls)
    stats = run_check(engine, plan, check.id, prov, table,
                      run_options(n_calls, None, None, max_retries, 1.0),
                      show_progress=sys.stdout.isatty() and not as_json)
    if stats.planned:
        print_run_stats(stats, label="drift check", console=con)
    if not finish_check(engine, check.id):
        say("Some calls failed; run the same command again to ask them (the check "
            "continues).")
    rows = old_and_new(engine, spec, check.id)
    pairs = pd.DataFrame(rows, columns=["item_id", "dimension", "old", "new"])
    from data.study import rubric_by_version
    rubric = rubric_by_version(engine, spec.rubric_version)
    scales = {d.key: [float(v) for v in d.values] for d in rubric.dimensions}
    res = drift(pairs, scales, DriftOptions(B=bootstrap, seed=seed, margin=margin,
                                            kappa_min=kappa_min),
                temperature=spec.temperature)
    if as_json:
        doc = {"config": spec.display_name, "hash": spec.hash, "check": check.id,
               "items": items, **res.to_dict()}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        return
    _print(spec.display_name, res)
