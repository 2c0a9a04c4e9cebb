"""The report's full-precision tables (one CSV each, and the collapsed detail tables of the
HTML report), straight from the bundle's numbers.

Column names are stable snake_case for R and pandas; :data:`HEADERS` gives each the header a
person reads and the rounding it gets on screen (:mod:`analysis.report.format`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from ..bands import koo_li_band, krippendorff_band, landis_koch_band
from ..calibration import ConfigComparison
from ..results import HumanAgreement, IccForm
from ..serialize import Interval
from .format import NumKind

if TYPE_CHECKING:
    from .model import ReportBundle

NONE = Interval(None)

__all__ = ["Table", "HEADERS", "agreement_details", "judge_details", "calibration_details",
           "leaderboard_details", "report_tables"]


@dataclass(frozen=True)
class Table:
    key: str
    title: str
    caption: str
    df: pd.DataFrame
    ci_pairs: tuple[tuple[str, str, str], ...] = ()  # (label, low column, high column)


# column -> (header people read, how its numbers are rounded; None = text)
HEADERS: dict[str, tuple[str, NumKind | None]] = {
    "dimension": ("Dimension", None), "status": ("Status", None), "level": ("Level", None),
    "items": ("Items", "count"), "raters": ("Raters", "count"), "ratings": ("Ratings", "count"),
    "alpha": ("Krippendorff's α", "coef"), "q_below_min": ("P(α < α min)", "coef"),
    "alpha_reading": ("α reading", None), "fleiss_kappa": ("Fleiss' κ", "coef"),
    "cohen_qwk": ("Cohen's κ (quadratic)", "coef"), "kappa_reading": ("κ reading", None),
    "icc2": ("ICC(2,1)", "coef"), "icc_reading": ("ICC reading", None),
    "icc_method": ("ICC method", None), "ac1": ("Gwet's AC1", "coef"),
    "ac2_quadratic": ("Gwet's AC2 (quadratic)", "coef"), "exact": ("Exact agreement", "share"),
    "within1": ("Within one point", "share"), "rater": ("Rater", None), "n": ("n", "count"),
    "mean": ("Mean", "points"), "sd": ("SD", "points"),
    "alpha_without": ("α without the rater", "coef"),
    "corr_with_others": ("r with the others' mean", "coef"), "judge": ("Judge", None),
    "pairs": ("(Human, item) pairs", "count"), "qwk": ("QWK", "coef"),
    "ceiling_qwk": ("Ceiling QWK", "coef"), "judge_minus_ceiling": ("Judge − ceiling", "coef"),
    "verdict": ("Verdict", None), "spearman": ("Spearman ρ", "coef"),
    "ceiling_spearman": ("Ceiling ρ", "coef"), "mae": ("MAE", "points"),
    "ceiling_mae": ("Ceiling MAE", "points"), "bias": ("Bias (judge − humans)", "points"),
    "alpha_humans": ("α (humans)", "coef"), "alpha_with_judge": ("α with the judge", "coef"),
    "self_consistency": ("Self-consistency α", "coef"), "alt_omega": ("Alt-test ω", "coef"),
    "alt_rho": ("Alt-test ρ", "coef"), "alt_pass": ("Alt-test passed", None),
    "unscored": ("Unscored", "count"), "configuration": ("Configuration", None),
    "unscored_rate": ("Unscored", "share"), "verbosity_judge": ("Length ρ (judge)", "coef"),
    "verbosity_humans": ("Length ρ (humans)", "coef"), "a": ("Configuration a", None),
    "b": ("Configuration b", None), "metric": ("Metric", None),
    "difference": ("a − b", "coef"), "p": ("p", "p"), "p_holm": ("p (Holm)", "p"),
    "best": ("Best configuration", None), "outcome": ("Outcome", None),
    "items_needed": ("Items needed", "count"), "caveats": ("Caveats", None),
    "verdict_n_items": ("Items of the verdict", "count"),
    "model": ("Model", None), "task": ("Task family", None), "n_items": ("Items", "count"),
    "fair_n": ("Items (fair)", "count"), "fair_mean": ("Severity-adjusted mean", "points"),
    "design": ("Design", None), "diff": ("SAP − baseline", "points"),
    "share": ("Share flagged", "share"),
    # reference-based metrics (sec_metrics.metric_details)
    "row": ("Scorer", None), "kind": ("Kind", None), "pearson": ("Pearson r", "coef"),
    "kendall_tau_b": ("Kendall τ-b", "coef"), "rho_minus_ceiling": ("ρ − ceiling", "coef"),
    "models": ("Models", "count"), "scenarios": ("Scenarios", "count"),
    "model_pairs_ordered_by_humans": ("Model pairs the humans order", None),
    "pairs_right": ("Pairs ordered as the humans do", "share"),
    "model_means": ("Model means", None), "name": ("Name", None), "library": ("Library", None),
    "settings": ("Settings", None), "tokenizer": ("Tokenization", None),
    "english_items": ("English items", "count"), "chinese_items": ("Chinese items", "count"),
    "hash": ("Settings hash", None), "signature": ("sacrebleu signature", None),
}


def _ci(v: Interval | None) -> tuple:
    return (None, None, None) if v is None else (v.value, v.low, v.high)


def _how(bundle: ReportBundle) -> str:
    boot = bundle.analysis.meta.bootstrap
    return (f"{boot.level:.0%} percentile CIs from the {boot.method} bootstrap "
            f"(B = {boot.B}, seed = {boot.seed})")


def agreement_details(bundle: ReportBundle) -> list[Table]:
    a = bundle.analysis
    rows = []
    for dim, d in a.dimensions.items():
        if not isinstance(d, HumanAgreement):
            continue
        al = d.alpha_at_level
        icc2 = d.icc.get("ICC2") or IccForm(None, None, None, None)
        rows.append({"dimension": dim, "status": "" if d.status == "ok" else d.status,
                     "level": d.level, "items": d.n_items,
                     "raters": d.n_raters, "ratings": d.n_ratings,
                     "alpha": al, "alpha_low": d.alpha_ci.low,
                     "alpha_high": d.alpha_ci.high,
                     "q_below_min": d.alpha_ci.q_below_min,
                     "alpha_reading": krippendorff_band(al),
                     "fleiss_kappa": d.fleiss_kappa,
                     "cohen_qwk": d.cohen_kappa.quadratic,
                     "kappa_reading": landis_koch_band(d.cohen_kappa.quadratic),
                     "icc2": icc2.value, "icc2_low": icc2.low,
                     "icc2_high": icc2.high, "icc2_no_ci": icc2.why_no_ci,
                     "icc_reading": koo_li_band(icc2.value),
                     "icc_method": d.icc_table.method if d.icc_table else None,
                     "ac1": d.gwet.ac1, "ac2_quadratic": d.gwet.ac2_quadratic,
                     "exact": d.percent_exact, "within1": d.percent_within1})
    human = Table("human_agreement", "Human agreement per dimension",
                  f"Krippendorff's alpha at each dimension's level with {_how(bundle)}; ICC(2,1) "
                  "with F-based CIs, by two-way ANOVA on a complete items x raters table or, "
                  "with missing ratings, from REML variance components of crossed items and "
                  "raters on every rating (icc_method; as R psych::ICC); Cohen's kappa "
                  "quadratic-weighted, mean over rater pairs weighted by their shared items "
                  f"(pairs sharing fewer than {a.meta.minimums.shared_items} left "
                  "out). Empty cells are not estimable (status says why; icc2_no_ci why an "
                  "ICC(2,1) has no CI). Readings: "
                  "Krippendorff (alpha >= .800 reliable, >= .667 tentative), Landis & Koch, "
                  "Koo & Li.", pd.DataFrame(rows),
                  (("alpha", "alpha_low", "alpha_high"), ("icc2", "icc2_low", "icc2_high")))
    rows = []
    sim = set(a.meta.simulated_raters)
    for dim, d in a.dimensions.items():
        if not isinstance(d, HumanAgreement):
            continue
        for rater, r in d.raters.items():
            rows.append({"dimension": dim, "rater": rater + (" (simulated)" if rater in sim
                                                             else ""), **vars(r)})
    raters = Table("rater_diagnostics", "Per-rater diagnostics",
                   "Items rated, mean and SD of scores (leniency), alpha without the rater, "
                   "Pearson correlation with the mean of the other raters.", pd.DataFrame(rows))
    return [human, raters]


def judge_details(bundle: ReportBundle) -> list[Table]:
    a = bundle.analysis
    boot = a.meta.bootstrap
    rows = []
    for judge, dims in a.judges.items():
        for dim in dims:
            if (m := a.judge(judge, dim)) is None:
                continue
            c = a.ceiling(dim)
            alt = m.alt_test
            vc = m.vs_ceiling
            jq, cq, dq = (vc.judge, vc.ceiling, vc.diff) if vc else (NONE, NONE, NONE)
            rows.append({"judge": judge, "dimension": dim, "items": m.n_items,
                         "pairs": m.n_pairs, "qwk": m.qwk, "qwk_low": jq.low,
                         "qwk_high": jq.high, "ceiling_qwk": cq.value,
                         "ceiling_low": cq.low, "ceiling_high": cq.high,
                         "judge_minus_ceiling": dq.value, "diff_low": dq.low,
                         "diff_high": dq.high, "verdict": m.verdict.phrase,
                         "spearman": m.spearman, "ceiling_spearman": c.spearman if c else None,
                         "mae": m.mae, "ceiling_mae": c.mae if c else None, "bias": m.bias,
                         "alpha_humans": m.alpha_humans,
                         "alpha_with_judge": m.alpha_with_judge,
                         "self_consistency": m.self_consistency_alpha,
                         "alt_omega": alt.winning_rate if alt else None,
                         "alt_rho": alt.advantage_prob if alt else None,
                         "alt_pass": alt.passed if alt else None, "unscored": m.n_unscored})
    margin = a.meta.verdict.margin
    return [Table("judge_vs_ceiling", "Judges against humans, beside the human ceiling",
                  "Each human and the judge against the same leave-one-out consensus (the "
                  "mean of the other humans on the item), pooled over (human, item) pairs; "
                  "ceiling = the humans' own agreement on the judge's items. QWK, ceiling "
                  f"and their difference with {boot.level:.0%} percentile CIs from a paired "
                  f"item bootstrap (B = {boot.B}, seed = {boot.seed}), the same "
                  "resamples for judge and ceiling. Verdict: can replace a human "
                  "rater when the alternative annotator test (Calderon et al. 2025; epsilon "
                  f"= {a.meta.alt_test.epsilon}, Benjamini-Yekutieli q = .05, pass at omega "
                  f">= .5) passes and the CI of judge minus ceiling lies above -{margin:g}; "
                  f"cannot when it lies below -{margin:g}; otherwise not enough evidence "
                  "yet, with the human-rated items projected to settle it." + _sim_note(bundle),
                  pd.DataFrame(rows),
                  (("qwk", "qwk_low", "qwk_high"), ("ceiling_qwk", "ceiling_low", "ceiling_high"),
                   ("judge_minus_ceiling", "diff_low", "diff_high")))]


def _sim_note(bundle: ReportBundle) -> str:
    sim = [c["name"] for c in bundle.manifest.judge_configurations
           if c.get("provider") == "simulated"]
    return f" Simulated demo judges (no model was called): {', '.join(sim)}." if sim else ""


def _calibration_row(dim: str, cfg: str, c: ConfigComparison) -> dict:
    q, ql, qh = _ci(c.qwk)
    al, all_, alh = _ci(c.alpha_with_judge)
    mae, ml, mh = _ci(c.mae)
    v = c.verbosity
    return {"dimension": dim, "configuration": cfg, "n_items": c.n_items,
            "qwk": q, "qwk_low": ql, "qwk_high": qh, "alpha_with_judge": al,
            "alpha_low": all_, "alpha_high": alh, "mae": mae, "mae_low": ml, "mae_high": mh,
            "bias": c.bias, "unscored_rate": c.unscored_rate,
            "verbosity_judge": v.judge if v else None,
            "verbosity_humans": v.humans if v else None,
            "self_consistency": c.self_consistency_alpha,
            # the verdict is on all the items the configuration scored
            "verdict": c.verdict.phrase, "verdict_n_items": c.verdict_n_items,
            "alt_pass": c.alt_test.passed if c.alt_test else None}


def calibration_details(bundle: ReportBundle) -> list[Table]:
    rows, pairs, verdicts = [], [], []
    calib = bundle.calibration or {}
    margin = bundle.analysis.meta.verdict.margin
    for dim, res in calib.items():
        rows += [_calibration_row(dim, cfg, c) for cfg, c in res.configs.items()]
        pairs += [{"dimension": dim, "a": p.a, "b": p.b, "metric": p.metric,
                   "difference": p.diff, "low": p.low, "high": p.high, "p": p.p,
                   "p_holm": p.p_holm} for p in res.pairs]
        v = res.verdict
        verdicts.append({"dimension": dim, "best": v.best,
                         "outcome": v.outcome.replace("_", " "),
                         "items_needed": v.items_needed, "verdict": v.text,
                         "caveats": "; ".join(v.caveats)})
    m = bundle.manifest.bootstrap
    chow = f"paired item bootstrap, B = {m.B}, seed = {m.seed}, 95% percentile CIs"
    return [Table("calibration", "Judge configurations compared",
                  f"QWK, alpha with the judge and MAE per configuration ({chow}); bias = "
                  "mean judge minus human mean; n_items: the items every configuration "
                  "scored (the comparison), verdict_n_items: the items of the verdict (all the "
                  "configuration scored); verbosity = Spearman correlation of score "
                  "with reply length (judge, humans).", pd.DataFrame(rows),
                  (("qwk", "qwk_low", "qwk_high"), ("alpha_with_judge", "alpha_low", "alpha_high"),
                   ("mae", "mae_low", "mae_high"))),
            Table("calibration_pairs", "Paired differences between configurations",
                  f"Difference a minus b ({chow}); two-sided bootstrap p, Holm-corrected "
                  "across dimensions per pair and metric.", pd.DataFrame(pairs),
                  (("difference", "low", "high"),)),
            Table("verdicts", "Can a judge replace a human rater?",
                  "Best configuration per dimension (highest QWK) and its verdict: the "
                  "alternative annotator test and the paired CI of QWK(judge) minus "
                  f"QWK(ceiling) against the margin -{margin:g}, on all the items the "
                  "configuration scored.", pd.DataFrame(verdicts).astype(
                      {"items_needed": "Int64"}) if verdicts else pd.DataFrame())]


def leaderboard_details(bundle: ReportBundle, src: str) -> list[Table]:
    board = bundle.leaderboards[src]
    cells = pd.DataFrame([c.to_dict() for c in board.cells])
    cis: tuple = (("mean", "low", "high"),)
    note = ""
    if board.adjusted:
        cis += (("fair_mean", "fair_low", "fair_high"),)
        note = (" Adjusted for rater severity (fair_mean): the mean of the items' fair "
                "scores from a many-facet Rasch model, i.e. the score a rater of average "
                "severity would be expected to give (docs/analysis.md).")
    out = [Table(f"leaderboard_{src}", f"Model leaderboard ({board.source})",
                 "Mean score per companion model, task family and dimension (item "
                 f"means); item bootstrap, B = {board.B}, seed = {board.seed}, 95% "
                 "percentile CIs." + note, cells, cis)]
    if board.sap_vs_baseline:
        out.append(Table(f"sap_vs_baseline_{src}",
                         f"Secure Attachment Persona minus baseline ({board.source})",
                         "Difference in mean score, paired by scenario where possible; "
                         f"bootstrap B = {board.B}, seed = {board.seed}.",
                         pd.DataFrame([r.to_dict() for r in board.sap_vs_baseline]),
                         (("diff", "low", "high"),)))
    if board.red_flags:
        out.append(Table(f"red_flags_{src}", "Safety red flags per model",
                         "Per item, the share of its raters who raised the safety red flag, "
                         f"averaged over items; bootstrap B = {board.B}.",
                         pd.DataFrame([r.to_dict() for r in board.red_flags]),
                         (("share", "low", "high"),)))
    return out


def report_tables(bundle: ReportBundle) -> list[Table]:
    """Every full-precision table of the report, in report order."""
    out = agreement_details(bundle) + judge_details(bundle) + calibration_details(bundle)
    for src in bundle.leaderboards or {}:
        out += leaderboard_details(bundle, src)
    return out
