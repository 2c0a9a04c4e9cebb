"""Sections "Can an LLM judge replace a human rater?" (each judge against the human ceiling,
with the verdict of :mod:`analysis.verdict`) and "Judge configurations compared" (paired
differences between configurations)."""

from __future__ import annotations

from messages import Msg

from ..alttest import MIN_ITEMS, AltTestResult
from ..results import JudgeAgreement
from ..serialize import Interval
from ..verdict import Verdict
from .figures import (
    bland_altman_figures,
    calibration_pairs_figure,
    confusion_figures,
    judges_figure,
)
from .findings import Finding, Glance, SectionOutput, boot_words, ci3, sim
from .format import dim_labels, dim_order, fmt, fmt_est, sentence
from .model import ReportBundle
from .paper import Col, Est, Group, Note, PaperTable, best
from .tables import calibration_details, judge_details

__all__ = ["judges", "calibration"]

NONE = Interval(None)

_SHORT = {"can_replace": Msg("can replace"), "cannot_replace": Msg("cannot replace"),
          "not_enough_evidence": Msg("not enough evidence"), "not_estimable": Msg("no verdict")}


def _short_verdict(v: Verdict | None) -> Note:
    if v is None:
        return Note(Msg("no verdict"))
    sub = Msg("≈ {n} items needed", n=v.items_needed) if v.items_needed else ""
    if v.outcome == "can_replace" and v.humans_unreliable is not None:
        sub = Msg("humans unreliable: α = {alpha}", alpha=fmt(v.humans_unreliable))
    return Note(_SHORT.get(v.outcome, v.outcome), sub)


def _omega(alt: AltTestResult | None) -> float | Est:
    """The test's winning rate, or why it has none."""
    if alt is not None and alt.winning_rate is not None:
        return alt.winning_rate
    if alt is not None and alt.humans_tested == 0:
        return Est(None, why=Msg("alternative annotator test not run: no human rated {n} of "
                                 "the items", n=MIN_ITEMS))
    return Est(None, why=Msg("alternative annotator test not run"))


def _qwks(m: JudgeAgreement) -> tuple[Interval, Interval, Interval]:
    """The judge's QWK, the ceiling's and their difference on the same items (the judge's
    own QWK alone when there is no comparison)."""
    vc = m.vs_ceiling
    if vc is None:
        return Interval(m.qwk), NONE, NONE
    return vc.judge, vc.ceiling, vc.diff


def judges(bundle: ReportBundle) -> SectionOutput | None:
    a = bundle.analysis
    if not a.judges:
        return None
    labels = dim_labels(bundle)
    out = SectionOutput()
    names = sorted(a.judges)
    rows: list = []
    order = dim_order(bundle)
    qwk_by_dim = {d: [m.vs_ceiling.judge.value if (m := a.judge(j, d)) and m.vs_ceiling
                      else None for j in names] for d in order}
    for k, j in enumerate(names):
        rows.append(Group(f"Judge: {sim(j, bundle)}"))
        for d in order:
            m = a.judge(j, d)
            if m is None:
                continue
            jq, cq, dq = _qwks(m)
            n = m.vs_ceiling.n_items if m.vs_ceiling else m.n_items
            top = best(qwk_by_dim[d])
            rows.append((labels[d], n, Est(*ci3(jq), bold=top == k), Est(*ci3(cq)),
                         Est(*ci3(dq)), _omega(m.alt_test), _short_verdict(m.verdict)))
            out.findings.append(Finding(_verdict_sentence(sim(j, bundle), m),
                                        m.verdict.outcome, d))
            sv = _short_verdict(m.verdict)
            text = Msg("{verdict} ({sub})", verdict=sv.text, sub=sv.sub) if sv.sub else sv.text
            if dq.value is not None:  # a verdict with its evidence: Δ [CI] and n
                text = Msg("{verdict} · Δ {delta} (n = {n})", verdict=text,
                           delta=fmt_est(dq.value, dq.low, dq.high, signed=True),
                           n=m.vs_ceiling.n_items)
            out.glance.append(Glance(Msg("Judge {name}", name=sim(j, bundle)), d, text,
                                     m.verdict.outcome))
        out.notes += [f"{j}, {labels.get(d, d)}: {n}" for d, m in a.judges[j].items()
                      for n in m.notes]
    meta = a.meta
    margin = meta.verdict.margin
    out.tables.append(PaperTable(
        "judges", "Can an LLM judge replace a human rater?",
        "n = items; QWK of the judge and of the human ceiling against the same leave-one-out "
        "consensus (each human's rating against the mean of the other humans on the item, "
        f"pooled over (human, item) pairs), and their difference Δ, with {boot_words(bundle)}, "
        "paired (the same resamples for judge and ceiling). ω: winning rate of the alternative "
        f"annotator test (Calderon et al. 2025; ε = {meta.alt_test.epsilon}; passes at "
        f"ω ≥ .5). Verdict: can replace when the test passes and Δ's CI lies above −{margin:g}; "
        f"cannot when it lies below −{margin:g}; otherwise not enough evidence, with the "
        "human-rated items projected to settle it. Bold: the best judge per dimension.",
        (Col("Dimension", "wrap"), Col("n", "count"), Col("QWK"), Col("Ceiling"),
         Col("Δ", signed=True), Col("ω"), Col("Verdict", "wrap")),
        tuple(rows), csv="judge_vs_ceiling"))
    out.figures += [f for f in (judges_figure(bundle),) if f]
    out.figures += confusion_figures(bundle) + bland_altman_figures(bundle)
    out.details += judge_details(bundle)
    return out


def _verdict_sentence(name: str, m: JudgeAgreement) -> str:
    v = m.verdict
    if m.vs_ceiling is None or v.outcome == "not_estimable":
        why = "; ".join(v.reasons) or m.status or "nothing to compare"
        return f"{name}: no verdict ({why})."
    jq, cq, dq = _qwks(m)
    alt = m.alt_test
    passed = alt.passed if alt is not None else None
    alt_txt = ("alternative annotator test not run" if passed is None else
               f"alternative annotator test {'passed' if passed else 'failed'} "
               f"(ω = {fmt(alt.winning_rate)})")
    return (f"{name}: {v.phrase}. QWK {fmt(jq.value)} vs human ceiling {fmt(cq.value)} on "
            f"{m.vs_ceiling.n_items} items, difference "
            f"{fmt_est(dq.value, dq.low, dq.high, signed=True)} against the margin "
            f"−{v.margin:g}; {alt_txt}.")


# --- 3. Judge configurations compared --------------------------------------------------------

def calibration(bundle: ReportBundle) -> SectionOutput | None:
    calib = bundle.calibration or {}
    cfgs = sorted({c for r in calib.values() for c in r.configs})
    if not calib:
        return None
    labels = dim_labels(bundle)
    out = SectionOutput()
    for d in dim_order(bundle):
        for cav in (calib[d].verdict.caveats if d in calib else ()):
            out.findings.append(Finding(sentence(cav.split(": ", 1)[-1]), "caveat", d))
    if len(cfgs) < 2:
        out.details += calibration_details(bundle)
        return out
    m = bundle.manifest.bootstrap
    rows: list = []
    for d in dim_order(bundle):
        if d not in calib:
            continue
        rows.append(Group(labels[d]))
        cs = calib[d].configs
        names = sorted(cs)
        bq = best([cs[n].qwk.value for n in names])
        ba = best([cs[n].alpha_with_judge.value for n in names])
        bm = best([cs[n].mae.value for n in names], higher=False)
        for k, n in enumerate(names):
            c = cs[n]
            rows.append((sim(n, bundle), Est(*ci3(c.qwk), bold=bq == k),
                         Est(*ci3(c.alpha_with_judge), bold=ba == k),
                         Est(*ci3(c.mae), bold=bm == k), c.bias))
    out.tables.append(PaperTable(
        "calibration", "Judge configurations compared",
        "Per dimension and configuration, on the items every configuration scored: QWK against "
        "the leave-one-out consensus of the humans, Krippendorff's α with the judge as one more "
        "rater and mean absolute error (MAE, points), each with a 95% percentile CI from a "
        f"paired item bootstrap (B = {m.B}, seed = {m.seed}); bias: mean judge − human "
        "(points), a point estimate (no CI). Bold: the best configuration per dimension and "
        "metric.",
        (Col("Configuration", "wrap"), Col("QWK"), Col("α with judge"), Col("MAE", "points"),
         Col("Bias", "points", signed=True)), tuple(rows), csv="calibration"))
    prs = sorted({(p.a, p.b) for r in calib.values() for p in r.pairs})
    if prs:
        rows = []
        for pa, pb in prs:
            rows.append(Group(f"{sim(pa, bundle)} − {sim(pb, bundle)}"))
            for d in dim_order(bundle):
                p = calib[d].pair(pa, pb, "qwk") if d in calib else None
                if p:
                    rows.append((labels[d], Est(p.diff, p.low, p.high), p.p_holm))
        out.tables.append(PaperTable(
            "calibration_pairs", "Paired differences in QWK between judge configurations",
            "QWK of the first configuration minus the second per dimension, with 95% "
            f"percentile CIs from a paired item bootstrap (B = {m.B}, seed = {m.seed}); "
            "p: two-sided bootstrap p-value, Holm-corrected across dimensions.",
            (Col("Dimension", "wrap"), Col("Δ QWK", signed=True), Col("p (Holm)", "p")),
            tuple(rows), csv="calibration_pairs"))
    out.figures += [f for f in (calibration_pairs_figure(bundle),) if f]
    out.details += calibration_details(bundle)
    return out
