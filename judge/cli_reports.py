"""`h2h judge cost|export|configs`: what was run, what it cost, and the judgments as CSV
(registered on the ``judge`` command by :mod:`judge.cli`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from data.cli import DbOption
from data.errors import H2HError

from .cli_common import csv_list, out

__all__ = ["cost_cmd", "export_cmd", "configs_cmd"]


def _duration(seconds: float) -> str:
    """``—`` when nothing was timed (batches, calls before wall times were recorded)."""
    if not seconds:
        return "—"
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s" if m else f"{seconds:.1f} s"


def cost_cmd(
    db: DbOption = None,
    config: Annotated[list[str] | None, typer.Option(help="Only these configurations.")] = None,
) -> None:
    """What each judge and generator cost: calls, retries, tokens (with cache) and USD.

    Example: h2h judge cost --db pilot.db
    """
    from data.engine import get_engine
    from data.study import current_rubric

    from .progress import format_usd
    from .reports import cost_summary
    from .store import find_config

    engine = get_engine(db)
    current_rubric(engine)
    hashes = [find_config(engine, c).hash for c in csv_list(config)] or None
    lines = cost_summary(engine, hashes)
    if not lines:
        out.print("No calls recorded yet.")
        return
    t = Table()
    for col in ("configuration", "kind", "model", "calls", "batch", "failed attempts", "input",
                "output", "cache write", "cache read", "wall time", "cost (USD)"):
        t.add_column(col, overflow="fold")  # a long name is folded, never elided
    total = 0.0
    unpriced = 0
    for ln in lines:
        total += ln.cost
        unpriced += ln.unpriced_calls
        cost = format_usd(ln.cost, bool(ln.unpriced_calls)) if ln.calls > ln.unpriced_calls \
            else "—"
        t.add_row(f"{ln.name} ({ln.config_hash[:8]})", ln.kind, f"{ln.provider} {ln.model}",
                  str(ln.calls), str(ln.batch_calls), str(ln.failed_attempts),
                  f"{ln.input_tokens:,}", f"{ln.output_tokens:,}", f"{ln.cache_write_tokens:,}",
                  f"{ln.cache_read_tokens:,}", _duration(ln.seconds), cost)
    out.print(t)
    out.print("wall time: how long calls were in flight (calls made at the same time count "
              "once; — for batches and calls from before wall times were recorded)")
    out.print(f"Total: {format_usd(total)}"
              + (f" plus {unpriced} calls without a price (add their model to the price "
                 "table)" if unpriced else ""))


def export_cmd(
    db: DbOption = None,
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="Output CSV (default: "
                                                  "standard output).")] = None,
    config: Annotated[list[str] | None, typer.Option(help="Only these configurations.")] = None,
    label: Annotated[str, typer.Option(help="Name judges by configuration 'name' or "
                                       "'hash'.")] = "name",
) -> None:
    """Write the judges CSV (item_id, judge, dimension, score, sample, ...) for `h2h analyze`.

    Unscored judgments are kept with an empty score and their reason.

    Example: h2h judge export --db pilot.db --out judges.csv
    """
    from data.engine import get_engine
    from data.outfiles import check_out_file, write_out_text
    from data.study import current_rubric

    from .reports import export_judgments_csv
    from .store import find_config

    if label not in ("name", "hash"):
        raise H2HError(f"--label: '{label}' is not name or hash")
    if out_file is not None:
        check_out_file(out_file, example="judges.csv")
    engine = get_engine(db)
    current_rubric(engine)
    hashes = [find_config(engine, c).hash for c in csv_list(config)] or None
    text, n, unscored = export_judgments_csv(engine, hashes, label=label)
    if out_file is None:
        sys.stdout.write(text)
        return
    write_out_text(out_file, text)
    out.print(f"Wrote {n} judgments ({unscored} unscored) to {out_file}")


def configs_cmd(db: DbOption = None) -> None:
    """List the judge configurations with their judgment counts.

    Example: h2h judge configs --db pilot.db
    """
    from data.engine import get_engine
    from data.study import current_rubric

    from .store import list_configs

    engine = get_engine(db)
    current_rubric(engine)
    rows = list_configs(engine)
    if not rows:
        out.print("No judge configurations yet; start one with `h2h judge run`.")
        return
    made = _provenance(engine, {r["row"].hash: r["row"].name for r in rows})
    t = Table()
    for col in ("name", "hash", "provider / model", "template", "mode", "rubric", "output",
                "sampling", "exemplars", "items", "scored", "unscored", "request failures"):
        # a configuration's name and hash are what every other command takes: never cut
        t.add_column(col, no_wrap=col in ("name", "hash"), overflow="fold")
    for r in rows:
        c = r["row"]
        mode = c.mode + (", reason-first" if c.reason_first else "")
        form = c.output_form or ("text" if not c.structured else "—")
        temp = "provider's" if c.temperature is None else f"{c.temperature:g}"
        sampling = f"{temp} × {c.samples}"
        if c.provider == "imported":  # scored elsewhere: no prompt, output form or sampling
            mode, form, sampling = "—", "—", f"{c.samples} sample(s) in the file" \
                if c.samples > 1 else "—"
        t.add_row(c.name, c.hash[:8], f"{c.provider} {c.model}", c.template_name, mode,
                  c.rubric_language or "as written", form, sampling,
                  _exemplar_count(c.exemplars), str(r["items"]),
                  str(r["scored"]), str(r["unscored"]), str(r["request_failed"]))
    out.print(t)
    out.print("rubric: the language the prompt shows the rubric in (--rubric-language: en, "
              "zh, or item for each item's own; as written: the rubric's own language). "
              "output: the structured-output form the server took (json_schema, json_object "
              "with the schema, tools, grammar for a local model, or text read by the tolerant "
              "parser); — until a run has settled it. sampling: temperature × samples per item "
              "(provider's: none sent, stored before h2htalk fixed it). exemplars: "
              "human-scored items in the prompt "
              "(h2h calibrate auto), left out of every comparison of that judge with the "
              "humans.")
    for line in made:
        out.print(line)


def _exemplar_count(doc: dict | None) -> str:
    if not doc:
        return "—"
    ids = {i for v in (doc.get("by_dimension") or {}).values() for i in v}
    return f"{len(ids)}"


def _fmt(d: dict, key: str = "qwk") -> str:
    if d.get(key) is None:
        return "not estimable"
    ci = "" if d.get("low") is None else f" [{d['low']:.3f}, {d['high']:.3f}]"
    return f"{d[key]:.3f}{ci}"


def _provenance(engine, names: dict[str, str]) -> list[str]:
    """A line per configuration made by `h2h calibrate auto`: its base, exemplar items, split
    seed and held-out result; and which configurations were only its candidates."""
    from data.calibration import search_candidates, searches

    lines = []
    for row in searches(engine):
        test = row.test
        ids = row.settings.get("exemplar_items") or []
        name = names.get(row.config_hash, row.config_hash[:8])
        lines.append(
            f"{name}: made by `h2h calibrate auto` (search {row.id}, {row.selected}) from "
            f"{names.get(row.base_hash, row.base_hash[:8])}, split seed "
            f"{row.settings.get('split_seed')}; exemplar items ({len(ids)}): "
            f"{', '.join(ids) if ids else 'none'}; held out on {test.get('n_items')} test "
            f"items: mean QWK {_fmt(test['selected'])} against the base's "
            f"{_fmt(test['base'])}, Δ {_fmt(test['delta'], 'diff')}")
    cands = sorted(names[h] for h in search_candidates(engine) if h in names)
    if cands:
        lines.append(f"Candidates of a search, judged on its dev part only (left out of `h2h "
                     f"analyze` and the report): {', '.join(cands)}")
    return lines
