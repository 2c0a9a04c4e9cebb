"""The report's section "Do the benchmark's metrics agree with psychologists?": the
reference-based metrics beside the LLM judges and the human ceiling, per dimension, as tables
and one figure (a panel per dimension). Every number is the analysis JSON's ``metrics`` block.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .tables import Table

__all__ = ["SECTION", "metric_tables", "metric_figures"]

SECTION = "Do the benchmark's metrics agree with psychologists?"
_COLORS = {"ceiling": "#5f6368", "judge": "#1a73e8", "metric": "#e8710a"}


def _ci(v: dict | None) -> tuple:
    v = v or {}
    return v.get("value"), v.get("low"), v.get("high")


def metric_tables(bundle: dict) -> list[Table]:
    m = bundle["analysis"].get("metrics")
    if not m:
        return []
    rows, system, configs = [], [], []
    B = seed = None
    for dim, d in m["dimensions"].items():
        B, seed = d["B"], d["seed"]
        sysrows = (d.get("system") or {}).get("rows", {})
        for r in d["rows"]:
            row = {"dimension": dim, "row": r["name"], "kind": r["kind"],
                   "status": "" if r["status"] == "ok" else r["status"],
                   "items": d["n_items"], "pairs": d["n_pairs"]}
            for k in ("spearman", "kendall_tau_b", "pearson"):
                row[k], row[f"{k}_low"], row[f"{k}_high"] = _ci(r.get(k))
            row["rho_minus_ceiling"], row["diff_low"], row["diff_high"] = _ci(
                (r.get("minus_ceiling") or {}).get("spearman"))
            rows.append(row)
        s = d.get("system")
        if s:
            system.append({"dimension": dim, "row": "humans (the reference ranking)",
                           "kind": "humans", "models": s["n_models"],
                           "scenarios": s["n_scenarios"],
                           "model_means": "; ".join(f"{k} {v:.3f}"
                                                    for k, v in s["human_means"].items())})
        for name, r in sysrows.items():
            tau, tl, th = _ci(r["kendall_tau_b"])
            acc, al, ah = _ci(r["pairwise_accuracy"])
            system.append({"dimension": dim, "row": name, "kind": s["kinds"].get(name),
                           "models": s["n_models"], "scenarios": s["n_scenarios"],
                           "model_pairs_ordered_by_humans": str(r["pairs_ordered_by_humans"]),
                           "kendall_tau_b": tau, "tau_low": tl, "tau_high": th,
                           "pairs_right": acc, "pairs_low": al, "pairs_high": ah,
                           "model_means": "; ".join(f"{k} {v:.3f}"
                                                    for k, v in r["model_means"].items())})
    for c in m.get("configurations", []):
        configs.append({"name": c["name"], "metric": c.get("metric"),
                        "library": f"{c.get('library', '')} {c.get('library_version', '')}"
                        .strip(), "settings": ", ".join(f"{k}={v}" for k, v in
                                                        (c.get("settings") or {}).items()),
                        "tokenizer": "; ".join(f"{k}: {v}" for k, v in
                                               (c.get("tokenizer") or {}).items()),
                        "english_items": (c.get("languages") or {}).get("en"),
                        "chinese_items": (c.get("languages") or {}).get("zh"),
                        "unscored": c.get("n_unscored"), "hash": c.get("hash"),
                        "signature": c.get("signature")})
    items = pd.DataFrame(rows)
    if not items.empty and (items["status"] == "").all():
        items = items.drop(columns="status")  # every row estimable: nothing to say
    how = (f"95% percentile CIs from one item bootstrap (B = {B}, seed = {seed}) shared by "
           "every row, so 'rho minus ceiling' is a paired difference")
    return [
        Table("metrics_vs_humans", f"{SECTION} Items",
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
        Table("metrics_system", f"{SECTION} Model rankings",
              "Does the row rank the companion models as the humans do? Kendall's tau-b "
              "between the row's and the humans' model means (not estimable with fewer than "
              "three models) and the share of model pairs the humans order that the row "
              f"orders the same way (ties count one half); 95% CIs from a bootstrap over "
              f"scenarios (B = {B}, seed = {seed}), all rows on the same resamples.",
              pd.DataFrame(system),
              (("kendall_tau_b", "tau_low", "tau_high"),
               ("pairs_right", "pairs_low", "pairs_high"))),
        Table("metric_configurations", f"{SECTION} Metric configurations",
              "Library, version, settings and tokenization of each metric (hash: the "
              "configuration's settings hash; signature: sacrebleu's). Language per item: "
              "Chinese when Chinese characters make up at least half of the words of the reply "
              "or the reference.", pd.DataFrame(configs)),
    ]


def _err(vals, lows, highs) -> dict:
    return dict(type="data", symmetric=False,
                array=[(h - v) if None not in (h, v) else 0 for v, h in zip(vals, highs,
                                                                           strict=True)],
                arrayminus=[(v - lo) if None not in (lo, v) else 0
                            for v, lo in zip(vals, lows, strict=True)])


def metric_figures(bundle: dict) -> list[tuple[str, go.Figure]]:
    """One panel per dimension: Spearman's rho with its CI for each metric and judge, the
    human ceiling as a shaded band (its CI) and a line."""
    m = bundle["analysis"].get("metrics")
    if not m:
        return []
    dims = [(d, b) for d, b in m["dimensions"].items()
            if any(r["spearman"]["value"] is not None for r in b["rows"])]
    if not dims:
        return []
    cols = min(len(dims), 3)
    nrows = math.ceil(len(dims) / cols)
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=[d for d, _ in dims],
                        horizontal_spacing=0.18, vertical_spacing=0.22)
    shown: set[str] = set()
    for i, (_, b) in enumerate(dims):
        r_, c_ = i // cols + 1, i % cols + 1
        rows = [r for r in b["rows"] if r["kind"] != "ceiling"
                and r["spearman"]["value"] is not None]
        ceiling = next(r for r in b["rows"] if r["kind"] == "ceiling")
        cv, cl, ch = _ci(ceiling["spearman"])
        names = [r["name"] for r in rows]
        if cl is not None:
            fig.add_shape(type="rect", x0=cl, x1=ch, y0=-0.5, y1=len(rows) - 0.5,
                          fillcolor=_COLORS["ceiling"], opacity=0.15, line_width=0,
                          row=r_, col=c_)
        if cv is not None:
            fig.add_shape(type="line", x0=cv, x1=cv, y0=-0.5, y1=len(rows) - 0.5,
                          line=dict(color=_COLORS["ceiling"], dash="dash"), row=r_, col=c_)
        for kind in ("judge", "metric"):
            sel = [r for r in rows if r["kind"] == kind]
            if not sel:
                continue
            v = [r["spearman"]["value"] for r in sel]
            fig.add_scatter(x=v, y=[r["name"] for r in sel], mode="markers",
                            marker=dict(size=9, color=_COLORS[kind]),
                            error_x=_err(v, [r["spearman"]["low"] for r in sel],
                                         [r["spearman"]["high"] for r in sel]),
                            name="LLM judge" if kind == "judge" else "metric",
                            legendgroup=kind, showlegend=kind not in shown, row=r_, col=c_)
            shown.add(kind)
        fig.update_yaxes(categoryorder="array", categoryarray=names[::-1], row=r_, col=c_)
    fig.add_scatter(x=[None], y=[None], mode="lines", name="human ceiling (band: 95% CI)",
                    line=dict(color=_COLORS["ceiling"], dash="dash"))
    lows = [r["spearman"]["low"] for _, b in dims for r in b["rows"]
            if r["spearman"]["low"] is not None]
    fig.update_xaxes(range=[min([-0.2] + lows) - 0.05, 1.0], zeroline=True)
    for i in range(len(dims)):  # the axis title once per column, under its lowest panel
        if i + cols >= len(dims):
            fig.update_xaxes(title="Spearman's rho with the other humans",
                             row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(title=SECTION + " Spearman's rho with 95% CI", template="plotly_white",
                      font=dict(family="Helvetica, Arial, sans-serif", size=13),
                      margin=dict(l=60, r=20, t=80, b=50), height=260 + 220 * nrows,
                      width=420 * cols + 120, legend=dict(orientation="h", y=-0.15))
    return [("metrics_vs_psychologists", fig)]
