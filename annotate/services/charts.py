"""The admin pages' charts, in the report's house style (:mod:`analysis.report.style`: the
Okabe & Ito palette with marker shapes as a second cue, Times, thin axes), sized for a
screen instead of a paper column.

Every function takes plain values — labels, numbers, :class:`Estimate` — and returns a
Plotly figure; none reads the database or the analysis result's layout, so a page adapts
its result once (:mod:`annotate.services.agreement_view` and friends) and stays thin. Names
from files (raters, judges, rubric labels) are made inert (:func:`analysis.report.figures.
inert`); the figures' own words come translated through ``_``.

A value that is not estimable is left out of its chart (never drawn as 0); an estimate
without a confidence interval gets no error bar (never a zero-width bar that looks like
certainty).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from analysis.report.figures import inert
from analysis.report.style import FONT_PX, OKABE_ITO, SYMBOLS, use_template
from annotate.services.formats import Estimate, share

__all__ = ["Estimate", "SeverityPoint", "agreement_chart", "severity_chart", "judges_chart",
           "progress_chart", "bars_chart", "qualification_chart", "attention_chart", "BANDS"]

BANDS = ((0.667, 0.800),)
"""Krippendorff (2004): α ≥ .800 reliable, ≥ .667 tentative conclusions only."""
_MISFLAG = "#D55E00"  # vermilion: a flagged point (with a ring: not by colour alone)


def _same(text: str) -> str:
    return text


def _num(v) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _bars(ests: Sequence[Estimate]) -> dict:
    plus = [None if e.high is None or e.missing else e.high - e.value for e in ests]
    minus = [None if e.low is None or e.missing else e.value - e.low for e in ests]
    return dict(type="data", symmetric=False, array=plus, arrayminus=minus, thickness=1.2,
                width=3)


def _figure(height: int) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(template=use_template(), height=height, autosize=True,
                      font=dict(size=FONT_PX + 1), margin=dict(l=8, r=16, t=34, b=8),
                      legend=dict(orientation="h", x=0, y=1.02, yanchor="bottom"),
                      hoverlabel=dict(namelength=-1))
    return fig


def _categories(fig: go.Figure, labels: list[str]) -> None:
    """Categories top to bottom at 0, -1, -2, … (numeric, so series can sit side by side)."""
    fig.update_yaxes(tickvals=[-i for i in range(len(labels))], ticktext=labels,
                     range=[-len(labels) + 0.4, 0.6], showgrid=False, ticks="")


def _offsets(n: int, spread: float) -> list[float]:
    if n <= 1:
        return [0.0] * n
    return [-spread / 2 + k * spread / (n - 1) for k in range(n)]


def _bands(fig: go.Figure, _: Callable[[str], str]) -> None:
    """The reading bands behind the points: shaded tentative zone, reliable zone, their
    names at the foot of each."""
    lo, hi = BANDS[0]
    fig.add_vrect(x0=lo, x1=hi, fillcolor="#E69F00", opacity=0.10, line_width=0, layer="below")
    fig.add_vrect(x0=hi, x1=1.0, fillcolor="#009E73", opacity=0.10, line_width=0, layer="below")
    for x, text, anchor in ((lo, _("tentative ≥ .667"), "left"),
                            (hi, _("reliable ≥ .800"), "left")):
        fig.add_vline(x=x, line=dict(color="#555555", width=1, dash="dot"))
        fig.add_annotation(x=x, y=0.0, yref="paper", yanchor="bottom", xanchor=anchor,
                           text=text, showarrow=False, font=dict(size=FONT_PX - 1),
                           xshift=3, yshift=2)  # inside, at the foot: clear of the legend


def agreement_chart(labels: list[str], series: dict[str, list[Estimate]],
                    _: Callable[[str], str] = _same) -> go.Figure:
    """Agreement per dimension: one row per dimension (``labels``), one marker per series
    (``{name: estimates}``, e.g. α, Cohen's κ, the human ceiling's QWK) with its CI, in front
    of the .667 / .800 bands."""
    fig = _figure(90 + 34 * len(labels) * max(1, min(len(series), 3)) // 2)
    offs = _offsets(len(series), 0.5)
    lows = [0.6]
    for k, (name, ests) in enumerate(series.items()):
        keep = [i for i, e in enumerate(ests) if not e.missing]
        pts = [ests[i] for i in keep]
        lows += [e.low if e.low is not None else e.value for e in pts]
        fig.add_scatter(x=[e.value for e in pts], y=[-i + offs[k] for i in keep],
                        mode="markers", name=name, error_x=_bars(pts),
                        marker=dict(size=9, color=OKABE_ITO[k % 8], symbol=SYMBOLS[k % 8]),
                        customdata=[labels[i] for i in keep],
                        hovertemplate="%{customdata}: %{fullData.name} = %{x:.3f}"
                                      "<extra></extra>")
    _bands(fig, _)
    _categories(fig, labels)
    low = max(math.floor(min(lows) * 10) / 10, -1.0)
    fig.update_xaxes(title=_("Agreement (95% CI)"), range=[low, 1.0])
    return inert(fig)


@dataclass(frozen=True)
class SeverityPoint:
    rater: str
    dimension: str
    severity: float
    se: float | None
    flagged: bool
    flag: str = ""


def severity_chart(points: list[SeverityPoint], dimensions: list[str],
                   _: Callable[[str], str] = _same) -> go.Figure:
    """Rater severity (logits, positive = harsher) per rater, one marker per dimension with
    ±1.96 SE, and a ring around every rater × dimension flagged for misfit."""
    raters = sorted({p.rater for p in points})
    row = {r: -i for i, r in enumerate(raters)}
    fig = _figure(110 + 30 * len(raters))
    offs = _offsets(len(dimensions), 0.55)
    for k, dim in enumerate(dimensions):
        pts = [p for p in points if p.dimension == dim]
        if not pts:
            continue
        ests = [Estimate(p.severity, None if p.se is None else p.severity - 1.96 * p.se,
                         None if p.se is None else p.severity + 1.96 * p.se) for p in pts]
        fig.add_scatter(x=[p.severity for p in pts], y=[row[p.rater] + offs[k] for p in pts],
                        mode="markers", name=dim, error_x=_bars(ests),
                        marker=dict(size=8, color=OKABE_ITO[k % 8], symbol=SYMBOLS[k % 8]),
                        customdata=[p.rater for p in pts],
                        hovertemplate="%{customdata}, %{fullData.name}: %{x:.2f} logits"
                                      "<extra></extra>")
    flagged = [(p, offs[dimensions.index(p.dimension)]) for p in points
               if p.flagged and p.dimension in dimensions]
    if flagged:
        fig.add_scatter(x=[p.severity for p, _o in flagged],
                        y=[row[p.rater] + o for p, o in flagged], mode="markers",
                        name=_("flagged for misfit"),
                        marker=dict(size=17, color=_MISFLAG, symbol="circle-open",
                                    line=dict(width=2.2)),
                        customdata=[f"{p.rater}, {p.dimension}: {p.flag}" for p, _o in flagged],
                        hovertemplate="%{customdata}<extra></extra>")
    fig.add_vline(x=0, line=dict(color="#555555", width=1, dash="dot"))  # the average rater
    _categories(fig, raters)
    fig.update_xaxes(title=_("Severity in logits (± 1.96 SE): right of 0 harsher, left "
                             "more lenient"))
    return inert(fig)


def judges_chart(labels: list[str], ceiling: list[Estimate],
                 judges: dict[str, list[Estimate]],
                 _: Callable[[str], str] = _same) -> go.Figure:
    """Each judge's QWK against the human ceiling's, per dimension, with paired CIs: the
    ceiling in black diamonds, each judge its own colour and shape."""
    fig = _figure(90 + 26 * len(labels) * (1 + len(judges)) // 2 + 30)
    offs = _offsets(1 + len(judges), 0.55)
    rows = [(_("human ceiling"), ceiling, "#000000", "diamond")] + [
        (name, ests, OKABE_ITO[k % 8], SYMBOLS[k % 8]) for k, (name, ests)
        in enumerate(sorted(judges.items()))]
    for k, (name, ests, color, symbol) in enumerate(rows):
        keep = [i for i, e in enumerate(ests) if not e.missing]
        pts = [ests[i] for i in keep]
        fig.add_scatter(x=[e.value for e in pts], y=[-i + offs[k] for i in keep],
                        mode="markers", name=name, error_x=_bars(pts),
                        marker=dict(size=9, color=color, symbol=symbol),
                        customdata=[labels[i] for i in keep],
                        hovertemplate="%{customdata}: %{fullData.name} QWK = %{x:.3f}"
                                      "<extra></extra>")
    _categories(fig, labels)
    fig.update_xaxes(title=_("Quadratic-weighted κ against the other humans' consensus "
                             "(95% CI)"))
    return inert(fig)


def progress_chart(days: list[str], done: dict[str, list[int]], assigned: dict[str, int],
                   _: Callable[[str], str] = _same) -> go.Figure:
    """Items done per rater, day by day (cumulative), each line ending at the rater's
    assignment (a dotted mark at the right: how far there is still to go)."""
    fig = _figure(300)
    for k, (rater, counts) in enumerate(sorted(done.items())):
        color = OKABE_ITO[k % 8]
        fig.add_scatter(x=days, y=counts, mode="lines+markers", name=rater,
                        line=dict(color=color, width=2),
                        marker=dict(size=6, symbol=SYMBOLS[k % 8], color=color),
                        hovertemplate="%{fullData.name}, %{x}: %{y}<extra></extra>")
        if assigned.get(rater):
            fig.add_scatter(x=[days[-1]], y=[assigned[rater]], mode="markers",
                            showlegend=False, name=rater,
                            marker=dict(size=11, symbol="line-ew-open", color=color,
                                        line=dict(width=2, color=color)),
                            hovertemplate=_("%{fullData.name}: %{y} assigned")
                            + "<extra></extra>")
    fig.update_xaxes(title=_("Day (UTC)"), type="category")
    fig.update_yaxes(title=_("Items done (cumulative)"), rangemode="tozero")
    return inert(fig)


_BLUES = ("#c6dbef", "#9ecae1", "#6baed6", "#3182bd", "#08519c", "#08306b")


def bars_chart(categories: list[str], counts: dict[str, list[int]], axis_title: str,
               stacked: bool = True, _: Callable[[str], str] = _same,
               ordered: bool = False) -> go.Figure:
    """Counts per category as horizontal bars, one colour per series (``counts``: series
    name -> one count per category), stacked (parts of a whole) or side by side; series that
    are ordered levels (``ordered``) in blues from light to dark."""
    n = len(counts) if not stacked else 1
    fig = _figure(90 + (24 + 12 * n) * len(categories))
    shades = _BLUES[-len(counts):] if ordered and len(counts) <= len(_BLUES) else None
    for k, (name, vals) in enumerate(counts.items()):
        color = shades[k] if shades else OKABE_ITO[k % 8]
        fig.add_bar(y=categories, x=vals, orientation="h", name=name,
                    marker=dict(color=color, line=dict(width=0.5, color="#ffffff")),
                    hovertemplate="%{y}: %{x} (%{fullData.name})<extra></extra>")
    fig.update_layout(barmode="stack" if stacked else "group", bargap=0.3)
    fig.update_yaxes(autorange="reversed", showgrid=False, ticks="")
    fig.update_xaxes(title=axis_title, rangemode="tozero")
    return inert(fig)


def qualification_chart(raters: list[str], within1: list[float | None],
                        qwk: list[float | None], need_within1: float, need_qwk: float,
                        _: Callable[[str], str] = _same) -> go.Figure:
    """Each rater's training result against the bar: within one point of the experts
    (share) and weighted κ, side by side, the study's thresholds as dotted lines."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=(_("Within one point of the experts"),
                                        _("Weighted κ (QWK) with the experts")))
    fig.update_layout(template=use_template(), height=110 + 30 * len(raters),
                      font=dict(size=FONT_PX + 1), margin=dict(l=8, r=16, t=40, b=8),
                      showlegend=False)
    ys = [-i for i in range(len(raters))]
    for col, vals, need, fmt in ((1, within1, need_within1, "%{x:.0%}"),
                                 (2, qwk, need_qwk, "%{x:.2f}")):
        keep = [i for i, v in enumerate(vals) if _num(v) is not None]
        below = [_num(vals[i]) < need for i in keep]
        fig.add_scatter(x=[vals[i] for i in keep], y=[ys[i] for i in keep], mode="markers",
                        marker=dict(size=10, color=[_MISFLAG if b else OKABE_ITO[2]
                                                    for b in below],
                                    symbol=["x" if b else "circle" for b in below]),
                        customdata=[raters[i] for i in keep],
                        hovertemplate=f"%{{customdata}}: {fmt}<extra></extra>",
                        row=1, col=col)
        fig.add_vline(x=need, line=dict(color="#555555", width=1, dash="dot"), row=1,
                      col=col)
    fig.update_yaxes(tickvals=ys, ticktext=raters, range=[-len(raters) + 0.4, 0.6],
                     showgrid=False, ticks="")
    fig.update_xaxes(range=[0, 1.02], tickformat=".0%", row=1, col=1)
    fig.update_xaxes(range=[min(-0.1, min((_num(v) or 0) for v in qwk or [0]) - 0.05), 1.02],
                     row=1, col=2)
    for ann in fig.layout.annotations:
        ann.font = dict(size=FONT_PX)
    return inert(fig)


def attention_chart(raters: list[str], passed: list[int], answered: list[int],
                    _: Callable[[str], str] = _same) -> go.Figure:
    """Attention checks per rater: the checks passed and failed as one bar of all they
    answered, the pass rate with its count at the bar's end (``3/4 (75%)``: a rate is never
    shown without its n). Failed checks in vermilion with a hatch (not by colour alone)."""
    fig = _figure(100 + 30 * len(raters))
    ys = [-i for i in range(len(raters))]
    failed = [a - p for p, a in zip(passed, answered, strict=True)]
    for name, vals, color, hatch in ((_("Checks passed"), passed, OKABE_ITO[2], ""),
                                     (_("Checks failed"), failed, _MISFLAG, "x")):
        fig.add_bar(y=ys, x=vals, orientation="h", name=name, customdata=raters,
                    marker=dict(color=color, line=dict(width=0.5, color="#ffffff"),
                                pattern=dict(shape=hatch, fgcolor="#ffffff")),
                    hovertemplate="%{customdata}: %{x} (%{fullData.name})<extra></extra>")
    fig.add_scatter(y=ys, x=answered, mode="text", textposition="middle right",
                    text=[f"{p}/{a} ({share(p / a)})" if a else "" for p, a
                          in zip(passed, answered, strict=True)],
                    showlegend=False, hoverinfo="skip", cliponaxis=False)
    fig.update_layout(barmode="stack", bargap=0.35)
    fig.update_yaxes(tickvals=ys, ticktext=raters, range=[-len(raters) + 0.4, 0.6],
                     showgrid=False, ticks="")
    top = max(answered, default=1)  # room at the right for the rate and its count
    fig.update_xaxes(title=_("Attention checks answered"), range=[0, top * 1.3],
                     dtick=1 if top <= 10 else None)
    return inert(fig)
