"""Section "Do the benchmark's metrics agree with psychologists?": the reference-based metrics
(BLEU, chrF, ROUGE-L, embedding similarity; ``h2h metrics run``) beside the LLM judges and the
human ceiling, per dimension. Every number is the analysis JSON's ``metrics`` block; nothing
is recomputed here. Without that block (no metric scores stored) the section is left out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from messages import Msg

from ..refmetrics.results import MetricComparison, MetricDimension, MetricRow, SystemAgreement
from ..serialize import Interval
from .figures import Figure, _base, _cat_axis, _ci_words, _dodge, _err, _legend_height
from .findings import Finding, Glance, SectionOutput, ci3, sim
from .format import dim_labels, dim_order, fmt, fmt_est, is_missing
from .model import ReportBundle
from .paper import Col, Est, Group, PaperTable, best
from .style import OKABE_ITO, SYMBOLS
from .tables import Table

__all__ = ["TITLE", "metrics", "metric_details", "metrics_figure"]

TITLE = "Do the benchmark's metrics agree with psychologists?"


def _row_name(name: str, kind: str, bundle: ReportBundle) -> str:
    if kind == "ceiling":
        return "Human ceiling"
    return sim(name, bundle) if kind == "judge" else name


def _dims(bundle: ReportBundle, m: MetricComparison) -> list[str]:
    return [d for d in dim_order(bundle) if d in m.dimensions]


def _spearman(r: MetricRow | None) -> float | None:
    return r.spearman.value if r is not None else None


def _minus(r: MetricRow) -> Interval | None:
    return (r.minus_ceiling or {}).get("spearman")


def metrics(bundle: ReportBundle) -> SectionOutput | None:
    m = bundle.analysis.metrics
    if not m or not m.dimensions:
        return None
    labels = dim_labels(bundle)
    out = SectionOutput()
    rows: list = []
    B = seed = None
    for d in _dims(bundle, m):
        b = m.dimensions[d]
        B, seed = b.B, b.seed
        out.notes += [f"{labels[d]}: {n}" for n in b.notes]
        ranked = b.system.rows if b.system else {}
        out.notes += [f"{labels[d]}, model rankings: {n}"
                      for n in (b.system.notes if b.system else ())]
        if b.status != "ok" and not any(not is_missing(_spearman(r)) for r in b.rows):
            why = "; ".join(b.notes) or b.status
            out.findings.append(Finding(f"Reference-based metrics: not estimable ({why}).",
                                        "not_estimable", d))
            continue
        rows.append(Group(f"{labels[d]} ({b.n_items} items, {b.n_pairs} pairs)"))
        body = [r for r in b.rows if r.kind != "ceiling"]
        top = best([_spearman(r) for r in body])
        for r in b.rows:
            k = body.index(r) if r in body else None
            tau = ranked[r.name].kendall_tau_b if r.name in ranked else None
            # the ceiling is what Δ and τ compare with: no number of its own there
            rows.append((_row_name(r.name, r.kind, bundle), Est(*ci3(r.spearman), bold=k == top),
                         Est(*ci3(_minus(r))) if r.kind != "ceiling" else "",
                         Est(*ci3(tau)) if r.kind != "ceiling" else ""))
        f, g = _finding(d, b)
        out.findings.append(f)
        if g:
            out.glance.append(g)
    boot = (f"95% percentile CIs from one item bootstrap shared by every row (B = {B}, "
            f"seed = {seed}), so Δ is paired" if B else "no CIs (bootstrap skipped, B = 0)")
    out.tables.append(PaperTable(
        "metrics_vs_humans", TITLE,
        "Each score against the mean of the other humans on the same item, pooled over "
        "(human, item) pairs on the items every row scored: Spearman's ρ of a human (the "
        "ceiling, first), of each LLM judge (then) and of each reference-based metric (last), "
        "and Δ = ρ − ρ(ceiling), "
        f"with {boot}. τ: Kendall's τ-b between the row's and the humans' ranking of the "
        "companion models (CIs from a bootstrap over scenarios; — with fewer than three "
        "models). Metrics are continuous, so κ-type statistics are not computed for them. "
        "Bold: the highest ρ per dimension.",
        (Col("Scorer", "wrap"), Col("ρ"), Col("Δ", signed=True), Col("τ (models)")),
        tuple(rows), csv="metrics_vs_humans"))
    if fig := metrics_figure(bundle):
        out.figures.append(fig)
    out.details += metric_details(bundle)
    return out


def _finding(d: str, b: MetricDimension) -> tuple[Finding, Glance | None]:
    ms = [r for r in b.rows if r.kind == "metric" and not is_missing(_spearman(r))]
    if not ms:
        return Finding("Reference-based metrics: no metric has a correlation on this "
                       "dimension (see the notes).", "not_estimable", d), None
    top = max(ms, key=_spearman)
    cv = b.ceiling.spearman if b.ceiling is not None else None
    diff = _minus(top)
    below = diff is not None and not is_missing(diff.high) and diff.high < 0
    text = (f"The best reference-based metric, {top.name}, correlates with the "
            f"psychologists at ρ = {fmt_est(*ci3(top.spearman))}, against ρ = "
            f"{fmt_est(*ci3(cv))} between one psychologist and the others (difference "
            f"{fmt_est(*ci3(diff), signed=True)}; {b.n_items} items)"
            + ("; it falls short of the human ceiling." if below else "."))
    return (Finding(text, "finding", d),
            Glance(Msg("Best metric (ρ)"), d, Msg("{metric} {rho} vs humans {humans}",
                                                  metric=top.name,
                                                  rho=fmt(top.spearman.value),
                                                  humans=fmt(cv.value if cv else None)),
                   "note"))


def metrics_figure(bundle: ReportBundle) -> Figure | None:
    """Spearman's ρ with its CI per dimension: the human ceiling, each judge, each metric."""
    m = bundle.analysis.metrics
    if m is None:
        return None
    labels = dim_labels(bundle)
    dims = [d for d in _dims(bundle, m)
            if any(not is_missing(_spearman(r)) for r in m.dimensions[d].rows)]
    if not dims:
        return None
    names: list[tuple[str, str]] = []  # (name, kind), ceiling first, judges, then metrics
    for kind in ("ceiling", "judge", "metric"):
        for d in dims:
            for r in m.dimensions[d].rows:
                if r.kind == kind and (r.name, kind) not in names:
                    names.append((r.name, kind))
    shown = [_row_name(n, k, bundle) for n, k in names]
    width = "text" if len(names) > 4 else "column"
    fig = _base(width, 60 + (12 + 7 * len(names)) * len(dims) + _legend_height(shown, width))
    offs = _dodge(len(names), min(0.7, 0.12 * len(names)))
    colors = ("#000000",) + OKABE_ITO
    lows: list[float] = []
    for k, (name, kind) in enumerate(names):
        cells = [ci3(r.spearman if (r := m.dimensions[d].row(name, kind)) else None)
                 for d in dims]
        v, lo, hi = ([c[i] for c in cells] for i in range(3))
        lows += [x for x in lo + v if not is_missing(x)]
        fig.add_scatter(x=v, y=[-i - offs[k] for i in range(len(dims))], mode="markers",
                        name=shown[k], error_x=_err(v, lo, hi),
                        marker=dict(size=6, color=colors[k % len(colors)],
                                    symbol="diamond" if kind == "ceiling" else
                                    SYMBOLS[(k - 1) % len(SYMBOLS)],
                                    line=dict(width=0) if kind != "metric" else
                                    dict(width=1, color=colors[k % len(colors)]),
                                    opacity=1.0),
                        customdata=[labels[d] for d in dims],
                        hovertemplate="%{fullData.name}, %{customdata}: ρ = %{x:.3f}"
                                      "<extra></extra>")
    _cat_axis(fig, [labels[d] for d in dims])
    lo_x = min([0.0] + lows)
    fig.update_xaxes(title="Spearman's ρ with the other humans' mean",
                     range=[(int(lo_x * 10) - 1) / 10, 1.0], dtick=0.2)
    fig.add_vline(x=0, line=dict(color="#666666", width=0.8))
    fig.update_layout(showlegend=True)
    caption = ("Reference-based metrics, LLM judges and the human ceiling against the same "
               "leave-one-out consensus of the psychologists: Spearman's ρ per dimension with "
               f"{_ci_words(bundle.analysis.meta.bootstrap)}, the same item resamples for "
               "every row.")
    alt = ("Dot plot of Spearman's rho per dimension with confidence intervals for the human "
           "ceiling, each judge and each metric: " + "; ".join(
               f"{labels[d]}: " + ", ".join(
                   f"{shown[k]} " + fmt(_spearman(m.dimensions[d].row(*nk)))
                   for k, nk in enumerate(names)) for d in dims) + ".")
    return Figure("metrics_vs_psychologists", fig, caption, alt, width)


def metric_details(bundle: ReportBundle) -> list[Table]:
    """The full-precision tables (CSVs and the HTML's collapsed tables), as issue 15 wrote
    them: every correlation of every row, the model rankings, the metric configurations."""
    m = bundle.analysis.metrics
    if not m:
        return []
    rows, system = [], []
    B = seed = None
    for dim in _dims(bundle, m):  # keys in the CSVs, as in every other table; rubric order
        d = m.dimensions[dim]
        B, seed = d.B, d.seed
        rows += [_detail_row(dim, d, r) for r in d.rows]
        system += _system_rows(dim, d.system)
    items = pd.DataFrame(rows)
    if not items.empty and (items["status"] == "").all():
        items = items.drop(columns="status")  # every row estimable: nothing to say
    how = (f"95% percentile CIs from one item bootstrap (B = {B}, seed = {seed}) shared by "
           "every row, so 'rho minus ceiling' is a paired difference")
    return [
        Table("metrics_vs_humans", f"{TITLE} Items",
              "Each score - a human's (the human ceiling), an LLM judge's, a reference-based "
              "metric's - against the mean of the other humans on the same item, pooled over "
              "every (human, item) pair, on the items that every row scored: Spearman's rho, "
              f"Kendall's tau-b and Pearson's r with {how}. Metrics are continuous and on "
              "their own scale, so kappa-type statistics (QWK, alpha) are not computed for "
              "them. Known weakness: word-overlap metrics correlate poorly with human "
              "judgements of open-ended dialogue (Liu et al. 2016); see docs/analysis.md.",
              items,
              (("spearman", "spearman_low", "spearman_high"),
               ("rho_minus_ceiling", "diff_low", "diff_high"),
               ("kendall_tau_b", "kendall_tau_b_low", "kendall_tau_b_high"),
               ("pearson", "pearson_low", "pearson_high"))),
        Table("metrics_system", f"{TITLE} Model rankings",
              "Does the row rank the companion models as the humans do? Kendall's tau-b "
              "between the row's and the humans' model means (not estimable with fewer than "
              "three models) and the share of model pairs the humans order that the row "
              f"orders the same way (ties count one half); 95% CIs from a bootstrap over "
              f"scenarios (B = {B}, seed = {seed}), all rows on the same resamples.",
              pd.DataFrame(system),
              (("kendall_tau_b", "tau_low", "tau_high"),
               ("pairs_right", "pairs_low", "pairs_high"))),
        Table("metric_configurations", f"{TITLE} Metric configurations",
              "Library, version, settings and tokenization of each metric (hash: the "
              "configuration's settings hash; signature: sacrebleu's). Language per item: "
              "Chinese when Chinese characters make up at least half of the words of the reply "
              "or the reference.", pd.DataFrame([_config_row(c) for c in m.configurations])),
    ]


def _detail_row(dim: str, d: MetricDimension, r: MetricRow) -> dict:
    row = {"dimension": dim, "row": r.name, "kind": r.kind,
           "status": "" if r.status == "ok" else r.status, "items": d.n_items,
           "pairs": d.n_pairs}
    for k in ("spearman", "kendall_tau_b", "pearson"):
        row[k], row[f"{k}_low"], row[f"{k}_high"] = ci3(getattr(r, k))
    row["rho_minus_ceiling"], row["diff_low"], row["diff_high"] = ci3(_minus(r))
    return row


def _system_rows(dim: str, s: SystemAgreement | None) -> list[dict]:
    if s is None:
        return []
    out = [{"dimension": dim, "row": "humans (the reference ranking)", "kind": "humans",
            "models": s.n_models, "scenarios": s.n_scenarios,
            "model_means": "; ".join(f"{k} {v:.3f}" for k, v in s.human_means.items())}]
    for name, r in s.rows.items():
        tau, tl, th = ci3(r.kendall_tau_b)
        acc, al, ah = ci3(r.pairwise_accuracy)
        out.append({"dimension": dim, "row": name, "kind": (s.kinds or {}).get(name),
                    "models": s.n_models, "scenarios": s.n_scenarios,
                    "model_pairs_ordered_by_humans": str(r.pairs_ordered_by_humans),
                    "kendall_tau_b": tau, "tau_low": tl, "tau_high": th,
                    "pairs_right": acc, "pairs_low": al, "pairs_high": ah,
                    "model_means": "; ".join(f"{k} {v:.3f}" for k, v in r.model_means.items())})
    return out


def _config_row(c: Mapping[str, Any]) -> dict:
    """A metric configuration as the configurations CSV lists it (its stored record)."""
    get = c.get
    return {"name": get("name"), "metric": get("metric"),
            "library": f"{get('library', '')} {get('library_version', '')}".strip(),
            "settings": ", ".join(f"{k}={v}" for k, v in (get("settings") or {}).items()),
            "tokenizer": "; ".join(f"{k}: {v}" for k, v in (get("tokenizer") or {}).items()),
            "english_items": (get("languages") or {}).get("en"),
            "chinese_items": (get("languages") or {}).get("zh"),
            "unscored": get("n_unscored"), "hash": get("hash"),
            "signature": get("signature")}
