"""The section on side-by-side comparisons: Bradley–Terry rankings of the humans and of each
pairwise judge, the judge's position bias and consistency, and the humans against the judge
(κ on a / b / tie beside the humans' own κ, Kendall's τ between the rankings).

Reads ``bundle.pairwise`` (a :class:`analysis.arena_study.PairwiseStudy`, present when the
study has pairs); every number comes from it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..bradley_terry import BTResult, elo
from .figures import Figure, _err, _legend_height, slug
from .findings import Finding, Glance, SectionOutput
from .format import dim_labels, dim_order, fmt, fmt_est, natural_key
from .model import ReportBundle
from .paper import Col, Est, Group, PaperTable, best
from .style import FONT_PX, OKABE_ITO, SYMBOLS, use_template, width_px
from .tables import Table

__all__ = ["pairwise", "TITLE", "rankings_frame", "agreement_frame", "pairwise_figure"]

TITLE = "Side-by-side comparisons"
NO_STRENGTH = "no finite strength (never lost, or never compared with the others)"


def _boot(ps) -> str:
    return (f"95% percentile CIs from a bootstrap over scenarios (B = {ps.B}, seed = "
            f"{ps.seed})" if ps.B else "no CIs (bootstrap skipped, B = 0)")


def _est(r: BTResult | None, model: str, bold: bool = False) -> Est:
    if r is None or model not in r.players:
        return Est(None, why="not compared on this dimension")
    k = r.index(model)
    if r.n_comparisons[k] == 0:
        return Est(None, why="not compared on this dimension")
    return Est(r.log_strength[k], r.low[k], r.high[k], bold=bold, why=NO_STRENGTH)


def _models(ps, fits: list[dict[str, BTResult]]) -> list[str]:
    seen = {p for f in fits for r in f.values() for p, n in zip(r.players, r.n_comparisons,
                                                                 strict=True) if n}
    return sorted(seen, key=natural_key)


def _ranking_table(bundle: ReportBundle, ps, judge) -> PaperTable:
    labels = dim_labels(bundle)
    dims = [d for d in dim_order(bundle) if d in ps.humans or (judge and d in judge.fits)]
    models = _models(ps, [ps.humans] + ([judge.fits] if judge else []))
    rows: list = []
    for d in dims:
        rows.append(Group(labels.get(d, d)))
        h, j = ps.humans.get(d), (judge.fits.get(d) if judge else None)
        top_h = best([_est(h, m).value for m in models])
        top_j = best([_est(j, m).value for m in models]) if judge else None
        for k, m in enumerate(models):
            n = h.n_comparisons[h.index(m)] if h is not None and m in h.players else 0
            row = (m, _est(h, m, top_h == k)) + ((_est(j, m, top_j == k),) if judge else ())
            rows.append(row + (n,))
    cols = (Col("Model", "wrap"), Col("Humans", "coef", signed=True)) \
        + ((Col("Judge", "coef", signed=True),) if judge else ()) + (Col("n", "count"),)
    who = f" and of the pairwise judge {judge.name}" if judge else ""
    caption = (f"Bradley–Terry log-strengths of the companion models per dimension, from "
               f"the humans' side-by-side preferences{who} (Davidson's model where there "
               f"are ties; centred to 0 within each dimension; higher is better), with "
               f"{_boot(ps)}. n: the humans' comparisons of the model. Bold: the strongest "
               "model per column.")
    if judge:
        caption += (" The judge compared each pair in both orders; pairs on which the two "
                    "orders disagreed count as "
                    f"{'ties' if ps.inconsistent == 'tie' else 'left out'}"
                    f" (--inconsistent {ps.inconsistent}).")
    key = f"pairwise_{slug(judge.name)}" if judge else "pairwise_humans"
    return PaperTable(key, "Side-by-side rankings" + (f" ({judge.name})" if judge else ""),
                      caption, cols, tuple(rows), csv="pairwise_rankings",
                      missing=NO_STRENGTH, bare_reason="too few scenarios to resample")


def _agreement_table(bundle: ReportBundle, ps, judge) -> PaperTable:
    labels = dim_labels(bundle)
    taus = {t.dimension: t for t in judge.taus}
    rows = []
    for k in sorted(judge.kappas, key=lambda x: dim_order(bundle).index(x.dimension)
                    if x.dimension in dim_order(bundle) else 99):
        t = taus.get(k.dimension)
        rows.append((f"{labels.get(k.dimension, k.dimension)} ({k.n_pairs})",
                     Est(k.judge_kappa, k.judge_low, k.judge_high,
                         why=str(k.reason or "not estimable")),
                     Est(k.human_kappa, k.human_low, k.human_high,
                         why=str(k.reason or "not estimable")),
                     Est(t.tau if t else None, t.low if t else None, t.high if t else None,
                         why=str(t.reason) if t and t.reason else "no ranking to compare")))
    b = judge.bias
    return PaperTable(
        f"pairwise_agreement_{slug(judge.name)}", f"Humans against the pairwise judge "
        f"{judge.name}",
        "Cohen's κ on a / b / tie of the judge against each human (κ judge) and of the humans "
        "against each other (κ humans), pooled over the pairs compared by two or more humans "
        "(their number in brackets), "
        "and Kendall's τ-b between the humans' and the judge's Bradley–Terry rankings (both "
        f"refitted on the same resamples), with {_boot(ps)}. The judge chose the reply shown "
        f"first in {fmt_est(b.first_share, b.first_low, b.first_high, 'share')} of its "
        f"{b.n_decisive} decisive answers (0.5: no position bias) and its two orders agreed "
        f"on {fmt_est(b.consistency, b.consistency_low, b.consistency_high, 'share')} of "
        f"{b.n_complete} pairs.",
        (Col("Dimension (pairs)", "wrap"), Col("κ judge"), Col("κ humans"), Col("τ-b")),
        tuple(rows), csv="pairwise_agreement",
        bare_reason="too few scenarios to resample")


def _figure(bundle: ReportBundle, ps, judge) -> Figure | None:
    return pairwise_figure(ps, judge, dim_labels(bundle), dim_order(bundle))


def pairwise_figure(ps, judge, labels: dict[str, str], order: list[str]) -> Figure | None:
    """The strengths with their CIs, humans and ``judge`` (None: humans only) side by side,
    a panel per dimension (``labels`` and ``order``: the rubric's); the report's figure and
    the Calibration page's."""
    dims = [d for d in order if d in ps.humans or (judge and d in judge.fits)]
    dims += [d for d in list(ps.humans) + (list(judge.fits) if judge else [])
             if d not in dims]
    sources = [("Humans", ps.humans)] + ([(f"Judge {judge.name}", judge.fits)] if judge
                                         else [])
    models = _models(ps, [f for _, f in sources])
    if not dims or not models:
        return None
    width = "column" if len(dims) == 1 else "text"
    fig = _panels(dims, labels, [s for s, _ in sources], models, width)
    ys = {m: -i for i, m in enumerate(models)}
    offs = [-0.15, 0.15] if len(sources) == 2 else [0.0]
    for c, d in enumerate(dims, start=1):
        for k, (name, fits) in enumerate(sources):
            r = fits.get(d)
            if r is None:
                continue
            ms = _drawn(r, models)
            v = [r.log_strength[r.index(m)] for m in ms]
            fig.add_scatter(x=v, y=[ys[m] + offs[k] for m in ms], mode="markers", name=name,
                            legendgroup=name, showlegend=c == 1, row=1, col=c,
                            marker=dict(size=6, color=OKABE_ITO[k], symbol=SYMBOLS[k]),
                            error_x=_err(v, [r.low[r.index(m)] for m in ms],
                                         [r.high[r.index(m)] for m in ms]),
                            customdata=ms,
                            hovertemplate="%{customdata}: %{x:+.2f}<extra></extra>")
        fig.add_vline(x=0, line=dict(color="#666666", width=0.8, dash="dot"), row=1, col=c)
    fig.update_yaxes(tickvals=list(ys.values()), ticktext=models, showgrid=False, ticks="",
                     range=[-len(models) + 0.5, 0.5])
    who = f"the humans (circles) and the pairwise judge {judge.name} (squares)" if judge \
        else "the humans"
    caption = (f"Bradley–Terry log-strengths of the companion models from the side-by-side "
               f"preferences of {who}, per dimension (centred to 0; higher is better), with "
               f"{_boot(ps)}. A model with no finite strength is not drawn.")
    alt = ("Dot plot of log-strengths per model: " + "; ".join(
        f"{labels.get(d, d)}: " + ", ".join(
            f"{m} {name.lower()} {fmt(fits[d].log_strength[fits[d].index(m)], 'coef')}"
            for name, fits in sources if d in fits for m in _drawn(fits[d], models))
        for d in dims) + ".")
    key = f"pairwise_{slug(judge.name)}" if judge else "pairwise_humans"
    return Figure(key, fig, caption, alt, width)


def _drawn(r: BTResult, models: list[str]) -> list[str]:
    """The models of ``models`` with a finite strength in ``r``, in that order."""
    return [m for m in models if m in r.players and r.log_strength[r.index(m)] is not None]


def _panels(dims: list[str], labels: dict[str, str], names: list[str], models: list[str],
            width: str) -> go.Figure:
    """A panel per dimension sharing the models' axis; the legend above the panels' titles,
    the one x title under the panels."""
    fig = make_subplots(rows=1, cols=len(dims), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[labels.get(d, d) for d in dims])
    leg = _legend_height(names, width) + 4
    plot_h = 30 + 22 * len(models)
    top, bottom = 22 + leg, 40
    fig.update_layout(template=use_template(), width=width_px(width),
                      height=plot_h + top + bottom, showlegend=True,
                      margin=dict(t=top, b=bottom, l=4, r=8),
                      legend=dict(y=1 + 20 / plot_h, yanchor="bottom"))
    for ann in fig.layout.annotations:
        ann.font = dict(size=FONT_PX)
    fig.add_annotation(text="Bradley–Terry log-strength (0: the dimension's average)",
                       xref="paper", yref="paper", x=0.5, y=0, yanchor="top", yshift=-22,
                       showarrow=False, font=dict(size=FONT_PX))
    return fig


def rankings_frame(ps) -> pd.DataFrame:
    """Every ranking at full precision (one CSV): source, dimension, model, log-strength,
    CI, rank, comparisons, the Elo-like display and the groups."""
    rows: list[dict[str, Any]] = []
    for src, fits in [("humans", ps.humans)] + [(f"judge {j.name}", j.fits)
                                                 for j in ps.judges]:
        for d, r in fits.items():
            for k, m in enumerate(r.players):
                if not r.n_comparisons[k]:
                    continue
                rows.append({"source": src, "dimension": d, "model": m,
                             "log_strength": r.log_strength[k], "low": r.low[k],
                             "high": r.high[k], "rank": r.rank[k],
                             "n_comparisons": r.n_comparisons[k],
                             "elo": elo(r.log_strength[k]), "group": r.group[k],
                             "nu": r.nu, "B": r.B, "seed": r.seed,
                             "valid_resamples": r.n_boot_valid})
    return pd.DataFrame(rows)


def agreement_frame(ps) -> pd.DataFrame:
    rows = []
    for j in ps.judges:
        taus = {t.dimension: t for t in j.taus}
        for k in j.kappas:
            t = taus.get(k.dimension)
            rows.append({"judge": j.name, "dimension": k.dimension, "pairs": k.n_pairs,
                         "judge_kappa": k.judge_kappa, "judge_low": k.judge_low,
                         "judge_high": k.judge_high, "judge_pairings": k.judge_n,
                         "human_kappa": k.human_kappa, "human_low": k.human_low,
                         "human_high": k.human_high, "human_pairings": k.human_n,
                         "kendall_tau_b": t.tau if t else None, "tau_low": t.low if t else None,
                         "tau_high": t.high if t else None,
                         "first_shown_share": j.bias.first_share,
                         "first_low": j.bias.first_low, "first_high": j.bias.first_high,
                         "consistency": j.bias.consistency,
                         "inconsistent": ps.inconsistent})
    return pd.DataFrame(rows)


def _findings(bundle: ReportBundle, ps) -> tuple[list[Finding], list[Glance]]:
    labels = dim_labels(bundle)
    out, glance = [], []
    for d, r in ps.humans.items():
        seen = [k for k, n in enumerate(r.n_comparisons) if n]
        ranked = sorted((k for k in seen if r.rank[k] is not None), key=lambda k: r.rank[k])
        if r.relations:
            out.append(Finding(
                f"{labels.get(d, d)}: some models cannot be ranked against others from the "
                "side-by-side preferences: " + "; ".join(str(x.reason) for x in r.relations)
                + ".", "not_estimable", d))
        elif ranked:
            k = ranked[0]
            s = r.log_strength[k]
            out.append(Finding(
                f"{labels.get(d, d)}: side by side, the humans rank {r.players[k]} first"
                + (f" (log-strength {fmt_est(s, r.low[k], r.high[k], signed=True)})"
                   if s is not None else " (it never lost)") + f"; {r.n} comparisons, "
                f"{r.n_ties} ties.", "finding", d))
            glance.append(Glance("Side by side (humans)", d, f"{r.players[k]} first"))
    for j in ps.judges:
        b = j.bias
        if b.first_share is not None:
            biased = b.first_low is not None and not (b.first_low <= 0.5 <= b.first_high)
            out.append(Finding(
                f"The pairwise judge {j.name} chose the reply shown first in "
                f"{fmt_est(b.first_share, b.first_low, b.first_high, 'share')} of "
                f"{b.n_decisive} decisive answers"
                + (" — a position bias (0.5 lies outside the interval)" if biased else
                   " (0.5, no bias, lies inside the interval)")
                + f"; its two orders agreed on {fmt(b.consistency, 'share')} of "
                f"{b.n_complete} pairs.", "caveat" if biased else "note"))
        for k in j.kappas:
            if k.judge_kappa is None:
                continue
            t = next((x for x in j.taus if x.dimension == k.dimension), None)
            tau = (f"; τ-b between the rankings {fmt_est(t.tau, t.low, t.high)}"
                   if t is not None and t.tau is not None else "")
            out.append(Finding(
                f"{labels.get(k.dimension, k.dimension)}: {j.name} agrees with single humans "
                f"at κ = {fmt_est(k.judge_kappa, k.judge_low, k.judge_high)} on a / b / tie, "
                f"the humans with each other at κ = "
                f"{fmt_est(k.human_kappa, k.human_low, k.human_high)} ({k.n_pairs} pairs)"
                + tau + ".", "finding", k.dimension))
            glance.append(Glance(f"Pairwise {j.name}", k.dimension,
                                 f"κ {fmt(k.judge_kappa)} vs humans {fmt(k.human_kappa)}"))
    return out, glance


def pairwise(bundle: ReportBundle) -> SectionOutput | None:
    ps = bundle.pairwise
    if ps is None or (not ps.humans and not ps.judges):
        return None
    out = SectionOutput()
    judges = list(ps.judges) or [None]
    for j in judges:
        if not ps.humans and j is None:
            continue
        out.tables.append(_ranking_table(bundle, ps, j))
        if fig := _figure(bundle, ps, j):
            out.figures.append(fig)
        if j is not None and j.kappas:
            out.tables.append(_agreement_table(bundle, ps, j))
    out.findings, out.glance = _findings(bundle, ps)
    out.details.append(Table("pairwise_rankings", f"{TITLE}: rankings",
                             "Every Bradley–Terry ranking at full precision (Elo-like: 1000 + "
                             "400·log10 of the strength, a display of the same numbers).",
                             rankings_frame(ps)))
    agr = agreement_frame(ps)
    if not agr.empty:
        out.details.append(Table("pairwise_agreement", f"{TITLE}: humans against the judges",
                                 "κ, τ-b, position bias and consistency per judge and "
                                 "dimension.", agr))
    return out
