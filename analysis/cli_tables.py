"""`h2h analyze` as readable tables: what a value is, how sure we are, and what is missing.

A value that could not be computed is printed as "not estimable" (its reason is in the notes
below the table), a dimension without ratings as "no ratings", a judge without scored
judgments as "no scored judgments"; every judge row shows its n; brackets are explained under
the table that uses them.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .bands import koo_li_band, krippendorff_band, landis_koch_band
from .results import BootstrapMeta, HumanAgreement, HumanCeiling, JudgeAgreement, StudyAnalysis
from .serialize import Interval
from .verdict import Verdict

__all__ = ["print_tables", "fmt", "fmt_ci"]

NE = "not estimable"
NONE = Interval(None)


class _NoCeiling:
    """What a judge row prints for the humans' own values when there is no ceiling."""

    mae = spearman = exact = None


_NO_CEILING = _NoCeiling()


def fmt(x, nd: int = 3, missing: str = NE) -> str:
    return missing if x is None else f"{x:.{nd}f}"


def fmt_ci(lo, hi, nd: int = 3) -> str:
    return "" if lo is None or hi is None else f"[{lo:.{nd}f}, {hi:.{nd}f}]"


def _band(f, x) -> str:
    return "" if x is None else f(x)


def _ci(b) -> str:
    return fmt_ci(b.low, b.high) if b is not None else ""


def _overview(res: StudyAnalysis) -> Table:
    lv_ci = f"{res.meta.bootstrap.level:.0%} CI"
    t = Table(title="Dimensions", title_justify="left")
    for col in ("dimension", "level", "items", "raters", "ratings", "α", lv_ci, "status"):
        t.add_column(col)
    for dim, d in res.dimensions.items():
        if not isinstance(d, HumanAgreement):
            t.add_row(dim, "—", "", "", "", "", "", "no scale known; skipped")
            continue
        status = {"ok": "", "no ratings": "no ratings"}.get(d.status, d.status)
        t.add_row(dim, d.level, str(d.n_items), str(d.n_raters), str(d.n_ratings),
                  "" if d.status == "no ratings" else fmt(d.alpha_at_level), _ci(d.alpha_ci),
                  status)
    return t


def _dimension(dim: str, d: HumanAgreement, boot: BootstrapMeta) -> Table:
    lv = d.level
    ci = d.alpha_ci
    scale = ", ".join(d.labels) if d.labels else ", ".join(f"{v:g}" for v in d.scale)
    t = Table(title=f"{dim}: {d.n_items} items ({d.n_items_pairable} rated by 2+), "
                    f"{d.n_raters} raters, {d.n_ratings} ratings; scale {scale}",
              title_justify="left")
    for col in ("coefficient", "value", f"{boot.level:.0%} CI", "reading"):
        t.add_column(col)
    a = d.alpha_at_level
    t.add_row(f"Krippendorff α ({lv})", fmt(a), _ci(ci), _band(krippendorff_band, a))
    if ci.q_below_min is not None:
        t.add_row(f"  P(α < {ci.alpha_min:g}) over resamples", fmt(ci.q_below_min), "", "")
    for other in ("nominal", "ordinal", "interval", "ratio"):
        if other != lv and d.alpha.get(other) is not None:
            t.add_row(f"Krippendorff α ({other})", fmt(d.alpha[other]), "", "")
    t.add_row("Fleiss κ", fmt(d.fleiss_kappa), "", _band(landis_koch_band, d.fleiss_kappa))
    for kind in ("unweighted", "linear", "quadratic"):
        k = getattr(d.cohen_kappa, kind)
        t.add_row(f"Cohen κ {kind} (weighted pair mean)", fmt(k), "",
                  _band(landis_koch_band, k))
    if it := d.icc_table:
        how = "ANOVA, complete table" if it.method == "anova" else "REML mixed model"
        t.add_row("ICC estimator", how, "", f"{it.n_items} items × {it.n_raters} "
                                            f"raters, {it.n_ratings} ratings")
    for form, v in d.icc.items():
        label = f"ICC({form[3]},{'k' if form.endswith('k') else 1})"
        if v is None:
            if d.level != "nominal":
                t.add_row(label, NE, "", "")
            continue
        t.add_row(label, fmt(v.value), fmt_ci(v.low, v.high), _band(koo_li_band, v.value))
    g = d.gwet
    t.add_row("Gwet AC1", fmt(g.ac1), "", _band(landis_koch_band, g.ac1))
    t.add_row("Gwet AC2 linear / quadratic", f"{fmt(g.ac2_linear)} / "
                                             f"{fmt(g.ac2_quadratic)}", "", "")
    t.add_row("Brennan–Prediger", fmt(d.brennan_prediger), "", "")
    t.add_row("Exact / within one (scale unit)", f"{fmt(d.percent_exact)} / "
                                                 f"{fmt(d.percent_within1)}", "", "")
    return t


def _ceiling(res: StudyAnalysis) -> Table | None:
    if not res.human_ceiling:
        return None
    lv = f"{res.meta.bootstrap.level:.0%} CI"
    t = Table(title="Human ceiling: each human against the mean of the other humans on the "
                    "same item, pooled", title_justify="left")
    for col in ("dimension", "items (pairs)", "QWK", lv, "MAE", lv + " ", "exact",
                "within one"):
        t.add_column(col)
    for dim, c in res.human_ceiling.items():
        if not isinstance(c, HumanCeiling):
            t.add_row(dim, "no ratings", "", "", "", "", "", "")
            continue
        t.add_row(dim, f"{c.n_items} ({c.n_pairs})", fmt(c.qwk), _ci(c.qwk_ci), fmt(c.mae),
                  _ci(c.mae_ci), fmt(c.exact), fmt(c.within1))
    return t


def _short(v: Verdict) -> str:
    if v.outcome == "not_enough_evidence" and v.items_needed:
        return f"not enough evidence (~{v.items_needed} items)"
    return {"can_replace": "can replace", "cannot_replace": "cannot replace",
            "not_enough_evidence": "not enough evidence", "not_estimable": "no verdict"
            }[v.outcome]


def _alt_text(alt) -> str:
    passed = alt.passed if alt is not None else None
    text = {True: "pass", False: "fail"}.get(passed, "not run")
    if passed is not None:
        text += f" ω={fmt(alt.winning_rate, 2)} ρ={fmt(alt.advantage_prob, 2)}"
    return text


def _judges(res: StudyAnalysis) -> tuple[Table, Table, list[str]]:
    lv = f"{res.meta.bootstrap.level:.0%} CI"
    t = Table(title="Judges against the human ceiling (QWK with the same leave-one-out "
                    "consensus, same items)", title_justify="left")
    for col in ("judge", "dimension", "items (pairs)", f"QWK [{lv}]", "ceiling QWK",
                f"judge − ceiling [{lv}]", "alt-test", "verdict"):
        t.add_column(col, no_wrap=col != "verdict")
    o = Table(title="Judges: other metrics (humans' own in parentheses)", title_justify="left")
    for col in ("judge", "dimension", "items", "MAE", "bias", "Spearman", "exact",
                "α +judge (on items)", "unscored"):
        o.add_column(col)
    verdicts: list[str] = []
    for name, dims in res.judges.items():
        for dim, m in dims.items():
            if not isinstance(m, JudgeAgreement):
                t.add_row(name, dim, "0", "no human ratings", "", "", "", "")
                continue
            if m.status == "no scored judgments":
                t.add_row(name, dim, "0", f"no scored judgments (0 of {m.n_judgments})",
                          "", "", "", _short(m.verdict))
                verdicts.append(f"{name} / {dim}: {m.verdict.text}")
                continue
            vc = m.vs_ceiling
            j, c, d = (vc.judge, vc.ceiling, vc.diff) if vc is not None else (NONE,) * 3
            hc = res.ceiling(dim) or _NO_CEILING
            t.add_row(name, dim, f"{m.n_items} ({m.n_pairs})",
                      f"{fmt(j.value)} {fmt_ci(j.low, j.high)}", fmt(c.value),
                      f"{_signed(d.value)} {fmt_ci(d.low, d.high)}", _alt_text(m.alt_test),
                      _short(m.verdict))
            o.add_row(name, dim, str(m.n_items), f"{fmt(m.mae)} ({fmt(hc.mae)})",
                      f"{_signed(m.bias)}", f"{fmt(m.spearman)} ({fmt(hc.spearman)})",
                      f"{fmt(m.exact)} ({fmt(hc.exact)})",
                      f"{fmt(m.alpha_with_judge)} ({fmt(m.alpha_humans)}) on "
                      f"{_rated(res, dim)}",
                      f"{m.n_unscored} of {m.n_judgments}")
            verdicts.append(f"{name} / {dim}: {m.verdict.text}")
    return t, o, verdicts


def _rated(res: StudyAnalysis, dim: str) -> str:
    """The items α with the judge is on: every item a human rated on the dimension."""
    d = res.dimensions.get(dim)
    return str(d.n_items) if isinstance(d, HumanAgreement) else "?"


def _signed(x) -> str:
    return NE if x is None else f"{x:+.3f}"


def print_tables(res: StudyAnalysis, out: Console) -> None:
    """Readable tables: an overview, one table per dimension, the human ceiling, then the
    judges beside it with their verdicts."""
    boot = res.meta.bootstrap
    out.print(_overview(res))
    out.print()
    for dim, d in res.dimensions.items():
        if not isinstance(d, HumanAgreement):
            continue
        if d.status == "no ratings":
            out.print(f"[bold]{dim}[/bold]: no ratings")
            out.print()
            continue
        out.print(_dimension(dim, d, boot))
        for n in d.notes:
            out.print(f"  [dim]note: {n}[/dim]")
        out.print()
    if boot.B:
        out.print(f"[dim]CIs for α: {boot.method} bootstrap, percentile, B={boot.B}, "
                  f"seed={boot.seed}; ICC CIs are F-based.[/dim]")
    else:
        out.print("[dim]Bootstrap skipped (--bootstrap 0): point estimates only; no CIs and "
                  "no verdicts. ICC CIs are F-based.[/dim]")
    for note in res.meta.scale_notes:
        out.print(f"[dim]note: {note}[/dim]")
    ceiling = _ceiling(res)
    if ceiling is not None:
        out.print()
        out.print(ceiling)
        for dim, c in res.human_ceiling.items():
            for n in c.notes:
                if n != "no ratings":
                    out.print(f"  [dim]note ({dim}): {n}[/dim]")
    if not res.judges:
        _metrics(res, out)
        return
    table, other, verdicts = _judges(res)
    out.print()
    out.print(table)
    margin = res.meta.verdict.margin
    out.print(f"[dim]Reading the judge tables: values in square brackets are {boot.level:.0%}"
              f" CIs from one paired item bootstrap (B={boot.B}, seed={boot.seed}), the "
              "same resamples for the judge and the ceiling; values in parentheses are the "
              "humans' own (the human ceiling; α of the humans without the judge). QWK, MAE, "
              "bias and Spearman compare each score with the mean of the other humans on the "
              "same item, pooled over every (human, item) pair, for the judge and the humans "
              "alike, on the items the judge scored that two or more humans rated; 'items "
              "(pairs)' counts them. α +judge adds the judge as one more rater on every item a "
              "human rated (so it is on more items than the rest; h2h calibrate computes it on "
              "the items every compared configuration scored). A judge can "
              "replace a human rater when the alternative annotator test passes and the CI of "
              f"judge − ceiling lies above −{margin:g} (--margin); it cannot when the CI "
              f"lies below −{margin:g}; otherwise there is not enough evidence yet.[/dim]")
    out.print()
    out.print(other)
    out.print()
    for line in verdicts:
        out.print(line)
    single = _single_human(res)
    if single is not None:
        out.print()
        out.print(single)
    for name, dims in res.judges.items():
        for dim, m in dims.items():
            for n in m.notes:
                out.print(f"  [dim]note ({name} / {dim}): {n}[/dim]")
    _metrics(res, out)


def _single_human(res: StudyAnalysis) -> Table | None:
    """Judges against the one human of each item, where no item has two (no ceiling)."""
    rows = [(name, dim, m.single_human) for name, dims in res.judges.items()
            for dim, m in dims.items()
            if isinstance(m, JudgeAgreement) and m.single_human is not None]
    if not rows:
        return None
    lv = f"{res.meta.bootstrap.level:.0%} CI"
    t = Table(title=f"Judges against one human per item; no ceiling (values [{lv}])",
              title_justify="left")
    stats = ("pearson", "spearman", "kendall_tau_b", "mae", "rmse", "qwk", "kappa")
    for col in ("judge", "dimension", "items", "Pearson", "Spearman", "Kendall τ-b", "MAE",
                "RMSE", "QWK", "κ"):
        t.add_column(col)
    for name, dim, s in rows:
        t.add_row(name, dim, str(s.n_items),
                  *(f"{fmt(getattr(s, k).value)} {_ci(getattr(s, k))}".strip() for k in stats))
    return t


def _metrics(res: StudyAnalysis, out: Console) -> None:
    if not res.metrics:
        return
    from .refmetrics.cli_tables import print_metric_tables

    out.print()
    print_metric_tables(res.metrics, out, level=res.meta.bootstrap.level)
