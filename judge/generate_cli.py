"""`h2h generate`: companion responses for the study's scenarios, with and without the Secure
Attachment Persona (mounted on the root command by :func:`judge.cli.register`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from data.cli import DbOption
from data.errors import H2HError

from .cli_common import (
    BackoffOpt,
    BaseUrlOpt,
    ConcurrencyOpt,
    DryOpt,
    KeyEnvOpt,
    ModelFileOpt,
    PricesOpt,
    ProviderOpt,
    QuietOpt,
    RetriesOpt,
    RpmOpt,
    ShowOpt,
    TempOpt,
    TimeoutOpt,
    TpmOpt,
    concurrency_for,
    csv_list,
    out,
    print_request,
    print_run_stats,
    run_options,
)

__all__ = ["generate"]


def generate(
    db: DbOption = None,
    provider: ProviderOpt = None,
    model: Annotated[list[str] | None, typer.Option(help="Model to generate with (repeat for "
                                                    "several).")] = None,
    name: Annotated[str | None, typer.Option(help="Name written as the items' model (one "
                                             "--model only; default: the model).")] = None,
    conditions: Annotated[str, typer.Option(help="sap, baseline, or both "
                                            "(comma-separated).")] = "sap,baseline",
    scenarios: Annotated[Path | None, typer.Option(help="Scenario JSONL (default: the study's "
                                                   "own scenarios).")] = None,
    only: Annotated[list[str] | None, typer.Option(help="Only these scenario ids.")] = None,
    task: Annotated[str | None, typer.Option(help="Only scenarios of this task family.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many scenarios.")] = None,
    templates: Annotated[Path | None, typer.Option(help="Folder with generate_<task>.toml "
                                                   "overrides.")] = None,
    protocol: Annotated[str, typer.Option(help="default, or h2htalk: the H2HTalk benchmark's "
                                          "reply format (1-2 short sentences, at most 30 "
                                          "Chinese characters or about 25 words, actions in "
                                          "parentheses; persona, memories, schedule and "
                                          "outfit), recorded in each item's metadata.")]
    = "default",
    sap: Annotated[Path | None, typer.Option(help="SAP system prompt file (default: "
                                             "data/prompts/sap.txt).")] = None,
    temperature: TempOpt = None,
    max_tokens: Annotated[int, typer.Option(help="Longest response in tokens.")] = 1024,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    model_file: ModelFileOpt = None,
    concurrency: ConcurrencyOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_retries: RetriesOpt = 6,
    timeout: TimeoutOpt = 120.0,
    backoff: BackoffOpt = 1.0,
    dry: DryOpt = False,
    show: ShowOpt = 1,
    prices: PricesOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Generate companion responses for the study's scenarios, with and without the Secure
    Attachment Persona; each becomes an item <scenario>-<model>-<condition>.

    Resumable: what was generated is never asked again. With --protocol h2htalk the items are
    <scenario>-<model>-<condition>-h2htalk, so both protocols can stand side by side.

    Example: h2h generate --provider anthropic --model claude-haiku-4-5 --db pilot.db
    Example: h2h generate --provider anthropic --model claude-haiku-4-5 --protocol h2htalk
    """
    from data.engine import get_engine
    from data.study import current_rubric

    from .generate import GenSpec, dry_run_generation, plan_generation, run_generation
    from .prices import load_prices
    from .progress import format_usd
    from .prompts import load_generation_templates, load_sap
    from .providers import make_provider
    from .resolve import local_model
    from .scenarios import read_scenarios, select_scenarios, study_scenarios
    engine = get_engine(db)
    rubric = current_rubric(engine)
    models = csv_list(model)
    if provider is None or (not models and provider != "local"):
        raise H2HError("give --provider and at least one --model")
    if name is not None and len(models) > 1:
        raise H2HError("--name names one model; with several --model options leave it out")
    conds = csv_list([conditions])
    tmpl = load_generation_templates(templates, protocol)
    sap_text = load_sap(sap)
    if provider == "local":
        if model_file is not None and len(models) > 1:
            raise H2HError("--model-file runs one model; give one --model (its name) or none")
        local = [local_model(m, model_file) for m in (models or [None])]
        specs = [GenSpec(provider, lm.name, tmpl, sap_text, temperature, max_tokens, name,
                         model_digest=lm.digest, model_file=str(lm.path), protocol=protocol)
                 for lm in local]
    else:
        if model_file is not None:
            raise H2HError("--model-file goes with --provider local (a GGUF model run in this "
                           "process)")
        specs = [GenSpec(provider, m, tmpl, sap_text, temperature, max_tokens, name,
                         protocol=protocol) for m in models]
    pool = read_scenarios(scenarios, rubric.tasks) if scenarios else study_scenarios(engine)
    chosen = select_scenarios(pool, ids=csv_list(only), task=task, limit=limit)
    if not chosen:
        raise H2HError("no scenarios to generate for (import items or pass --scenarios FILE)")
    plan = plan_generation(engine, specs, chosen, conds)
    out.print(f"{plan.total} responses in scope ({len(chosen)} scenarios × {len(specs)} "
              f"model(s) × {len(conds)} condition(s)): {plan.done} already generated, "
              f"{len(plan.units)} to generate")
    table = load_prices(prices).for_server(provider, base_url)
    if dry:
        d = dry_run_generation(plan, table, show=show)
        for label, req in d.prompts:
            print_request(label, req)
        shown = format_usd(d.cost) if d.cost is not None else \
            f"unknown (a model has no price in {table.source})"
        out.print(f"Dry run: {d.calls} calls, about {d.input_tokens:,} input and "
                  f"{d.output_tokens:,} output tokens; estimated cost {shown}. Nothing was "
                  "sent.")
        return
    if not plan.units:
        out.print("Nothing to generate: every response in scope exists. No request was made.")
        return
    n_calls, why = concurrency_for(concurrency, provider, base_url)
    out.print(f"Concurrency {n_calls} ({why})")
    prov = make_provider(provider, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                         concurrency=n_calls)
    stats = run_generation(engine, plan, prov, prices=table,
                           options=run_options(n_calls, rpm, tpm, max_retries, backoff),
                           show_progress=not quiet)
    print_run_stats(stats, what="responses")
