"""The metrics comparison as terminal tables (`h2h analyze`, `h2h calibrate`)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..serialize import Interval
from .results import MetricComparison, MetricRow

__all__ = ["print_metric_tables", "ci_text", "READING"]

NE = "not estimable"
READING = ("Reading: each row's scores against the mean of the other humans on the same item, "
           "pooled over (human, item) pairs, on the same items for every row; the human "
           "ceiling is the humans' own agreement with that consensus. Square brackets: {lv} "
           "percentile CIs from one item bootstrap (B={B}, seed={seed}) shared by every row "
           "(for Kendall's tau-b and Pearson's r too: see --json or the report); 'ρ − ceiling' "
           "is the paired difference of Spearman's rho. Models: Kendall's tau-b "
           "between the row's and the humans' model rankings, and the share of model pairs "
           "ordered as the humans order them, with a scenario bootstrap. QWK, alpha and exact "
           "agreement are not computed for metrics: their scores are continuous and not on "
           "the rubric's scale.")


def ci_text(v: Interval | None, signed: bool = False) -> str:
    if v is None or v.value is None:
        return NE
    f = (lambda x: f"{x:+.3f}") if signed else (lambda x: f"{x:.3f}")
    ci = "" if v.low is None else f" [{f(v.low)}, {f(v.high)}]"
    return f(v.value) + ci


def _point(v: Interval | None) -> str:
    return NE if v is None or v.value is None else f"{v.value:.3f}"


def _label(row: MetricRow) -> str:
    kind = {"ceiling": "", "judge": " (judge)", "metric": " (metric)"}[row.kind]
    return escape(row.name) + kind


def print_metric_tables(block: MetricComparison, out: Console, *, level: float = 0.95) -> None:
    """One table per dimension: the human ceiling, each judge and each metric."""
    if not block.dimensions:
        out.print("No dimension has ratings from two or more humans to hold the metrics "
                  "against.")
    B = seed = None
    for dim, d in block.dimensions.items():
        B, seed = d.B, d.seed
        title = (f"Do the benchmark's metrics agree with the psychologists? {escape(dim)}: "
                 f"{d.n_items} items ({d.n_pairs} human-item pairs)")
        t = Table(title=title, title_justify="left")
        t.add_column("")
        for col in ("Spearman ρ", "ρ − ceiling", "τ-b", "r", "models: τ-b",
                    "model pairs right"):
            t.add_column(col, no_wrap=True)
        sysrows = d.system.rows if d.system else {}
        for row in d.rows:
            if row.status != "ok":
                t.add_row(_label(row), row.status, "", "", "", "", "")
                continue
            sy = sysrows.get(row.name)
            t.add_row(_label(row), ci_text(row.spearman),
                      ci_text((row.minus_ceiling or {}).get("spearman"), signed=True)
                      if row.kind != "ceiling" else "",
                      _point(row.kendall_tau_b), _point(row.pearson),
                      ci_text(sy.kendall_tau_b) if sy else "",
                      ci_text(sy.pairwise_accuracy) if sy else "")
        out.print(t)
        notes = list(d.notes)
        if s := d.system:
            means = ", ".join(f"{escape(m)} {v:.2f}" for m, v in s.human_means.items())
            out.print(f"  [dim]models ({s.n_models}, {s.n_scenarios} scenarios, "
                      f"{s.n_items} items); the humans' means: {means}[/dim]")
            notes += s.notes
        for n in notes:
            out.print(f"  [dim]note: {escape(n)}[/dim]")
    if B is not None:
        out.print(f"[dim]{READING.format(lv=f'{level:.0%}', B=B, seed=seed)}[/dim]")
    for n in block.notes:
        out.print(f"[dim]note: {escape(n)}[/dim]")
    for c in block.configurations:
        if "library" in c:
            langs = ", ".join(f"{v} {'Chinese' if k == 'zh' else 'English'}"
                              for k, v in sorted(c.get("languages", {}).items()))
            out.print(escape(f"  {c['name']}: {c['library']} {c['library_version']}, "
                             + ", ".join(f"{k} {v}" for k, v in c['settings'].items())
                             + (f"; {langs}" if langs else "")), style="dim")
