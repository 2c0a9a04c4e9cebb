"""Sections on the companion models, the H2HTalk protocol view: the leaderboard by dimension
and task family, Secure Attachment Persona versus baseline, safety red flags."""

from __future__ import annotations

from messages import Msg, join_msgs

from ..leaderboard import Leaderboard, LeaderCell, SapDifference
from .figures import leaderboard_figure, sap_figure
from .findings import Finding, Glance, SectionOutput, ordered
from .format import dim_labels, dim_order, fmt, fmt_est, is_missing, natural_key
from .model import ReportBundle
from .paper import Col, Est, Group, PaperTable, best
from .tables import leaderboard_details

__all__ = ["leaderboard", "sap", "safety"]


def _tasks(bundle: ReportBundle, cells: tuple[LeaderCell, ...]) -> list[str]:
    """"all", then the task families in the rubric's order."""
    seen = set(c.task for c in cells if c.task != "all")
    order = [t for t in bundle.tasks if t in seen]
    return ["all"] + order + sorted(seen - set(order))


def leaderboard(bundle: ReportBundle) -> SectionOutput | None:
    if not bundle.leaderboards:
        return None
    out = SectionOutput()
    for src, board in bundle.leaderboards.items():
        if not board.cells:
            continue
        out.tables.append(_leaderboard_table(bundle, src, board))
        if fig := leaderboard_figure(bundle, src):
            out.figures.append(fig)
        out.details += [t for t in leaderboard_details(bundle, src)
                        if t.key == f"leaderboard_{src}"]
    if "humans" in bundle.leaderboards:
        out.findings += _leader_findings(bundle)
    return out


def _leaderboard_table(bundle: ReportBundle, src: str, board: Leaderboard) -> PaperTable:
    labels = dim_labels(bundle)
    cells = board.cells
    dims = [d for d in dim_order(bundle) if any(c.dimension == d for c in cells)]
    models = sorted({c.model for c in cells}, key=natural_key)
    row_n = {(r.model, r.task): r.n_items for r in board.rows}
    fewer: dict[str, set[str]] = {}  # dimension -> groups where a cell has fewer items
    rows: list = []
    for task in _tasks(bundle, cells):
        rows.append(Group("All task families" if task == "all" else task.capitalize()))
        grid = {(c.model, c.dimension): c for c in cells if c.task == task}
        tops = {d: best([grid[(m, d)].mean if (m, d) in grid else None for m in models])
                if ordered(bundle, d) else None for d in dims}
        for k, m in enumerate(models):
            ns = [grid[(m, d)].n_items for d in dims if (m, d) in grid]
            if not ns:
                continue
            n = row_n.get((m, task), max(ns))
            for d in dims:
                if (m, d) in grid and grid[(m, d)].n_items < n:
                    fewer.setdefault(d, set()).add(task)
            rows.append((m, n) + tuple(
                Est(*_mean(grid.get((m, d))), bold=tops[d] == k,
                    why=_why_no_mean(bundle, d, task)) for d in dims))
    return PaperTable(
        f"leaderboard_{src}", f"Model leaderboard ({board.source})",
        "Mean score per companion model and dimension (the mean of item means; n = the "
        "model's items with a score), over all task families and per family, with 95% "
        f"percentile CIs from an item bootstrap (B = {board.B}, seed = {board.seed}). "
        "Bold: the highest mean per dimension and task family (on ordered scales)."
        + _fewer_note(bundle, fewer, labels)
        + (" Severity-adjusted means in the CSV." if board.adjusted else ""),
        (Col("Model", "wrap"), Col("n", "count"))
        + tuple(Col(labels[d], "points") for d in dims), tuple(rows),
        csv=f"leaderboard_{src}", bare_reason="a single item in the cell")


def _mean(c: LeaderCell | None) -> tuple:
    return (None, None, None) if c is None else (c.mean, c.low, c.high)


def _fewer_note(bundle: ReportBundle, fewer: dict[str, set[str]], labels: dict[str, str]
                ) -> str:
    """The caption's sentence on means over fewer items than their row's n: a dimension
    rated on some task families only (in the all-families rows), or items left unrated on a
    dimension; each cell's own n is in the CSV."""
    if not fewer:
        return ""
    tasks = {x.key: x.tasks for x in bundle.dimensions}
    by_family = [d for d, groups in fewer.items() if groups == {"all"} and tasks.get(d)]
    other = [d for d in fewer if d not in by_family]
    out = []
    if by_family:
        parts = [f"{labels[d]}{' is rated' if i == 0 else ''} on {' and '.join(tasks[d])} items"
                 for i, d in enumerate(by_family)]
        out.append(" " + ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "")
                   + parts[-1] + " only: in the all-families rows "
                   + ("its mean is" if len(by_family) == 1 else "their means are")
                   + " over those items (n as in those families' rows; each cell's n is in "
                   "the CSV).")
    if other:
        out.append(" " + ", ".join(labels[d] for d in other)
                   + ": some means are over fewer items than their row's n (items without "
                   "a score on the dimension); each cell's n is in the CSV.")
    return "".join(out)


def _why_no_mean(bundle: ReportBundle, d: str, task: str) -> str:
    """Why a leaderboard cell may have no mean: the dimension is not rated on the task
    family, or the model's replies there have no rating on it."""
    dim = bundle.dimension(d)
    tasks = dim.tasks if dim is not None else None
    if task != "all" and tasks is not None and task not in tasks:
        return Msg("not rated on this task family")
    return Msg("no rating of the model's replies on this dimension")


def _leader_findings(bundle: ReportBundle) -> list[Finding]:
    board = bundle.leaderboards["humans"]
    cells = [c for c in board.cells if c.task == "all"]
    out = []
    for d in dim_order(bundle):
        cs = sorted([c for c in cells if c.dimension == d and not is_missing(c.mean)],
                    key=lambda c: -c.mean)
        if len(cs) < 2 or not ordered(bundle, d) or cs[0].mean == cs[1].mean:
            continue
        top, second = cs[0], cs[1]
        sep = (not is_missing(top.low) and not is_missing(second.high)
               and top.low > second.high)
        out.append(Finding(
            f"Highest mean from the humans: {top.model} "
            f"{fmt_est(top.mean, top.low, top.high, 'points')}"
            + (f", its CI clear of the next ({second.model}, "
               f"{fmt(second.mean, 'points')})" if sep else
               f", not clearly ahead of {second.model} "
               f"({fmt(second.mean, 'points')}; the CIs overlap)") + ".", "finding", d))
    return out


def sap(bundle: ReportBundle) -> SectionOutput | None:
    out = SectionOutput()
    for src, board in (bundle.leaderboards or {}).items():
        rs = board.sap_vs_baseline
        if not rs:
            continue
        dims = [d for d in dim_order(bundle) if any(r.dimension == d for r in rs)]
        out.tables.append(_sap_table(bundle, src, board, dims))
        if fig := sap_figure(bundle, src):
            out.figures.append(fig)
        out.details += [t for t in leaderboard_details(bundle, src)
                        if t.key == f"sap_vs_baseline_{src}"]
        if src == "humans":
            no_boot = not board.B
            for d in dims:
                parts = [_sap_part(r, no_boot) for r in rs if r.dimension == d]
                out.findings.append(Finding(
                    "SAP − baseline (humans, points): " + "; ".join(parts) + ".", "finding", d))
                out.glance.append(Glance(Msg("SAP − baseline (humans, points)"), d,
                                         join_msgs("; ", parts)))
    return out if out.tables else None


def _sap_table(bundle: ReportBundle, src: str, board: Leaderboard, dims: list[str]
               ) -> PaperTable:
    labels = dim_labels(bundle)
    rs = board.sap_vs_baseline
    models = sorted({r.model for r in rs}, key=natural_key)
    designs = sorted({r.design for r in rs})
    rows: list = []
    for m in models:  # a row per dimension, each with its own n (dimensions of one task
        # family have fewer scenarios than those rated on every reply)
        got = {r.dimension: r for r in rs if r.model == m}
        rows.append(Group(m))
        for d in dims:
            if (r := got.get(d)) is None:
                continue
            rows.append((labels[d], r.n, Est(r.diff, r.low, r.high))
                        + ((r.design,) if len(designs) > 1 else ()))
    units = {"paired by scenario": "n = scenarios answered in both conditions",
             "unpaired": "n = replies in both conditions together"}
    return PaperTable(
        f"sap_vs_baseline_{src}", f"Secure Attachment Persona minus baseline "
                                  f"({board.source})",
        "Difference in mean score (points), SAP minus baseline, per model and dimension "
        f"({'; '.join(f'{x}: {units.get(x, x)}' for x in designs)}), with 95% "
        f"percentile CIs from a bootstrap (B = {board.B}, seed = {board.seed}). "
        "Positive: higher with SAP.",
        (Col("Dimension", "wrap"), Col("n", "count"),
         Col("SAP − baseline", "points", signed=True))
        + ((Col("Design", "text"),) if len(designs) > 1 else ()), tuple(rows),
        csv=f"sap_vs_baseline_{src}",
        bare_reason="fewer than two scenarios answered in both conditions and fewer than "
                    "two replies in a condition")


def _sap_part(r: SapDifference, no_boot: bool) -> str:
    """"m +0.52 [+0.31, +0.74] (n = 30 scenarios)", or with no CI, why not."""
    paired = r.design == "paired by scenario"
    n = (Msg("n = {n} scenarios", n=r.n) if paired else Msg("n = {n} replies", n=r.n))
    est = fmt_est(r.diff, r.low, r.high, "points", signed=True)
    if is_missing(r.diff) or not (is_missing(r.low) or is_missing(r.high)):
        return Msg("{model} {est} ({n})", model=r.model, est=est, n=n)
    why = (Msg("bootstrap skipped") if no_boot else
           Msg("too few scenarios answered in both conditions") if paired else
           Msg("too few replies in a condition"))
    return Msg("{model} {est} ({n}; no CI: {why})", model=r.model, est=est, n=n, why=why)


def safety(bundle: ReportBundle) -> SectionOutput | None:
    out = SectionOutput()
    unknown = bundle.manifest.counts.ratings_without_flags or 0
    left_out = (f" {unknown} ratings imported from files without a flags column are left out "
                "(whether their raters raised the flag is not known).") if unknown else ""
    for src, board in (bundle.leaderboards or {}).items():
        rf = board.red_flags
        if not rf:
            if src == "humans" and unknown:
                out.findings.append(Finding(
                    f"Safety red flags: not recorded — the {unknown} ratings were imported "
                    "from files without a flags column, so whether a rater raised the flag is "
                    "not known.", "note", None))
            continue
        rows = tuple((r.model, r.n_items, Est(r.share, r.low, r.high))
                     for r in sorted(rf, key=lambda r: natural_key(r.model)))
        out.tables.append(PaperTable(
            f"red_flags_{src}", "Safety red flags per model",
            "Per item, the share of its raters who raised the safety red flag, averaged over "
            "the model's items (n), as a percentage with a 95% percentile CI from an item "
            f"bootstrap (B = {board.B}, seed = {board.seed})." + left_out,
            (Col("Model", "wrap"), Col("n", "count"), Col("Flagged (%)", "share")), rows,
            csv=f"red_flags_{src}"))
        out.details += [t for t in leaderboard_details(bundle, src)
                        if t.key == f"red_flags_{src}"]
        worst = max(rf, key=lambda r: r.share or 0)
        if not worst.share:
            out.findings.append(Finding("Safety red flags: no rater flagged any reply.",
                                        "finding", None))
        else:
            out.findings.append(Finding(
                f"Safety red flags: most often on {worst.model}'s replies, "
                f"{fmt_est(worst.share, worst.low, worst.high, 'share')} of raters "
                f"per item ({worst.n_items} items).", "finding", None))
    return out if out.tables or out.findings else None
