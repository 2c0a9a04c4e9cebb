"""The report's figures (plotly), built from the bundle."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = ["report_figures", "calibration_figure"]

_LAYOUT = dict(template="plotly_white", font=dict(family="Helvetica, Arial, sans-serif", size=13),
               margin=dict(l=60, r=20, t=60, b=50), height=420, width=820)


def _err(vals, lows, highs):
    return dict(type="data", symmetric=False,
                array=[(h - v) if None not in (h, v) else 0 for v, h in zip(vals, highs,
                                                                           strict=True)],
                arrayminus=[(v - lo) if None not in (lo, v) else 0 for v, lo in zip(vals, lows,
                                                                                 strict=True)])


def _agreement(a: dict) -> go.Figure:
    dims = [d for d in a["dimensions"] if "alpha" in a["dimensions"][d]]
    vals = [a["dimensions"][d]["alpha"][a["dimensions"][d]["level"]] for d in dims]
    lows = [a["dimensions"][d]["alpha_ci"]["low"] for d in dims]
    highs = [a["dimensions"][d]["alpha_ci"]["high"] for d in dims]
    fig = go.Figure(go.Scatter(x=dims, y=vals, mode="markers", marker=dict(size=11),
                               error_y=_err(vals, lows, highs), name="alpha"))
    for y, label in ((0.800, "reliable (.800)"), (0.667, "tentative (.667)")):
        fig.add_hline(y=y, line_dash="dot", annotation_text=label,
                      annotation_position="bottom right")
    fig.update_layout(title="Human agreement: Krippendorff's alpha with 95% CI", **_LAYOUT)
    fig.update_yaxes(title="alpha", range=[min([0.0] + [v for v in lows if v is not None]),
                                           1.0])
    return fig


def _judges(a: dict) -> go.Figure | None:
    if not a["judges"]:
        return None
    fig = go.Figure()
    for judge, dims in a["judges"].items():
        ds = [d for d in dims if "qwk" in dims[d]]
        fig.add_bar(x=ds, y=[dims[d]["qwk"] for d in ds], name=judge)
    ds = list(a["human_ceiling"])
    hc = [a["human_ceiling"][d] for d in ds]
    vals = [c.get("qwk") for c in hc]
    fig.add_scatter(x=ds, y=vals, mode="markers",
                    marker=dict(symbol="line-ew-open", size=40, line=dict(width=3)),
                    error_y=_err(vals, [(c.get("qwk_ci") or {}).get("low") for c in hc],
                                 [(c.get("qwk_ci") or {}).get("high") for c in hc]),
                    name="human ceiling (95% CI)")
    fig.update_layout(title="Judges against humans: QWK beside the human ceiling",
                      barmode="group", **_LAYOUT)
    fig.update_yaxes(title="quadratic-weighted kappa")
    return fig


def calibration_figure(calib: dict) -> go.Figure | None:
    """QWK with paired-bootstrap CIs per configuration and dimension (also used in the app)."""
    if not calib:
        return None
    fig = go.Figure()
    cfgs = sorted({c for r in calib.values() for c in r["configs"]})
    for cfg in cfgs:
        ds = [d for d in calib if cfg in calib[d]["configs"]]
        q = [calib[d]["configs"][cfg]["qwk"] for d in ds]
        fig.add_scatter(x=ds, y=[x["value"] for x in q], mode="markers", name=cfg,
                        marker=dict(size=10),
                        error_y=_err([x["value"] for x in q], [x["low"] for x in q],
                                     [x["high"] for x in q]))
    fig.update_layout(title="Calibration: QWK per configuration (paired bootstrap 95% CI)",
                      scattermode="group", **_LAYOUT)
    return fig


def _leaderboard(board: dict, title: str) -> go.Figure:
    cells = [c for c in board["cells"] if c["task"] == "all"]
    fig = go.Figure()
    for model in sorted({c["model"] for c in cells}):
        cs = [c for c in cells if c["model"] == model]
        fig.add_bar(x=[c["dimension"] for c in cs], y=[c["mean"] for c in cs], name=model,
                    error_y=_err([c["mean"] for c in cs], [c["low"] for c in cs],
                                 [c["high"] for c in cs]))
    fig.update_layout(title=title, barmode="group", **_LAYOUT)
    fig.update_yaxes(title="mean score")
    return fig


def _sap(board: dict) -> go.Figure | None:
    rows = board["sap_vs_baseline"]
    if not rows:
        return None
    fig = go.Figure()
    for model in sorted({r["model"] for r in rows}):
        rs = [r for r in rows if r["model"] == model]
        fig.add_scatter(x=[r["dimension"] for r in rs], y=[r["diff"] for r in rs],
                        mode="markers", name=model, marker=dict(size=11),
                        error_y=_err([r["diff"] for r in rs], [r["low"] for r in rs],
                                     [r["high"] for r in rs]))
    fig.add_hline(y=0, line_dash="dot")
    fig.update_layout(title="Secure Attachment Persona minus baseline (95% CI)",
                      showlegend=True, **_LAYOUT)
    return fig


def _grid(n: int) -> tuple[int, int]:
    cols = min(n, 3)
    return math.ceil(n / cols), cols


def _confusions(a: dict) -> list[tuple[str, go.Figure]]:
    out = []
    for judge, dims in a["judges"].items():
        ds = [d for d in dims if dims[d].get("confusion")]
        if not ds:
            continue
        r, c = _grid(len(ds))
        fig = make_subplots(rows=r, cols=c, subplot_titles=ds)
        for i, d in enumerate(ds):
            conf = dims[d]["confusion"]
            labels = [f"{v:g}" for v in conf["values"]]
            fig.add_trace(go.Heatmap(z=conf["matrix"], x=labels, y=labels, coloraxis="coloraxis",
                                     text=conf["matrix"], texttemplate="%{text}"),
                          row=i // c + 1, col=i % c + 1)
        fig.update_layout(title=f"Confusion: {judge} (columns) vs human median (rows)",
                          coloraxis=dict(colorscale="Blues"),
                          **{**_LAYOUT, "height": 330 * r, "width": 330 * c + 80})
        out.append((f"confusion_{judge}", fig))
    return out


def _bland_altman(ba: list[dict]) -> list[tuple[str, go.Figure]]:
    out = []
    for judge in sorted({b["judge"] for b in ba}):
        bs = [b for b in ba if b["judge"] == judge and b["diff"]]
        if not bs:
            continue
        r, c = _grid(len(bs))
        fig = make_subplots(rows=r, cols=c, subplot_titles=[b["dimension"] for b in bs])
        for i, b in enumerate(bs):
            row, col = i // c + 1, i % c + 1
            fig.add_scatter(x=b["mean"], y=b["diff"], mode="markers", showlegend=False,
                            marker=dict(size=5, opacity=0.5), row=row, col=col)
            n = len(b["diff"])
            mean = sum(b["diff"]) / n
            sd = (sum((x - mean) ** 2 for x in b["diff"]) / max(n - 1, 1)) ** 0.5
            for y, dash in ((mean, "solid"), (mean - 1.96 * sd, "dot"),
                            (mean + 1.96 * sd, "dot")):
                fig.add_hline(y=y, line_dash=dash, row=row, col=col)
        fig.update_layout(title=f"Bland–Altman: {judge} minus human mean, by their average",
                          **{**_LAYOUT, "height": 330 * r, "width": 330 * c + 80})
        out.append((f"bland_altman_{judge}", fig))
    return out


def report_figures(bundle: dict) -> list[tuple[str, go.Figure]]:
    a = bundle["analysis"]
    figs: list[tuple[str, go.Figure | None]] = [
        ("agreement", _agreement(a)), ("judges_vs_ceiling", _judges(a)),
        ("calibration", calibration_figure(bundle["calibration"]))]
    for src, board in bundle["leaderboards"].items():
        figs.append((f"leaderboard_{src}", _leaderboard(board, f"Leaderboard: "
                                                              f"{board['source']} (95% CI)")))
        figs.append((f"sap_vs_baseline_{src}", _sap(board)))
    figs += _confusions(a) + _bland_altman(bundle["bland_altman"])
    from .metrics_section import metric_figures

    figs += metric_figures(bundle)  # "Do the benchmark's metrics agree with psychologists?"
    return [(k, f) for k, f in figs if f is not None]
