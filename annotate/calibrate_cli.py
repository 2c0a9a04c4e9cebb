"""`h2h calibrate`: run judge configurations on the human-rated items and compare them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

# The statistics and the database layer are imported inside the command (issue 16: `h2h
# --help` and the other commands must not pay for them).
from data import cli as data_cli
from data.cli import check_bootstrap, check_seed
from data.errors import H2HError

if TYPE_CHECKING:
    from analysis.calibration import DimensionCalibration
    from analysis.serialize import Interval

__all__ = ["calibrate_cmd", "calibrate_app"]

out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)


def _f(x, nd=3) -> str:
    return "—" if x is None else f"{x:.{nd}f}"


def _language_variants(engine, names: list[str], language: str) -> dict[str, object]:
    """For ``--rubric-language``: each named judge configuration with the rubric shown in
    ``language``, as a configuration of its own named ``<name>-rubric-<language>`` (a
    different prompt is a different configuration, with its own hash). Configurations that
    already show the rubric so, and simulated ones, have none."""
    from dataclasses import replace

    from data.study import rubric_by_version
    from judge.config import rubric_language_setting, spec_from_row
    from judge.store import find_config

    out_: dict[str, object] = {}
    for name in names:
        row = find_config(engine, name)
        if row.provider == "simulated":
            out.print(f"{name}: simulated demo judge, no --rubric-language variant")
            continue
        base = spec_from_row(row)
        setting = rubric_language_setting(language, rubric_by_version(engine,
                                                                      base.rubric_version))
        if setting == base.rubric_language:
            continue
        variant = replace(base, rubric_language=setting, name=f"{name}-rubric-{language}")
        out_[variant.display_name] = variant
    return out_


def _run_configs(engine, configs: list[str], items: list[str], *, base_url: str | None,
                 yes: bool, prices: Path | None, variants: dict | None = None) -> None:
    """Judge the calibration items with each stored configuration (and each new
    ``--rubric-language`` variant), after a cost estimate."""
    from data.engine import read_session
    from judge.cli_common import print_run_stats
    from judge.config import spec_from_row
    from judge.judging import Filters, plan_judging
    from judge.prices import load_prices
    from judge.progress import format_usd
    from judge.providers import make_provider
    from judge.run import dry_run, run_judge
    from judge.store import check_name_free, find_config

    table = load_prices(prices)
    plans = []
    total = 0.0
    unknown = False
    variants = variants or {}
    for name in configs:
        if name in variants:
            spec = variants[name]
            with read_session(engine) as s:  # the variant's name is free, or its own
                check_name_free(s, spec.display_name, spec.hash)
        else:
            row = find_config(engine, name)
            if row.provider == "simulated":
                out.print(f"{name}: simulated demo judge, not run (its judgments are stored)")
                continue
            spec = spec_from_row(row)
        plan = plan_judging(engine, spec, Filters(items=tuple(items)))
        d = dry_run(plan, table.for_server(spec.provider, base_url))
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
                             prices=table.for_server(spec.provider, base_url),
                             show_progress=sys.stdout.isatty())
        print_run_stats(stats, label=spec.display_name)


def calibrate_cmd(
    ctx: typer.Context,
    configs: Annotated[list[str] | None, typer.Option(
        "--configs", help="Judge configurations by name (comma-separated or repeated), two "
        "or more to compare; metric configurations (h2h metrics run) too, placed beside them "
        "by correlation.")] = None,
    db: data_cli.DbOption = None,
    sample: Annotated[int | None, typer.Option(help="Use a seeded sample of this many "
                                               "human-rated items.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample and of the bootstrap.",
                                      callback=check_seed)] = 0,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples B.",
                                           callback=check_bootstrap)] = 1000,
    alt_epsilon: Annotated[float, typer.Option("--alt-epsilon")] = 0.2,
    margin: Annotated[float, typer.Option("--margin", help="Non-inferiority margin on QWK: a "
                                          "judge may be this much below the human ceiling "
                                          "and still replace a human.")] = 0.05,
    run: Annotated[bool, typer.Option("--run", help="First judge the calibration items with "
                                      "each stored configuration (cost estimate shown).")]
    = False,
    yes: Annotated[bool, typer.Option("--yes", help="With --run, do not ask before paying.")]
    = False,
    base_url: Annotated[str | None, typer.Option("--base-url", help="With --run, the "
                                                 "provider's server URL.")] = None,
    prices: Annotated[Path | None, typer.Option(help="Price table TOML (default: the bundled "
                                                "one, or $H2H_PRICES).")] = None,
    rubric_language: Annotated[str | None, typer.Option(
        "--rubric-language", help="Also compare each judge configuration with the rubric "
        "shown in this language: en, zh, or item (each item's own language). The variant is "
        "a configuration of its own, <name>-rubric-<language>, judged with --run.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")]
    = False,
) -> None:
    """Which judge configuration can stand in for the human raters, per dimension?

    Paired item bootstrap of QWK, alpha with the judge and MAE between configurations (Holm
    across dimensions) and against the human ceiling, the alternative annotator test, bias
    diagnostics, and per configuration the verdict: can replace a human rater, cannot, or not
    enough evidence yet (with the items needed). Reference-based metrics named in --configs are
    compared by Spearman, Kendall tau-b and Pearson correlation with the same humans, beside
    the judges and the ceiling (QWK does not apply to their continuous scores); with metrics,
    --json gives {"judges": ..., "metrics": ...}.

    Example: h2h calibrate --configs sonnet-v1,sonnet-v2,bleu --run --sample 200 --seed 1

    `h2h calibrate auto` improves a configuration from the study's own ratings and reports it
    on held-out items; `h2h calibrate drift` checks whether a judge changed under its name.
    """
    if ctx.invoked_subcommand is not None:
        return
    from analysis.options import AnalysisOptions
    from annotate.services.calibration import (
        calibration_items,
        compare_configs,
        compare_metrics,
        split_names,
    )
    from annotate.services.calibration import config_names as cal_config_names
    from data.engine import get_engine

    names = [c.strip() for v in configs or [] for c in v.split(",") if c.strip()]
    if not names:
        raise H2HError("--configs: name at least one judge configuration (or run `h2h "
                       "calibrate auto` or `h2h calibrate drift`)")
    if bootstrap < 0 or margin < 0:
        raise H2HError("--bootstrap and --margin must be 0 or more")
    engine = get_engine(db)
    judge_names, metric_names = split_names(engine, names)
    variants = _language_variants(engine, judge_names, rubric_language) \
        if rubric_language is not None else {}
    if variants and not run:
        stored = set(cal_config_names(engine))
        absent = [v for v in variants if v not in stored]
        if absent:
            raise H2HError(f"--rubric-language: {', '.join(absent)} has not been judged yet; "
                           "add --run to judge the calibration items with it")
    judge_names = list(dict.fromkeys(judge_names + list(variants)))
    items = calibration_items(engine, sample, seed)
    say = Console(stderr=True, highlight=False, soft_wrap=True) if as_json else out
    say.print(f"Calibration set: {len(items)} human-rated items"
              + (f" (seeded sample, seed {seed})" if sample else ""))
    if run and judge_names:
        _run_configs(engine, judge_names, items, base_url=base_url, yes=yes, prices=prices,
                     variants=variants)
    opts = AnalysisOptions(B=bootstrap, seed=seed, margin=margin, alt_epsilon=alt_epsilon)
    res = compare_configs(engine, judge_names, items=items, options=opts) if judge_names \
        else {}
    mres = compare_metrics(engine, metric_names, judge_names, items=items, options=opts) \
        if metric_names else None
    if as_json:
        judges = {dim: r.to_dict() for dim, r in res.items()}
        doc = judges if mres is None else {"judges": judges, "metrics": mres.to_dict()}
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        return
    if not res and judge_names:
        out.print("No dimension has judgments from these configurations and ratings from two "
                  "or more humans.")
    for dim, r in res.items():
        _print_dimension(dim, r)
    if mres is not None:
        from analysis.refmetrics.cli_tables import print_metric_tables

        out.print()
        print_metric_tables(mres, out)


def _ci(x: Interval | None, signed: bool = False) -> str:
    if x is None or x.value is None:
        return "not estimable"
    f = (lambda v: f"{v:+.3f}") if signed else _f
    ci = "" if x.low is None else f" [{f(x.low)}, {f(x.high)}]"
    return f(x.value) + ci


def _print_dimension(dim: str, r: DimensionCalibration) -> None:
    t = Table(title=f"{dim}: {r.n_items} items ({r.items}), paired bootstrap B={r.B}, "
                    f"seed={r.seed}, margin {r.margin:g}", title_justify="left")
    for col in ("configuration", "items", "QWK [95% CI]", "judge − ceiling [95% CI]",
                "α with judge (on items)", "MAE / bias", "alt-test", "verdict", "unscored"):
        t.add_column(col, no_wrap=col != "verdict", min_width=12 if col == "verdict" else None)
    for name, c in r.configs.items():
        unscored = f"{c.n_unscored} of {c.n_judgments}"
        short = c.verdict.phrase.replace(" a human rater", "").replace(" human-rated", "")
        if c.status != "ok":
            t.add_row(name, "0", c.status, "", "", "", "", short, unscored)
            continue
        passed = c.alt_test.passed if c.alt_test is not None else None
        diff = c.vs_ceiling.diff if c.vs_ceiling is not None else None
        if c.verdict_n_items not in (None, c.n_items):
            # judge − ceiling, the alt-test and the verdict: on all the items it scored
            short = f"{short} (on {c.verdict_n_items} items)"
        t.add_row(name, str(c.n_items), _ci(c.qwk), _ci(diff, signed=True),
                  f"{_f(c.alpha_with_judge.value)} on {r.n_items}",
                  f"{_f(c.mae.value)} / {_f(c.bias)}",
                  {True: "pass", False: "fail"}.get(passed, "not run"), short, unscored)
    hc = r.human_ceiling
    t.add_row("[dim]human ceiling[/dim]", str(hc.n_items if hc.n_items is not None else ""),
              _ci(hc.qwk), "", _f(hc.alpha_humans), _f(hc.mae), "", "", "")
    out.print(t)
    out.print("  [dim]QWK and MAE: each score against the mean of the other humans on the same "
              "item, pooled over (human, item) pairs, for the judges and the humans alike; "
              "square brackets are 95% CIs from the same item resamples. α with judge: the "
              "judge as one more rater on these items (h2h analyze: on every item a human "
              "rated). judge − ceiling, "
              "alt-test and verdict: on all the items the configuration scored (its verdict "
              "in h2h analyze), with their count when that is not the items compared.[/dim]")
    for n in r.notes:
        out.print(f"  [dim]note: {n}[/dim]")
    for p in r.pairs:
        out.print(f"  {p.a} − {p.b} {p.metric}: {_f(p.diff)} [{_f(p.low)}, {_f(p.high)}], "
                  f"Holm p = {_f(p.p_holm)}")
    out.print(f"  [bold]{r.verdict.text}[/bold]")
    for name, c in r.configs.items():
        if name != r.verdict.best:
            out.print(f"  {name}: {c.verdict.text}")
    for c in r.verdict.caveats:
        out.print(f"  note: {c}")


calibrate_app = typer.Typer(no_args_is_help=True, add_completion=False)
calibrate_app.callback(invoke_without_command=True)(calibrate_cmd)


def _register_subcommands() -> None:
    from annotate.autocal_cli import auto_cmd
    from annotate.drift_cli import drift_cmd

    calibrate_app.command("auto")(auto_cmd)
    calibrate_app.command("drift")(drift_cmd)


_register_subcommands()
