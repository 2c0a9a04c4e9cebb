"""The "Model ranking" section: companion models at the judge's scale with the humans'
validity (the prediction-powered leaderboard of :mod:`analysis.ppi_board`, as `h2h
leaderboard` gives it): a forest plot of the humans-only and combined CIs, a table that fits
an ACL column, and one sentence for a paper's methods section."""

from __future__ import annotations

from .figures import Figure, _base, _cat_axis, _legend_height, slug
from .findings import Finding, SectionOutput
from .format import dim_labels, dim_order, fmt, fmt_est, natural_key
from .model import ReportBundle
from .paper import Col, Est, Group, PaperTable
from .style import SYMBOLS
from .tables import Table

__all__ = ["ranking", "ranking_figure", "ranking_figures", "ranking_tables",
           "ranking_details", "MAX_ROWS"]

_FAMILIES = (("human_only", "Humans only"), ("combined", "Combined (PPI++)"))
MAX_ROWS = 12  # model rows per paper table and figure: more do not fit a page


def _rows(board: dict, dim: str) -> list[dict]:
    return sorted([r for r in board["rows"] if r["dimension"] == dim and r["task"] is None],
                  key=lambda r: natural_key(r["model"]))


def _ranks(board: dict, dim: str) -> dict[str, dict]:
    got = next((x for x in board["meta"]["ranks"]
                if x["dimension"] == dim and x["task"] is None), None)
    return {m["model"]: m for m in got["models"]} if got else {}


def _dims(order: list[str], board: dict) -> list[str]:
    have = {r["dimension"] for r in board["rows"]}
    return [d for d in order if d in have]


def _chunks(order: list[str], board: dict) -> list[list[str]]:
    """Dimensions in rubric order, grouped so that no group holds more than
    :data:`MAX_ROWS` model rows (one paper table and one figure per group)."""
    out: list[list[str]] = [[]]
    count = 0
    for d in _dims(order, board):
        n = len(_rows(board, d))
        if not n:
            continue
        if count and count + n > MAX_ROWS:
            out.append([])
            count = 0
        out[-1].append(d)
        count += n
    return [c for c in out if c]


def ranking_figures(bundle: ReportBundle, board: dict | None = None) -> list[Figure]:
    """The forest plots, one per group of dimensions (:func:`_chunks`)."""
    board = board or bundle.ranking
    if not board:
        return []
    labels, order = dim_labels(bundle), dim_order(bundle)
    figs = [ranking_figure(board, labels, order, dims, k) for k, dims in
            enumerate(_chunks(order, board))]
    return [f for f in figs if f is not None]


def ranking_figure(board: dict | None, labels: dict[str, str], order: list[str],
                   dims: list[str] | None = None, part: int = 0) -> Figure | None:
    """Forest plot: per dimension and model, the humans-only and the combined 95% CIs
    (``labels``: dimension key -> label; ``order``: the dimensions' order)."""
    if not board:
        return None
    cats: list[str] = []
    vals: dict[str, list] = {k: [] for k, _ in _FAMILIES}
    for d in dims if dims is not None else _dims(order, board):
        for r in _rows(board, d):
            cats.append(f"{labels.get(d, d)} · {r['model']}")
            vals["human_only"].append(r["human_only"])
            vals["combined"].append({"estimate": r["estimate"], "low": r["low"],
                                     "high": r["high"]})
    if not cats:
        return None
    fig = _base("column", 60 + 16 * len(cats) + _legend_height([n for _, n in _FAMILIES],
                                                                "column"))
    for k, (key, name) in enumerate(_FAMILIES):
        est = [v["estimate"] for v in vals[key]]
        plus = [None if v["high"] is None or v["estimate"] is None else v["high"] - v["estimate"]
                for v in vals[key]]
        minus = [None if v["low"] is None or v["estimate"] is None else v["estimate"] - v["low"]
                 for v in vals[key]]
        fig.add_scatter(x=est, y=[-i + (0.15 if k == 0 else -0.15) for i in range(len(cats))],
                        mode="markers", name=name,
                        marker=dict(size=6, symbol=SYMBOLS[k % 8]),
                        error_x=dict(type="data", symmetric=False, array=plus,
                                     arrayminus=minus, thickness=1.0, width=2.5),
                        customdata=cats,
                        hovertemplate="%{customdata}: %{x:.2f}<extra>%{fullData.name}</extra>")
    _cat_axis(fig, cats)
    fig.update_xaxes(title="Mean score (95% CI)")
    fig.update_layout(showlegend=True)
    j = board["meta"].get("judge", {}).get("name", "the judge")
    caption = (f"Model ranking: mean score per companion model and dimension over all task "
               f"families from the psychologists alone and combined with judge {j} by "
               f"PPI++ (95% normal CIs; the combined interval is valid whatever the judge's "
               f"bias).")
    alt = ("Forest plot of model means: " + "; ".join(
        f"{c}: humans {fmt_est(h['estimate'], h['low'], h['high'], 'points')}, combined "
        f"{fmt_est(x['estimate'], x['low'], x['high'], 'points')}"
        for c, h, x in zip(cats, vals["human_only"], vals["combined"], strict=True)) + ".")
    return Figure(slug("model_ranking" + (f"_{part + 1}" if part else "")), fig, caption,
                  alt, "column")


def _why(board: dict, r: dict) -> str:
    notes = [n["note"] for n in board["meta"]["notes"]
             if n["model"] == r["model"] and n["dimension"] == r["dimension"]
             and n["task"] is None]
    return notes[0] if notes else "not estimable"


def ranking_tables(bundle: ReportBundle, board: dict) -> list[PaperTable]:
    """The paper tables: dimensions in rubric order, a new table (continued) whenever one
    would hold more than :data:`MAX_ROWS` model rows."""
    labels, order = dim_labels(bundle), dim_order(bundle)
    meta = board["meta"]
    j = meta.get("judge", {}).get("name", "the judge")
    out = []
    for k, dims in enumerate(_chunks(order, board)):
        rows: list = []
        for d in dims:
            ranks = _ranks(board, d)
            rows.append(Group(labels.get(d, d)))
            for r in _rows(board, d):
                rk = ranks.get(r["model"])
                rank = "—" if rk is None else (str(rk["rank"]) if rk["low"] is None else
                                               f"{rk['rank']} [{rk['low']}–{rk['high']}]")
                h = r["human_only"]
                rows.append((r["model"], r["n_human"],
                             Est(h["estimate"], h["low"], h["high"]),
                             Est(r["estimate"], r["low"], r["high"], why=_why(board, r)),
                             rank))
        out.append(PaperTable(
            "model_ranking" if k == 0 else f"model_ranking_{k + 1}",
            f"Model ranking (humans only and combined with judge {j})"
            + (" (continued)" if k else ""),
            (f"Mean score per model over all task families (n = human-rated replies; the "
             f"judge scored every reply), humans alone and combined with the judge by "
             f"PPI++, with {meta['level']:.0%} CIs; rank [interval] from a bootstrap "
             f"(B = {meta['B']}, seed = {meta['seed']}). " + meta["method_sentence"])
            if k == 0 else "Continued from the previous table.",
            (Col("Model", "wrap"), Col("n", "count"), Col("Humans", "points"),
             Col("Combined", "points"), Col("Rank", "text")), tuple(rows), csv="model_ranking",
            bare_reason="fewer human-rated replies than the minimum"))
    return out


def ranking_details(board: dict) -> Table:
    """Every row of the leaderboard at full precision (the CSV), ranks beside."""
    import pandas as pd

    ranks = {(x["dimension"], x["task"], m["model"]): m for x in board["meta"]["ranks"]
             for m in x["models"]}
    rows = []
    for r in board["rows"]:
        rk = ranks.get((r["dimension"], r["task"], r["model"]), {})
        rows.append({"model": r["model"], "dimension": r["dimension"],
                     "task": r["task"] or "all", "n_human": r["n_human"],
                     "n_judge": r["n_judge"], "estimate": r["estimate"], "low": r["low"],
                     "high": r["high"], "method": r["method"], "lambda": r["lambda"],
                     "human_estimate": r["human_only"]["estimate"],
                     "human_low": r["human_only"]["low"], "human_high": r["human_only"]["high"],
                     "judge_estimate": r["judge_only"]["estimate"],
                     "judge_low": r["judge_only"]["low"], "judge_high": r["judge_only"]["high"],
                     "rank": rk.get("rank"), "rank_low": rk.get("low"),
                     "rank_high": rk.get("high")})
    meta = board["meta"]
    return Table("model_ranking", "Model ranking",
                 f"Combined (PPI++), humans-only and judge-only (uncalibrated) means per model, "
                 f"dimension and task family; {meta['level']:.0%} normal CIs; ranks with "
                 f"bootstrap intervals (B = {meta['B']}, seed = {meta['seed']}).",
                 pd.DataFrame(rows), (("estimate", "low", "high"),
                                      ("human_estimate", "human_low", "human_high"),
                                      ("judge_estimate", "judge_low", "judge_high")))


def ranking(bundle: ReportBundle) -> SectionOutput | None:
    board = bundle.ranking
    if not board or not board["rows"]:
        return None
    out = SectionOutput()
    out.tables += ranking_tables(bundle, board)
    out.figures += ranking_figures(bundle, board)
    out.details.append(ranking_details(board))
    labels = dim_labels(bundle)
    for d in _dims(dim_order(bundle), board):
        rs = [r for r in _rows(board, d) if r["estimate"] is not None
              and r["low"] is not None and r["human_only"]["low"] is not None]
        if not rs:
            continue
        ratio = sum((r["high"] - r["low"]) / (r["human_only"]["high"] - r["human_only"]["low"])
                    for r in rs) / len(rs)
        top = max(rs, key=lambda r: r["estimate"])
        ranks = _ranks(board, d)
        rk = ranks.get(top["model"], {})
        sure = rk.get("low") == 1 and rk.get("high") == 1
        out.findings.append(Finding(
            f"Combined with the judge (PPI++): {top['model']} ranks first on "
            f"{labels.get(d, d)} ({fmt(top['estimate'], 'points')}"
            + (", rank interval [1–1]" if sure else
               f", rank interval [{rk.get('low')}–{rk.get('high')}]: not surely first"
               if rk.get("low") is not None else "") + f"); the combined CIs are on average "
            f"{ratio:.2f} times as wide as the humans' alone.", "finding", d))
    meta = board["meta"]
    for left in meta["dimensions_left_out"]:
        out.findings.append(Finding(f"{labels.get(left['dimension'], left['dimension'])}: "
                                    f"not ranked ({left['reason']}).", "not_estimable",
                                    left["dimension"]))
    out.notes.append("Methods: " + meta["method_sentence"])
    out.notes += [f"{n['model']}, {labels.get(n['dimension'], n['dimension'])}: {n['note']}"
                  for n in meta["notes"] if n["task"] is None]
    return out
