"""Section "Do the benchmark's metrics agree with psychologists?": the reference-based metrics
(BLEU, chrF, ROUGE-L, embedding similarity; ``h2h metrics run``) beside the LLM judges and the
human ceiling, per dimension. Every number is the analysis JSON's ``metrics`` block; nothing
is recomputed here. Without that block (no metric scores stored) the section is left out."""

from __future__ import annotations

import pandas as pd

from messages import Msg

from .figures import Figure, _base, _cat_axis, _ci_words, _dodge, _err, _legend_height
from .findings import Finding, Glance, SectionOutput, ci3, sim
from .format import dim_labels, dim_order, fmt, fmt_est, is_missing
from .paper import Col, Est, Group, PaperTable, best
from .style import OKABE_ITO, SYMBOLS
from .tables import Table

__all__ = ["TITLE", "metrics", "metric_details", "metrics_figure"]

TITLE = "Do the benchmark's metrics agree with psychologists?"


def _row_name(r: dict, bundle: dict) -> str:
    if r["kind"] == "ceiling":
        return "Human ceiling"
    return sim(r["name"], bundle) if r["kind"] == "judge" else r["name"]


def _dims(bundle: dict, m: dict) -> list[str]:
    return [d for d in dim_order(bundle) if d in m["dimensions"]]


def metrics(bundle: dict) -> SectionOutput | None:
    m = bundle["analysis"].get("metrics")
    if not m or not m.get("dimensions"):
        return None
    labels = dim_labels(bundle)
    out = SectionOutput()
    rows: list = []
    B = seed = None
    for d in _dims(bundle, m):
        b = m["dimensions"][d]
        B, seed = b.get("B"), b.get("seed")
        out.notes += [f"{labels[d]}: {n}" for n in b.get("notes", [])]
        system = (b.get("system") or {})
        out.notes += [f"{labels[d]}, model rankings: {n}" for n in system.get("notes", [])]
        ranked = system.get("rows") or {}
        if b.get("status") != "ok" and not any(
                not is_missing((r.get("spearman") or {}).get("value")) for r in b["rows"]):
            why = "; ".join(b.get("notes", [])) or b.get("status")
            out.findings.append(Finding(f"Reference-based metrics: not estimable ({why}).",
                                        "not_estimable", d))
            continue
        rows.append(Group(f"{labels[d]} ({b['n_items']} items, {b['n_pairs']} pairs)"))
        body = [r for r in b["rows"] if r["kind"] != "ceiling"]
        top = best([(r.get("spearman") or {}).get("value") for r in body])
        for r in b["rows"]:
            k = body.index(r) if r in body else None
            tau = (ranked.get(r["name"]) or {}).get("kendall_tau_b") or {}
            diff = ((r.get("minus_ceiling") or {}).get("spearman")) or {}
            # the ceiling is what Δ and τ compare with: no number of its own there
            rows.append((_row_name(r, bundle), Est(*ci3(r.get("spearman")), bold=k == top),
                         Est(*ci3(diff)) if r["kind"] != "ceiling" else "",
                         Est(*ci3(tau)) if r["kind"] != "ceiling" else ""))
        f, g = _finding(bundle, d, b)
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


def _finding(bundle: dict, d: str, b: dict) -> tuple[Finding, Glance | None]:
    ceiling = next((r for r in b["rows"] if r["kind"] == "ceiling"), {})
    ms = [r for r in b["rows"] if r["kind"] == "metric"
          and not is_missing((r.get("spearman") or {}).get("value"))]
    if not ms:
        return Finding("Reference-based metrics: no metric has a correlation on this "
                       "dimension (see the notes).", "not_estimable", d), None
    top = max(ms, key=lambda r: r["spearman"]["value"])
    cv = ceiling.get("spearman") or {}
    diff = (top.get("minus_ceiling") or {}).get("spearman") or {}
    below = not is_missing(diff.get("high")) and diff["high"] < 0
    text = (f"The best reference-based metric, {top['name']}, correlates with the "
            f"psychologists at ρ = {fmt_est(*ci3(top['spearman']))}, against ρ = "
            f"{fmt_est(*ci3(cv))} between one psychologist and the others (difference "
            f"{fmt_est(*ci3(diff), signed=True)}; {b['n_items']} items)"
            + ("; it falls short of the human ceiling." if below else "."))
    return (Finding(text, "finding", d),
            Glance(Msg("Best metric (ρ)"), d, Msg("{metric} {rho} vs humans {humans}",
                                                  metric=top["name"],
                                                  rho=fmt(top["spearman"]["value"]),
                                                  humans=fmt(cv.get("value"))), "note"))


def metrics_figure(bundle: dict) -> Figure | None:
    """Spearman's ρ with its CI per dimension: the human ceiling, each judge, each metric."""
    m = bundle["analysis"].get("metrics") or {}
    labels = dim_labels(bundle)
    dims = [d for d in _dims(bundle, m)
            if any(not is_missing((r.get("spearman") or {}).get("value"))
                   for r in m["dimensions"][d]["rows"])]
    if not dims:
        return None
    names: list[tuple[str, str]] = []  # (name, kind), ceiling first, judges, then metrics
    for kind in ("ceiling", "judge", "metric"):
        for d in dims:
            for r in m["dimensions"][d]["rows"]:
                if r["kind"] == kind and (r["name"], kind) not in names:
                    names.append((r["name"], kind))
    shown = [_row_name({"name": n, "kind": k}, bundle) for n, k in names]
    width = "text" if len(names) > 4 else "column"
    fig = _base(width, 60 + (12 + 7 * len(names)) * len(dims) + _legend_height(shown, width))
    offs = _dodge(len(names), min(0.7, 0.12 * len(names)))
    colors = ("#000000",) + OKABE_ITO
    lows: list[float] = []
    for k, (name, kind) in enumerate(names):
        cells = [next((r.get("spearman") or {} for r in m["dimensions"][d]["rows"]
                       if r["name"] == name and r["kind"] == kind), {}) for d in dims]
        v, lo, hi = ([c.get(x) for c in cells] for x in ("value", "low", "high"))
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
    boot = bundle["analysis"]["meta"]["bootstrap"]
    caption = ("Reference-based metrics, LLM judges and the human ceiling against the same "
               "leave-one-out consensus of the psychologists: Spearman's ρ per dimension with "
               f"{_ci_words(boot)}, the same item resamples for every row.")
    alt = ("Dot plot of Spearman's rho per dimension with confidence intervals for the human "
           "ceiling, each judge and each metric: " + "; ".join(
               f"{labels[d]}: " + ", ".join(
                   f"{shown[k]} " + fmt(next(((r.get("spearman") or {}).get("value")
                                              for r in m["dimensions"][d]["rows"]
                                              if (r["name"], r["kind"]) == nk), None))
                   for k, nk in enumerate(names)) for d in dims) + ".")
    return Figure("metrics_vs_psychologists", fig, caption, alt, width)


def metric_details(bundle: dict) -> list[Table]:
    """The full-precision tables (CSVs and the HTML's collapsed tables), as issue 15 wrote
    them: every correlation of every row, the model rankings, the metric configurations."""
    m = bundle["analysis"].get("metrics")
    if not m:
        return []
    rows, system, configs = [], [], []
    B = seed = None
    for dim in _dims(bundle, m):  # keys in the CSVs, as in every other table; rubric order
        d = m["dimensions"][dim]
        B, seed = d["B"], d["seed"]
        sysrows = (d.get("system") or {}).get("rows", {})
        for r in d["rows"]:
            row = {"dimension": dim, "row": r["name"], "kind": r["kind"],
                   "status": "" if r["status"] == "ok" else r["status"],
                   "items": d["n_items"], "pairs": d["n_pairs"]}
            for k in ("spearman", "kendall_tau_b", "pearson"):
                row[k], row[f"{k}_low"], row[f"{k}_high"] = ci3(r.get(k))
            row["rho_minus_ceiling"], row["diff_low"], row["diff_high"] = ci3(
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
            tau, tl, th = ci3(r["kendall_tau_b"])
            acc, al, ah = ci3(r["pairwise_accuracy"])
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
              "or the reference.", pd.DataFrame(configs)),
    ]
