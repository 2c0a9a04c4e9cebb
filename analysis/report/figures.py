"""The report's figures, in the house style of :mod:`analysis.report.style`, each with the
caption and the alt text (the numbers it shows, in words) that the HTML report prints.

Every figure is drawn from numbers the bundle already holds; nothing is recomputed here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..calibration import DimensionCalibration
from ..results import Confusion
from ..serialize import Interval
from .format import dim_labels, dim_order, fmt, fmt_est, is_missing, natural_key
from .style import FONT_PX, OKABE_ITO, SYMBOLS, Width, use_template, width_px

if TYPE_CHECKING:
    from .model import ReportBundle

__all__ = ["Figure", "slug", "plain", "inert", "agreement_figure", "judges_figure",
           "calibration_figure", "calibration_pairs_figure", "leaderboard_figure", "sap_figure",
           "confusion_figures", "bland_altman_figures"]


@dataclass(frozen=True)
class Figure:
    """``key`` names the files (``figures/<key>.pdf``); made safe with :func:`slug`.

    The names on the figure (models, judges, rubric labels: text from files) are made inert
    on creation (:func:`inert`)."""

    key: str
    fig: go.Figure
    caption: str
    alt: str
    width: Width = "column"

    def __post_init__(self) -> None:
        inert(self.fig)


def plain(text: str) -> str:
    """``text`` as plotly shows it literally: plotly reads a subset of HTML in every label
    (``<b>``, ``<br>``, ``<a href=…>`` become bold text, line breaks and links in the SVG, the
    PDF and the interactive HTML figure) and HTML entities; a model named ``<a href=…>`` must
    stay those characters. (Hover templates also read ``%{…}``: names never go into them;
    they use ``%{fullData.name}`` and ``%{customdata}``.)"""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def inert(fig: go.Figure) -> go.Figure:
    """Every text of ``fig`` that can carry a name shown literally (see :func:`plain`): trace
    names, custom data, categories, tick labels and annotations (the panel titles). The
    figures' own words carry no markup, so escaping all of them changes nothing else; hover
    templates are the figures' own and keep theirs. Applied once per figure."""
    if fig.layout.meta == "h2h-inert":
        return fig

    def esc(values):
        if values is None or isinstance(values, str):
            return plain(values) if isinstance(values, str) else values
        return [plain(v) if isinstance(v, str) else v for v in values]

    def texts(values) -> bool:  # a list, or an array of objects or strings (plotly express)
        if values is None or isinstance(values, str):
            return isinstance(values, str)
        if hasattr(values, "dtype"):
            return values.dtype.kind in "OUS" and any(isinstance(v, str) for v in values)
        return any(isinstance(v, str) for v in values)

    for tr in fig.data:
        if isinstance(getattr(tr, "name", None), str):
            tr.name = plain(tr.name)
        for attr in ("customdata", "x", "y", "text", "hovertext", "labels", "ids"):
            vals = getattr(tr, attr, None) if attr in tr else None
            if texts(vals):
                setattr(tr, attr, esc(vals if isinstance(vals, str) else list(vals)))
    for ann in fig.layout.annotations:
        if isinstance(ann.text, str):
            ann.text = plain(ann.text)
    for key in fig.layout:
        if key.startswith(("xaxis", "yaxis")):
            for attr in ("ticktext", "categoryarray"):
                if texts(fig.layout[key][attr]):
                    fig.layout[key][attr] = esc(fig.layout[key][attr])
    fig.layout.meta = "h2h-inert"
    return fig


def slug(key: str) -> str:
    """A file-name-safe key: ``confusion_my judge/v2`` -> ``confusion_my-judge-v2``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", key)


def _base(width: Width, height: int) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(template=use_template(), width=width_px(width), height=height,
                      showlegend=False)
    return fig


def _err(vals: Sequence, lows: Sequence, highs: Sequence) -> dict:
    """Asymmetric error bars; a value without a CI gets none (never a zero-width bar that
    looks like certainty)."""
    plus = [(h - v) if not (is_missing(h) or is_missing(v)) else None
            for v, h in zip(vals, highs, strict=True)]
    minus = [(v - lo) if not (is_missing(lo) or is_missing(v)) else None
             for v, lo in zip(vals, lows, strict=True)]
    return dict(type="data", symmetric=False, array=plus, arrayminus=minus, thickness=1.0,
                width=2.5)


def _dodge(n: int, spread: float = 0.5) -> list[float]:
    """Vertical offsets of n series around a category (0 for one series)."""
    if n <= 1:
        return [0.0] * n
    step = spread / (n - 1)
    return [-spread / 2 + i * step for i in range(n)]


def _cat_axis(fig: go.Figure, labels: list[str], axis: str = "y") -> None:
    """Categories top to bottom at 0, -1, -2, ... (numeric so that series can be dodged)."""
    kw = dict(tickvals=[-i for i in range(len(labels))], ticktext=labels, showgrid=False,
              range=[-len(labels) + 0.5, 0.5], ticks="")
    (fig.update_yaxes if axis == "y" else fig.update_xaxes)(**kw)


def _legend_height(names: list[str], width: Width) -> int:
    """Room above the plot for a horizontal legend (it wraps at the figure's width)."""
    # plotly lays a horizontal legend out on a grid as wide as its longest entry: symbol
    # and gap (about 40 px) and the name at about 6 px a character in 11 px Times
    item = 40 + 6.0 * max((len(n) for n in names), default=0)
    per_row = max(1, int((width_px(width) - 10) / item))
    return 16 * math.ceil(len(names) / per_row) if names else 0


def agreement_figure(bundle: ReportBundle) -> Figure | None:
    a = bundle.analysis
    labels = dim_labels(bundle)
    blocks = [(d, x) for d in dim_order(bundle)
              if (x := a.agreement(d)) is not None and not is_missing(x.alpha_at_level)]
    if not blocks:
        return None
    dims = [d for d, _ in blocks]
    vals = [x.alpha_at_level for _, x in blocks]
    lows = [x.alpha_ci.low for _, x in blocks]
    highs = [x.alpha_ci.high for _, x in blocks]
    fig = _base("column", 70 + 26 * len(dims))
    ys = [-i for i in range(len(dims))]
    fig.add_scatter(x=vals, y=ys, mode="markers", marker=dict(size=7, color=OKABE_ITO[0]),
                    error_x=_err(vals, lows, highs), name="α",
                    customdata=[labels[d] for d in dims],
                    hovertemplate="%{customdata}: α = %{x:.3f}<extra></extra>")
    lo = min([0.0] + [v for v in lows + vals if not is_missing(v)])
    for x, text, side in ((0.667, "tentative", "right"), (0.800, "reliable", "left")):
        # labels above the plot, beside their line: they never sit on a point
        fig.add_vline(x=x, line=dict(color="#666666", width=0.8, dash="dot"))
        fig.add_annotation(x=x, y=1.0, yref="paper", yanchor="bottom", text=text,
                           showarrow=False, font=dict(size=FONT_PX - 2), xanchor=side,
                           xshift=-2 if side == "right" else 2)
    _cat_axis(fig, [labels[d] for d in dims])
    levels = sorted({x.level for _, x in blocks})
    fig.update_xaxes(title="Krippendorff's α" + (f" ({levels[0]})" if len(levels) == 1 else ""),
                     range=[math.floor(lo * 10) / 10, 1.0], dtick=0.2 if lo < 0.4 else 0.1)
    fig.update_layout(margin=dict(t=20))
    caption = (f"Human agreement per dimension: Krippendorff's α at each dimension's level of "
               f"measurement with {_ci_words(a.meta.bootstrap)}. Dotted lines: .667 (tentative "
               "conclusions) and .800 (reliable), after Krippendorff (2004).")
    alt = ("Dot plot of Krippendorff's alpha per dimension with confidence intervals: "
           + "; ".join(f"{labels[d]} {fmt_est(v, lo_, hi)}" for d, v, lo_, hi
                       in zip(dims, vals, lows, highs, strict=True))
           + ". Reference lines at 0.667 and 0.800.")
    return Figure("agreement", fig, caption, alt, "column")


def _ci_words(boot) -> str:
    """How the intervals of a figure were computed (a bootstrap's meta)."""
    if not boot.B:
        return "no confidence intervals (bootstrap skipped, B = 0)"
    return (f"{boot.level:.0%} percentile CIs ({boot.method} bootstrap, B = {boot.B}, "
            f"seed = {boot.seed})")


def _series(vals: Sequence[Interval | None]) -> tuple[list, list, list]:
    """The values, lows and highs of estimates (None: no point)."""
    return ([v.value if v else None for v in vals], [v.low if v else None for v in vals],
            [v.high if v else None for v in vals])


def judges_figure(bundle: ReportBundle) -> Figure | None:
    a = bundle.analysis
    labels = dim_labels(bundle)
    judges = sorted(a.judges)

    def comparison(j: str, d: str):
        m = a.judge(j, d)
        return m.vs_ceiling if m is not None else None

    dims = [d for d in dim_order(bundle) if any(comparison(j, d) for j in judges)]
    if not dims:
        return None
    # the ceiling on the first judge's items with a comparison
    ceil = [next(c for j in judges if (c := comparison(j, d))).ceiling for d in dims]
    series: list[tuple[str, list, list, list]] = [("Human ceiling", *_series(ceil))]
    for j in judges:
        series.append((j, *_series([c.judge if (c := comparison(j, d)) else None
                                    for d in dims])))
    names = [s[0] for s in series]
    fig = _base("column", 60 + 30 * len(dims) + _legend_height(names, "column"))
    offs = _dodge(len(series), 0.55)
    colors = ("#000000",) + OKABE_ITO
    for k, (name, v, lo, hi) in enumerate(series):
        fig.add_scatter(x=v, y=[-i - offs[k] for i in range(len(dims))], mode="markers",
                        name=name, error_x=_err(v, lo, hi),
                        marker=dict(size=6, color=colors[k % len(colors)],
                                    symbol="diamond" if k == 0 else SYMBOLS[(k - 1) % 8]),
                        customdata=[labels[d] for d in dims],
                        hovertemplate="%{fullData.name}, %{customdata}: QWK = %{x:.3f}"
                                      "<extra></extra>")
    _cat_axis(fig, [labels[d] for d in dims])
    fig.update_xaxes(title="Quadratic-weighted κ", dtick=0.1)
    fig.update_layout(showlegend=True)
    caption = ("Judges against the human ceiling: QWK of each judge and of the humans "
               "themselves (the ceiling) against the same leave-one-out consensus of the other "
               f"humans on the same items, with {_ci_words(a.meta.bootstrap)}; the same "
               "resamples for judge and ceiling (paired).")
    alt = ("Dot plot of quadratic-weighted kappa per dimension for the human ceiling and each "
           "judge, with confidence intervals: " + "; ".join(
               f"{labels[d]}: " + ", ".join(f"{n} {fmt(s[1][i])}" for s in series
                                            for n in (s[0],))
               for i, d in enumerate(dims)) + ".")
    return Figure("judges_vs_ceiling", fig, caption, alt, "column")


def calibration_figure(calib: Mapping[str, DimensionCalibration],
                       labels: dict[str, str] | None = None) -> go.Figure | None:
    """QWK with paired-bootstrap CIs per configuration and dimension (the app's Calibration
    page; the report shows the same QWKs in the judges figure)."""
    if not calib:
        return None
    labels = labels or {}
    dims = list(calib)
    cfgs = sorted({c for r in calib.values() for c in r.configs})
    fig = _base("column", 60 + 30 * len(dims) + _legend_height(cfgs, "column"))
    offs = _dodge(len(cfgs), 0.5)
    for k, cfg in enumerate(cfgs):
        v, lo, hi = _series([c.qwk if (c := calib[d].configs.get(cfg)) else None
                             for d in dims])
        fig.add_scatter(x=v, y=[-i - offs[k] for i in range(len(dims))], mode="markers",
                        name=cfg, error_x=_err(v, lo, hi),
                        marker=dict(size=6, symbol=SYMBOLS[k % 8]))
    _cat_axis(fig, [labels.get(d, d) for d in dims])
    fig.update_xaxes(title="Quadratic-weighted κ (paired bootstrap 95% CI)")
    fig.update_layout(showlegend=True)
    return inert(fig)


def calibration_pairs_figure(bundle: ReportBundle) -> Figure | None:
    """Paired differences in QWK between judge configurations (only with two or more)."""
    labels = dim_labels(bundle)
    calib = bundle.calibration or {}
    dims = [d for d in dim_order(bundle) if d in calib]
    pairs = sorted({(p.a, p.b) for d in dims for p in calib[d].pairs if p.metric == "qwk"})
    if not pairs:
        return None
    names = [f"{a} − {b}" for a, b in pairs]
    fig = _base("column", 60 + 30 * len(dims) + _legend_height(names, "column"))
    offs = _dodge(len(pairs), 0.45)
    for k, (pa, pb) in enumerate(pairs):
        rows = [calib[d].pair(pa, pb, "qwk") for d in dims]
        v = [r.diff if r else None for r in rows]
        fig.add_scatter(x=v, y=[-i - offs[k] for i in range(len(dims))], mode="markers",
                        name=names[k], marker=dict(size=6, symbol=SYMBOLS[k % 8]),
                        error_x=_err(v, [r.low if r else None for r in rows],
                                     [r.high if r else None for r in rows]))
    fig.add_vline(x=0, line=dict(color="#000000", width=0.8))
    _cat_axis(fig, [labels[d] for d in dims])
    fig.update_xaxes(title="Difference in quadratic-weighted κ")
    fig.update_layout(showlegend=True)
    m = bundle.manifest.bootstrap
    caption = ("Judge configurations compared: the difference in QWK between two "
               "configurations per dimension, with 95% percentile CIs from a paired item "
               f"bootstrap (B = {m.B}, seed = {m.seed}); right of zero favours the first.")

    def diff(d: str, pr: tuple[str, str]) -> float | None:
        p = calib[d].pair(*pr, "qwk")
        return p.diff if p else None

    alt = ("Dot plot of differences in quadratic-weighted kappa between judge configurations "
           "per dimension: " + "; ".join(
               f"{labels[d]}: " + ", ".join(
                   f"{n} {fmt(diff(d, pr), signed=True)}"
                   for n, pr in zip(names, pairs, strict=True)) for d in dims) + ".")
    return Figure("calibration", fig, caption, alt, "column")


def _scale_words(bundle: ReportBundle, dims: list[str]) -> str:
    scales = {(d.min, d.max) for d in bundle.dimensions if d.key in dims}
    if len(scales) == 1:
        lo, hi = scales.pop()
        return f"{lo:g}–{hi:g}"
    return "points on each dimension's scale"


def leaderboard_figure(bundle: ReportBundle, src: str) -> Figure | None:
    board = bundle.leaderboards[src]
    labels = dim_labels(bundle)
    cells = [c for c in board.cells if c.task == "all"]
    dims = [d for d in dim_order(bundle) if any(c.dimension == d for c in cells)]
    models = sorted({c.model for c in cells}, key=natural_key)
    if not dims or not models:
        return None
    fig = _base("text", 180 + _legend_height(models, "text"))
    offs = _dodge(len(models), 0.6)
    grid = {(c.model, c.dimension): c for c in cells}
    for k, m in enumerate(models):
        cs = [grid.get((m, d)) for d in dims]
        v = [c.mean if c else None for c in cs]
        fig.add_scatter(x=[i + offs[k] for i in range(len(dims))], y=v, mode="markers",
                        name=m, marker=dict(size=6, symbol=SYMBOLS[k % 8]),
                        error_y=_err(v, [c.low if c else None for c in cs],
                                     [c.high if c else None for c in cs]),
                        customdata=[labels[d] for d in dims],
                        hovertemplate="%{fullData.name}, %{customdata}: %{y:.2f}<extra></extra>")
    fig.update_xaxes(tickvals=list(range(len(dims))), ticktext=[labels[d] for d in dims],
                     range=[-0.5, len(dims) - 0.5], showgrid=False, ticks="")
    fig.update_yaxes(title=f"Mean score ({_scale_words(bundle, dims)})")
    scales = {(d.min, d.max) for d in bundle.dimensions if d.key in dims}
    if len(scales) == 1:  # the whole scale, so that distances read as they are
        lo, hi = scales.pop()
        fig.update_yaxes(range=[lo - 0.15, hi + 0.15], dtick=1 if hi - lo > 1 else 0.25)
    fig.update_layout(showlegend=True)
    caption = (f"Model leaderboard ({board.source}): mean score per companion model and "
               "dimension over all task families (the mean of item means), with 95% percentile "
               f"CIs from an item bootstrap (B = {board.B}, seed = {board.seed}).")
    alt = (f"Dot plot of mean scores per model and dimension ({board.source}): " + "; ".join(
        f"{m}: " + ", ".join(f"{labels[c.dimension]} {fmt(c.mean, 'points')}"
                             for d in dims for c in cells
                             if c.model == m and c.dimension == d) for m in models) + ".")
    return Figure(slug(f"leaderboard_{src}"), fig, caption, alt, "text")


def sap_figure(bundle: ReportBundle, src: str) -> Figure | None:
    board = bundle.leaderboards[src]
    rows = board.sap_vs_baseline
    if not rows:
        return None
    labels = dim_labels(bundle)
    dims = [d for d in dim_order(bundle) if any(r.dimension == d for r in rows)]
    models = sorted({r.model for r in rows}, key=natural_key)
    fig = _base("column", 60 + 30 * len(dims) + _legend_height(models, "column"))
    offs = _dodge(len(models), 0.5)
    grid = {(r.model, r.dimension): r for r in rows}
    for k, m in enumerate(models):
        rs = [grid.get((m, d)) for d in dims]
        v = [r.diff if r else None for r in rs]
        fig.add_scatter(x=v, y=[-i - offs[k] for i in range(len(dims))], mode="markers",
                        name=m, marker=dict(size=6, symbol=SYMBOLS[k % 8]),
                        error_x=_err(v, [r.low if r else None for r in rs],
                                     [r.high if r else None for r in rs]),
                        customdata=[labels[d] for d in dims],
                        hovertemplate="%{fullData.name}, %{customdata}: %{x:+.2f}<extra></extra>")
    fig.add_vline(x=0, line=dict(color="#000000", width=0.8))
    _cat_axis(fig, [labels[d] for d in dims])
    fig.update_xaxes(title="SAP − baseline (score points)")
    fig.update_layout(showlegend=True)
    caption = (f"Secure Attachment Persona minus baseline ({board.source}): difference in "
               "mean score per model and dimension, paired by scenario where the model answered "
               "a scenario in both conditions, with 95% percentile CIs from a bootstrap (B = "
               f"{board.B}, seed = {board.seed}); right of zero favours SAP.")
    alt = (f"Dot plot of SAP minus baseline differences ({board.source}): " + "; ".join(
        f"{r.model} {labels[r.dimension]} "
        f"{fmt_est(r.diff, r.low, r.high, 'points', signed=True)}"
        for d in dims for r in rows if r.dimension == d) + ".")
    return Figure(slug(f"sap_vs_baseline_{src}"), fig, caption, alt, "column")


def _facet_titles(fig: go.Figure, x: str, y: str) -> None:
    """One x title under the panels and one y title beside them (per-panel titles collide in
    a text-wide figure); room above for the panel labels (the rubric's labels)."""
    fig.add_annotation(text=x, xref="paper", yref="paper", x=0.5, y=0, yanchor="top",
                       yshift=-26, showarrow=False, font=dict(size=FONT_PX))
    fig.add_annotation(text=y, xref="paper", yref="paper", x=0, y=0.5, xanchor="right",
                       xshift=-30, textangle=-90, showarrow=False, font=dict(size=FONT_PX))
    fig.update_layout(margin=dict(t=22, b=44, l=52, r=8))


def _grid(n: int) -> tuple[int, int]:
    cols = min(n, 5) if n <= 5 else 3
    return math.ceil(n / cols), cols


def confusion_figures(bundle: ReportBundle) -> list[Figure]:
    a = bundle.analysis
    labels = dim_labels(bundle)
    out = []
    for judge in sorted(a.judges):
        confs = [(d, m.confusion) for d in dim_order(bundle)
                 if (m := a.judge(judge, d)) is not None and m.confusion]
        if not confs:
            continue
        r, c = _grid(len(confs))
        fig = make_subplots(rows=r, cols=c, subplot_titles=[labels[d] for d, _ in confs],
                            horizontal_spacing=0.06, vertical_spacing=0.16)
        fig.update_layout(template=use_template(), width=width_px("text"), height=70 + 130 * r,
                          coloraxis=dict(colorscale="Blues", cmin=0, cmax=1, showscale=False))
        for i, (_, conf) in enumerate(confs):
            ticks = conf.labels or [f"{v:g}" for v in conf.values]
            ticks = [str(t) for t in ticks]
            matrix = [list(row) for row in conf.matrix]
            z = [[x / s if (s := sum(row)) else 0 for x in row] for row in matrix]
            fig.add_trace(go.Heatmap(z=z, x=ticks, y=ticks, coloraxis="coloraxis",
                                     text=matrix, texttemplate="%{text}",
                                     textfont=dict(size=FONT_PX - 2), xgap=1, ygap=1,
                                     hovertemplate="humans %{y}, judge %{x}: %{text}"
                                                   "<extra></extra>"),
                          row=i // c + 1, col=i % c + 1)
        fig.update_xaxes(showgrid=False, showline=False, ticks="", type="category")
        fig.update_yaxes(showgrid=False, showline=False, ticks="", type="category",
                         autorange="reversed")
        for ann in fig.layout.annotations:
            ann.font = dict(size=FONT_PX)
        _facet_titles(fig, "Judge score", "Human median")
        caption = (f"Confusion of judge {judge} with the humans: rows the human median "
                   "(the lower median for an even count), columns the judge's score; cells "
                   "count items, shading shows the share of the row.")
        alt = (f"Confusion heatmaps of judge {judge} against the human median, one per "
               "dimension: " + "; ".join(
                   f"{labels[d]}: {_diag(conf)} of {_total(conf)} items on the diagonal"
                   for d, conf in confs) + ".")
        out.append(Figure(slug(f"confusion_{judge}"), fig, caption, alt, "text"))
    return out


def _diag(conf: Confusion) -> int:
    return sum(conf.matrix[i][i] for i in range(len(conf.matrix)))


def _total(conf: Confusion) -> int:
    return sum(sum(r) for r in conf.matrix)


def bland_altman_figures(bundle: ReportBundle) -> list[Figure]:
    labels = dim_labels(bundle)
    ba = bundle.bland_altman
    order = {d: i for i, d in enumerate(dim_order(bundle))}
    scale = {d.key: (d.min, d.max) for d in bundle.dimensions}
    out = []
    for judge in sorted({b.judge for b in ba}):
        bs = sorted([b for b in ba if b.judge == judge and b.diff],
                    key=lambda b: order.get(b.dimension, 99))
        if not bs:
            continue
        r, c = _grid(len(bs))
        fig = make_subplots(rows=r, cols=c, subplot_titles=[labels[b.dimension] for b in bs],
                            horizontal_spacing=0.07, vertical_spacing=0.2, shared_yaxes=True)
        fig.update_layout(template=use_template(), width=width_px("text"), height=70 + 140 * r,
                          showlegend=False)
        words, shapes = [], []
        for i, b in enumerate(bs):
            row, col = i // c + 1, i % c + 1
            fig.add_scatter(x=list(b.mean), y=list(b.diff), mode="markers", row=row, col=col,
                            marker=dict(size=4, opacity=0.35, color=OKABE_ITO[0]),
                            hovertemplate="mean %{x:.2f}, difference %{y:+.2f}<extra></extra>")
            # the bias and limits of agreement h2h analyze computed (not recomputed here)
            m = bundle.analysis.judge(judge, b.dimension)
            la = m.bland_altman if m is not None else None
            if la is None or is_missing(la.bias):
                continue
            ax = "" if i == 0 else str(i + 1)
            sc = scale.get(b.dimension)
            if sc:  # the whole scale on every panel, so the panels compare
                fig.update_xaxes(range=[sc[0] - 0.3, sc[1] + 0.3], dtick=1, row=row, col=col)
            # shapes as plain dicts: add_hline per panel re-validates every shape (slow)
            shapes += [dict(type="line", xref=f"x{ax} domain", x0=0, x1=1, yref=f"y{ax}",
                            y0=y, y1=y, line=dict(color=OKABE_ITO[5], width=0.9, dash=dash))
                       for y, dash in ((la.bias, "solid"), (la.low, "dash"),
                                       (la.high, "dash")) if not is_missing(y)]
            pts = {k: fmt(getattr(la, k), "points", signed=True)
                   for k in ("bias", "low", "high")}
            words.append(f"{labels[b.dimension]}: bias {pts['bias']}, limits {pts['low']} to "
                         f"{pts['high']} ({la.n_items} items)")
        fig.update_layout(shapes=shapes)
        for ann in fig.layout.annotations:
            ann.font = dict(size=FONT_PX)
        _facet_titles(fig, "Mean of judge and humans (points)", "Judge − humans (points)")
        caption = (f"Bland–Altman plots of judge {judge} against the mean of the humans per "
                   "item: the difference against the average of the two; solid line the mean "
                   "difference (bias), dashed lines the 95% limits of agreement (bias ± 1.96 "
                   "SD). Points overlap on discrete scales.")
        alt = (f"Bland-Altman scatter plots of judge {judge} minus the human mean per item: "
               + "; ".join(words) + ".")
        out.append(Figure(slug(f"bland_altman_{judge}"), fig, caption, alt, "text"))
    return out
