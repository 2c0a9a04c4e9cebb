"""`h2h calibrate auto`: improve a judge configuration from the study's own human ratings
(few-shot exemplars from the train part, reason-first, self-consistency), choose on dev, and
report the result on the test part, once. The steps are :mod:`annotate.services.autocal`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from data import cli as data_cli
from data.cli import check_bootstrap, check_seed
from data.errors import H2HError

if TYPE_CHECKING:
    from annotate.services.autocal import Candidate, Outcome, Search
    from judge.calls import RunOptions
    from judge.judging import JudgePlan
    from judge.prices import PriceTable

__all__ = ["auto_cmd"]

out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)


def _numbers(text: str, what: str) -> tuple[int, ...]:
    try:
        vals = tuple(dict.fromkeys(int(p) for p in text.split(",") if p.strip()))
    except ValueError:
        raise H2HError(f"{what}: '{text}' is not a list of whole numbers (e.g. 0,2,4,8)") \
            from None
    if not vals:
        raise H2HError(f"{what}: give at least one number")
    return vals


def _switches(text: str) -> tuple[bool, ...]:
    words = {"off": False, "on": True, "both": None}
    got = [w.strip() for w in text.split(",") if w.strip()]
    if not got or any(w not in words for w in got):
        raise H2HError(f"--reason-first: '{text}' is not off, on or both (or off,on)")
    if "both" in got:
        return (False, True)
    return tuple(dict.fromkeys(words[w] for w in got))  # type: ignore[misc]


# --- the base configuration ------------------------------------------------------------------

def _base_spec(engine, base: str | None, provider, model, model_file, mode, max_tokens):
    from judge.resolve import SpecOptions, resolve_spec

    if base is not None:
        from judge.store import find_config

        if find_config(engine, base).provider == "simulated":
            raise H2HError(f"--base: '{base}' is a simulated demo judge, with no model to "
                           "ask; start from a configuration of a real provider, or from "
                           "--provider and --model")
        given = [o for o, v in (("--provider", provider), ("--model", model),
                                ("--model-file", model_file), ("--mode", mode),
                                ("--max-tokens", max_tokens)) if v is not None]
        if given and given != ["--model-file"]:
            raise H2HError(f"--base takes a stored configuration as it is; leave out "
                           f"{', '.join(given)} (or drop --base to start from the provider "
                           "options and the default template)")
        spec, _ = resolve_spec(engine, SpecOptions(config=base, model_file=model_file))
        return spec
    if provider is None:
        raise H2HError("give --base NAME (a stored configuration) or the provider options of "
                       "h2h judge run (--provider, --model, --base-url)")
    spec, _ = resolve_spec(engine, SpecOptions(provider=provider, model=model, mode=mode,
                                               max_tokens=max_tokens, model_file=model_file))
    return spec


# --- cost ------------------------------------------------------------------------------------

def _estimate(search: Search, table: PriceTable) -> tuple[int, int, int, float | None, str]:
    """Calls, input tokens, output tokens (at most) and USD of the whole search: every
    candidate on dev, the base on test, and the costliest candidate on test (the one to be
    selected is not known yet)."""
    from annotate.services.autocal import dev_plans, test_plans
    from judge.run import dry_run

    calls = inp = outp = 0
    cost: float | None = 0.0
    worst = None
    for _c, plan in dev_plans(search):
        d = dry_run(plan, table, show=0)
        calls, inp, outp = calls + d.calls, inp + d.input_tokens, outp + d.output_tokens_max
        cost = None if cost is None or d.cost_max is None else cost + d.cost_max
    for c, plan in test_plans(search, None):
        d = dry_run(plan, table, show=0)
        if c.name == "base":
            calls, inp, outp = calls + d.calls, inp + d.input_tokens, outp + d.output_tokens_max
            cost = None if cost is None or d.cost_max is None else cost + d.cost_max
        elif worst is None or d.input_tokens + d.output_tokens_max > worst[1] + worst[2]:
            worst = (d.calls, d.input_tokens, d.output_tokens_max, d.cost_max, c.name)
    note = ""
    if worst is not None:
        calls, inp, outp = calls + worst[0], inp + worst[1], outp + worst[2]
        cost = None if cost is None or worst[3] is None else cost + worst[3]
        note = f" (the test part counted with the costliest candidate, {worst[4]})"
    return calls, inp, outp, cost, note


# --- running ---------------------------------------------------------------------------------

class _Spender:
    """Money spent by this run, and the budget that stops it."""

    def __init__(self, budget: float | None):
        self.budget, self.spent, self.reached = budget, 0.0, False

    def stop(self, stats) -> bool:
        if self.budget is None:
            return False
        self.reached = self.spent + stats.cost >= self.budget
        return self.reached


def _run_plans(engine, plans: list[tuple[Candidate, JudgePlan]], make, table: PriceTable,
               options: RunOptions, spender: _Spender, con: Console, batch: dict | None
               ) -> bool:
    """Judge what the plans still lack; True when everything is stored (False: waiting in
    batches)."""
    from judge.cli_common import print_run_stats
    from judge.run import run_judge

    if batch is not None:
        todo = [(c, p) for c, p in plans if p.units or p.in_batches]
        return _run_batches(engine, todo, make, table, options, con.print, **batch)
    waiting = sum(p.in_batches for _, p in plans)
    if waiting:
        raise H2HError(f"{waiting} judgments of this search wait in Message Batches: store "
                       "them with `h2h judge collect` (or run the search with --batch "
                       "--wait), then run it again")
    for c, plan in [(c, p) for c, p in plans if p.units]:
        if spender.reached:
            break
        _, stats = run_judge(engine, plan.spec, make(plan.spec), filters=_filters(plan),
                             options=options, prices=table, show_progress=False)
        spender.spent += stats.cost
        if stats.planned:
            print_run_stats(stats, label=f"{c.name} ({plan.spec.display_name})", console=con)
    if spender.reached:
        from judge.progress import format_usd
        raise H2HError(f"stopped at the budget: {format_usd(spender.spent)} spent of "
                       f"--budget {format_usd(spender.budget)}; what was judged is stored. "
                       "Run the same command with a larger --budget to continue (nothing "
                       "stored is asked again).")
    return True


def _filters(plan: JudgePlan):
    """The plan's own items and dimensions (never empty: only plans with units run)."""
    from judge.judging import Filters

    dims = tuple(dict.fromkeys(d for u in plan.units for d in u.ask))
    return Filters(items=tuple(sorted({u.item_id for u in plan.units})), dimensions=dims)


def _run_batches(engine, todo, make, table, options, say, wait: bool, poll: float) -> bool:
    from judge.batches import collect_batches, open_batches, submit_batches
    from judge.run import run_async

    async def go() -> bool:
        for _c, plan in todo:
            if plan.units:
                prov = make(plan.spec)
                try:
                    await submit_batches(engine, plan, prov, table, options, say=say)
                finally:
                    await prov.aclose()
        hashes = {p.spec.hash for _, p in todo}
        if not any(open_batches(engine, h) for h in hashes):
            return True
        if not wait:
            return False
        prov = make(todo[0][1].spec)
        try:
            for h in hashes:
                await collect_batches(engine, prov, table, config_hash=h, wait=True,
                                      poll=poll, options=options, say=say)
        finally:
            await prov.aclose()
        return True

    return run_async(go())


# --- printing --------------------------------------------------------------------------------

def _f(x, signed: bool = False) -> str:
    if x is None:
        return "—"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def _ci(d: dict, key: str = "qwk", signed: bool = False) -> str:
    if d.get(key) is None:
        return "not estimable"
    lo, hi = d.get("low"), d.get("high")
    ci = "" if lo is None else f" [{_f(lo, signed)}, {_f(hi, signed)}]"
    return _f(d[key], signed) + ci


def _print_split(search: Search, say) -> None:
    p = search.parts
    n_sc = {part: sum(1 for v in search.split.parts.values() if v == part)
            for part in ("train", "dev", "test")}
    say(f"Split by scenario (seed {search.split.seed}): train {len(p['train'])} items "
        f"({n_sc['train']} scenarios), dev {len(p['dev'])} ({n_sc['dev']}), test "
        f"{len(p['test'])} ({n_sc['test']}); exemplars come from train only, the choice is "
        "made on dev, test is looked at once.")
    for n in search.notes:
        say(f"Note: {n}")


def _print_candidates(rows: list[dict], selected: str, dims: tuple[str, ...]) -> None:
    t = Table(title="Candidates on the dev part (in-sample for the choice: the best of many "
                    "is flattered; the result is the test part below)", title_justify="left")
    for col in ("candidate", "items", "mean QWK [95% CI]", "− base [95% CI]", *dims):
        t.add_column(col, no_wrap=True)
    for r in rows:
        dev = r["dev"]
        mark = " ←" if r["name"] == selected else ""
        t.add_row(r["name"] + mark, str(dev["n_items"]), _ci(dev["mean_qwk"]),
                  _ci(dev["vs_base"], "diff", signed=True),
                  *(_f(dev["dimensions"][d]["qwk"]["qwk"]) if d in dev["dimensions"]
                    else "—" for d in dims))
    out.print(t)


def _print_test(o: Outcome, base_name: str) -> None:
    test = o.test.to_dict()
    t = Table(title=f"Held out: {o.config} against its base {base_name} on the test part "
                    f"({test['n_items']} items never used to choose anything; paired item "
                    f"bootstrap B={test['B']}, seed {test['seed']}; Holm across dimensions)",
              title_justify="left")
    for col in ("dimension", "items", "base QWK [95% CI]", "selected QWK [95% CI]",
                "Δ [95% CI]", "Holm p"):
        t.add_column(col, no_wrap=True)
    for dim, d in test["dimensions"].items():
        t.add_row(dim, str(d["n_items"]), _ci(d["base"]), _ci(d["selected"]),
                  _ci(d["delta"], "diff", signed=True), _f(d["delta"].get("p_holm")))
    t.add_row("[bold]mean[/bold]", str(test["n_items"]), _ci(test["base"]),
              _ci(test["selected"]), _ci(test["delta"], "diff", signed=True), "")
    out.print(t)


def _doc(search: Search, o: Outcome) -> dict:
    """The --json document (the contract of docs/judges.md)."""
    spec = next(c.spec for c in search.candidates if c.name == o.selected)
    return {"split": {p: list(search.parts[p]) for p in ("train", "dev", "test")},
            "candidates": o.candidates, "selected": o.selected, "test": o.test.to_dict(),
            "configuration": {"name": o.config, "hash": o.config_hash,
                              "base": search.base.display_name,
                              "exemplar_items": sorted(spec.exemplars.item_ids)
                              if spec.exemplars else [],
                              "split_seed": search.split.seed, "search": o.search_id},
            "seed": search.options.seed, "dimensions": list(search.dims),
            "earlier_selections_on_this_test_part": o.earlier_looks,
            "notes": list(search.notes)}


def _dry_doc(search: Search, calls: int, inp: int, outp: int, cost: float | None,
             note: str) -> dict:
    """The --json document of --dry-run: the split and what the search would cost."""
    return {"dry_run": True,
            "split": {p: list(search.parts[p]) for p in ("train", "dev", "test")},
            "candidates": [c.name for c in search.candidates],
            "calls": calls, "input_tokens": inp, "output_tokens_max": outp,
            "cost_max_usd": cost, "cost_note": note.strip(" ()") or None,
            "seed": search.options.seed, "dimensions": list(search.dims),
            "notes": list(search.notes)}


def _print_outcome(search: Search, o: Outcome) -> None:
    _print_candidates(o.candidates, o.selected, search.dims)
    if o.selected == "base":
        out.print(f"No candidate beat the base on dev: {search.base.display_name} stays; the "
                  "test part below compares it with itself.")
    else:
        out.print(f"Selected on dev: {o.selected}.")
    _print_test(o, search.base.display_name)
    if o.earlier_looks:
        out.print(f"Note: {o.earlier_looks} other configuration(s) were already held against "
                  "this test part by earlier searches: with each look the held-out figure is "
                  "a little less of a single, unchosen test.")
    spec = search.candidate(o.selected).spec
    if spec.exemplars:
        out.print(f"Stored as '{o.config}' ({o.config_hash[:8]}): `h2h judge run --config "
                  f"{o.config}` judges the rest of the study. Its "
                  f"{len(spec.exemplars.item_ids)} exemplar items are in its prompt and are "
                  "left out of every comparison of it with the humans; `h2h judge configs` "
                  "lists them.")


# --- the command ------------------------------------------------------------------------------

def auto_cmd(
    db: data_cli.DbOption = None,
    base: Annotated[str | None, typer.Option(help="The stored judge configuration to improve "
                                             "(by name or hash).")] = None,
    provider: Annotated[str | None, typer.Option(help="Without --base: the provider, as for "
                                                 "h2h judge run (the default template is "
                                                 "the base).")] = None,
    model: Annotated[str | None, typer.Option(help="Without --base: the model.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The provider's server "
                                                 "URL.")] = None,
    model_file: Annotated[Path | None, typer.Option("--model-file", help="--provider local: "
                                                    "the GGUF file.")] = None,
    api_key_env: Annotated[str | None, typer.Option("--api-key-env")] = None,
    mode: Annotated[str | None, typer.Option(help="Without --base: per-dimension or all.")]
    = None,
    max_tokens: Annotated[int | None, typer.Option(help="Without --base: longest answer.")]
    = None,
    name: Annotated[str | None, typer.Option(help="Name of the improved configuration "
                                             "(default: <base>-auto).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the split (made once per study), the "
                                      "exemplars and the bootstrap.", callback=check_seed)] = 0,
    shots: Annotated[str, typer.Option(help="Numbers of exemplars to try.")] = "0,2,4,8",
    exemplars: Annotated[str, typer.Option(help="How exemplars are chosen: cover (every "
                                           "score level and task family, by rule), similar "
                                           "(the most similar to the item), or both.")]
    = "cover",
    reason_first: Annotated[str, typer.Option("--reason-first", help="off, on or both.")]
    = "both",
    samples: Annotated[str, typer.Option(help="Samples per item to try (their median; "
                                         "self-consistency).")] = "1,3",
    sampling_temperature: Annotated[float, typer.Option(
        "--sampling-temperature", help="Temperature of candidates with several samples "
        "when the base samples at 0.")] = 0.7,
    dimensions: Annotated[str | None, typer.Option(help="Only these dimensions "
                                                   "(comma-separated).")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples B.",
                                           callback=check_bootstrap)]
    = 1000,
    budget: Annotated[float | None, typer.Option(help="Stop the search when this many USD "
                                                 "are spent.")] = None,
    dry: Annotated[bool, typer.Option("--dry-run", help="Print calls, tokens and USD of the "
                                      "whole search; send nothing, store nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask before paying.")] = False,
    batch: Annotated[bool, typer.Option("--batch", help="Anthropic Message Batches (half "
                                        "price); run again after they end.")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="With --batch, wait for the batches.")]
    = False,
    poll: Annotated[float, typer.Option(help="With --wait, seconds between checks.")] = 60.0,
    concurrency: Annotated[int | None, typer.Option(help="Calls in flight.")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for one reply.")] = 120.0,
    max_retries: Annotated[int, typer.Option("--max-retries")] = 6,
    prices: Annotated[Path | None, typer.Option(help="Price table TOML.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Improve a judge from the study's own human ratings, proven on items it never saw.

    The human-rated items are split by scenario into train, dev and test (seeded, stored in
    the study, made once). Candidates: k exemplars from train (k in --shots), reason-first
    on and off, self-consistency with n samples; chosen on dev by QWK against the
    leave-one-out human consensus (paired bootstrap); the chosen one against the base on
    test, once, with CIs (Holm across dimensions). Every call is stored: a second run asks
    nothing, a killed run continues.

    Example: h2h calibrate auto --base sonnet-v1 --seed 1 --budget 20
    """
    from annotate.services.autocal import (
        SearchOptions,
        choose,
        conclude,
        dev_comparison,
        dev_plans,
        prepare,
        test_plans,
    )
    from data.engine import get_engine
    from judge.cli_common import concurrency_for, csv_list, run_options
    from judge.prices import load_prices
    from judge.progress import format_usd
    from judge.providers import make_provider

    if budget is not None and not budget > 0:  # also NaN
        raise H2HError(f"--budget: {budget:g} is not an amount to spend; give USD above 0")
    engine = get_engine(db)
    spec = _base_spec(engine, base, provider, model, model_file, mode, max_tokens)
    options = SearchOptions(seed=seed, shots=_numbers(shots, "--shots"),
                            reason_first=_switches(reason_first),
                            samples=_numbers(samples, "--samples"),
                            rules=tuple(csv_list([exemplars])), B=bootstrap,
                            sampling_temperature=sampling_temperature,
                            dimensions=csv_list([dimensions] if dimensions else None),
                            name=name)
    con = Console(stderr=True, highlight=False, soft_wrap=True) if as_json else out
    say = con.print
    search = prepare(engine, spec, options, dry=dry)
    _print_split(search, say)
    table = load_prices(prices).for_server(spec.provider, base_url)
    calls, inp, outp, cost, note = _estimate(search, table)
    shown = format_usd(cost) if cost is not None else \
        f"unknown (no price for '{spec.model}' in {table.source})"
    say(f"The search: {len(search.candidates)} candidates on {len(search.parts['dev'])} dev "
        f"items, then the base and the selected one on {len(search.parts['test'])} test "
        f"items: {calls} calls still to make, about {inp:,} input tokens and at most "
        f"{outp:,} output tokens; at most {shown}{note}.")
    if dry:
        say("Dry run: nothing was sent or stored.")
        if as_json:
            sys.stdout.write(json.dumps(_dry_doc(search, calls, inp, outp, cost, note),
                                        indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        return
    if budget is not None and cost is None and calls:
        raise H2HError(f"--budget: '{spec.model}' has no price in {table.source}, so spending "
                       "cannot be counted; add its price (--prices) or drop --budget")
    if calls and not yes:
        if not sys.stdin.isatty():
            raise H2HError(f"the search costs at most {shown}: pass --yes to run it without "
                           "asking")
        if not typer.confirm(f"Run the search for at most {shown}?"):
            raise H2HError("cancelled; nothing was sent")
    n_calls, _ = concurrency_for(concurrency, spec.provider, base_url)
    spender = _Spender(budget)
    opts = run_options(n_calls, None, None, max_retries, 1.0)
    from dataclasses import replace
    opts = replace(opts, stop=spender.stop)

    def make(s):
        return make_provider(s.provider, base_url=base_url, api_key_env=api_key_env,
                             timeout=timeout, structured=s.structured, concurrency=n_calls)

    batches = {"wait": wait, "poll": poll} if batch else None
    if not _run_plans(engine, dev_plans(search), make, table, opts, spender, con, batches):
        say("Submitted; collect with `h2h judge collect` (or pass --wait), then run the same "
            "command again to choose on dev.")
        return
    cmp = dev_comparison(search)
    selected = choose(search, cmp)
    if not _run_plans(engine, test_plans(search, selected), make, table, opts, spender, con,
                      batches):
        say(f"Selected {selected} on dev. Its test batches are submitted; collect them, then "
            "run the same command again for the held-out result.")
        return
    outcome = conclude(search, cmp, selected)
    if as_json:
        sys.stdout.write(json.dumps(_doc(search, outcome), indent=2, ensure_ascii=False,
                                    allow_nan=False) + "\n")
        return
    _print_outcome(search, outcome)
