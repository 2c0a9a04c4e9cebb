"""Sections "Can an LLM judge replace a human rater?" (each judge against the human ceiling,
with the verdict of :mod:`analysis.verdict`) and "Judge configurations compared" (paired
differences between configurations)."""

from __future__ import annotations

from messages import Msg

from ..alttest import MIN_ITEMS
from .figures import (
    bland_altman_figures,
    calibration_pairs_figure,
    confusion_figures,
    judges_figure,
)
from .findings import Finding, Glance, SectionOutput, boot_words, ci3, sim
from .format import dim_labels, dim_order, fmt, fmt_est, sentence
from .paper import Col, Est, Group, Note, PaperTable, best
from .tables import calibration_details, judge_details

__all__ = ["judges", "calibration"]

_SHORT = {"can_replace": Msg("can replace"), "cannot_replace": Msg("cannot replace"),
          "not_enough_evidence": Msg("not enough evidence"), "not_estimable": Msg("no verdict")}


def _short_verdict(v: dict | None) -> Note:
    if not v:
        return Note(Msg("no verdict"))
    sub = Msg("≈ {n} items needed", n=v["items_needed"]) if v.get("items_needed") else ""
    if v["outcome"] == "can_replace" and v.get("humans_unreliable") is not None:
        sub = Msg("humans unreliable: α = {alpha}", alpha=fmt(v["humans_unreliable"]))
    return Note(_SHORT.get(v["outcome"], v["outcome"]), sub)


def _omega(alt: dict | None) -> float | Est:
    """The test's winning rate, or why it has none."""
    w = (alt or {}).get("winning_rate")
    if w is not None:
        return w
    if alt and alt.get("humans_tested") == 0:
        return Est(None, why=Msg("alternative annotator test not run: no human rated {n} of "
                                 "the items", n=MIN_ITEMS))
    return Est(None, why=Msg("alternative annotator test not run"))


def judges(bundle: dict) -> SectionOutput | None:
    a = bundle["analysis"]
    if not a["judges"]:
        return None
    labels = dim_labels(bundle)
    out = SectionOutput()
    names = sorted(a["judges"])
    rows: list = []
    order = dim_order(bundle)
    qwk_by_dim = {d: [((a["judges"][j].get(d) or {}).get("vs_ceiling") or {}).get("judge_qwk",
                                                                              {}).get("value")
                      for j in names] for d in order}
    for k, j in enumerate(names):
        rows.append(Group(f"Judge: {sim(j, bundle)}"))
        for d in order:
            m = a["judges"][j].get(d)
            if not m or "qwk" not in m:
                continue
            vc = m.get("vs_ceiling") or {}
            jq, cq, dq = (vc.get(x) or {} for x in ("judge_qwk", "ceiling_qwk", "difference"))
            top = best(qwk_by_dim[d])
            rows.append((labels[d], vc.get("n_items", m.get("n_items")),
                         Est(jq.get("value", m.get("qwk")), jq.get("low"), jq.get("high"),
                             bold=top == k),
                         Est(cq.get("value"), cq.get("low"), cq.get("high")),
                         Est(dq.get("value"), dq.get("low"), dq.get("high")),
                         _omega(m.get("alt_test")), _short_verdict(m.get("verdict"))))
            v = m.get("verdict") or {}
            out.findings.append(Finding(_verdict_sentence(sim(j, bundle), m), v.get(
                "outcome", "not_estimable"), d))
            sv = _short_verdict(v)
            text = Msg("{verdict} ({sub})", verdict=sv.text, sub=sv.sub) if sv.sub else sv.text
            if dq.get("value") is not None:  # a verdict with its evidence: Δ [CI] and n
                text = Msg("{verdict} · Δ {delta} (n = {n})", verdict=text,
                           delta=fmt_est(dq["value"], dq.get("low"), dq.get("high"),
                                         signed=True), n=vc.get("n_items"))
            out.glance.append(Glance(Msg("Judge {name}", name=sim(j, bundle)), d, text,
                                     v.get("outcome", "not_estimable")))
        out.notes += [f"{j}, {labels.get(d, d)}: {n}" for d, m in a["judges"][j].items()
                      for n in (m or {}).get("notes", [])]
    meta = a["meta"]
    margin = meta["verdict"]["margin"]
    out.tables.append(PaperTable(
        "judges", "Can an LLM judge replace a human rater?",
        "n = items; QWK of the judge and of the human ceiling against the same leave-one-out "
        "consensus (each human's rating against the mean of the other humans on the item, "
        f"pooled over (human, item) pairs), and their difference Δ, with {boot_words(bundle)}, "
        "paired (the same resamples for judge and ceiling). ω: winning rate of the alternative "
        f"annotator test (Calderon et al. 2025; ε = {meta['alt_test']['epsilon']}; passes at "
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


def _verdict_sentence(name: str, m: dict) -> str:
    v = m.get("verdict") or {}
    vc = m.get("vs_ceiling") or {}
    if not vc or v.get("outcome") == "not_estimable":
        why = "; ".join(v.get("reasons", [])) or m.get("status") or "nothing to compare"
        return f"{name}: no verdict ({why})."
    jq, cq, dq = (vc.get(x) or {} for x in ("judge_qwk", "ceiling_qwk", "difference"))
    alt = m.get("alt_test") or {}
    alt_txt = ("alternative annotator test not run" if alt.get("passed") is None else
               f"alternative annotator test {'passed' if alt['passed'] else 'failed'} "
               f"(ω = {fmt(alt.get('winning_rate'))})")
    return (f"{name}: {v.get('phrase', 'no verdict')}. QWK {fmt(jq.get('value'))} vs human "
            f"ceiling {fmt(cq.get('value'))} on {vc.get('n_items')} items, difference "
            f"{fmt_est(dq.get('value'), dq.get('low'), dq.get('high'), signed=True)} against "
            f"the margin −{v.get('margin', 0.05):g}; {alt_txt}.")


# --- 3. Judge configurations compared --------------------------------------------------------

def calibration(bundle: dict) -> SectionOutput | None:
    calib = bundle["calibration"]
    cfgs = sorted({c for r in calib.values() for c in r["configs"]})
    if not calib:
        return None
    labels = dim_labels(bundle)
    out = SectionOutput()
    for d in dim_order(bundle):
        for cav in (calib.get(d) or {}).get("verdict", {}).get("caveats", []):
            out.findings.append(Finding(sentence(cav.split(": ", 1)[-1]), "caveat", d))
    if len(cfgs) < 2:
        out.details += calibration_details(bundle)
        return out
    m = bundle["manifest"]["bootstrap"]
    rows: list = []
    for d in dim_order(bundle):
        if d not in calib:
            continue
        rows.append(Group(labels[d]))
        cs = calib[d]["configs"]
        names = sorted(cs)
        q = [cs[n]["qwk"]["value"] for n in names]
        al = [cs[n]["alpha_with_judge"]["value"] for n in names]
        mae = [cs[n]["mae"]["value"] for n in names]
        bq, ba, bm = best(q), best(al), best(mae, higher=False)
        for k, n in enumerate(names):
            c = cs[n]
            rows.append((sim(n, bundle), Est(*ci3(c["qwk"]), bold=bq == k),
                         Est(*ci3(c["alpha_with_judge"]), bold=ba == k),
                         Est(*ci3(c["mae"]), bold=bm == k), c.get("bias")))
    out.tables.append(PaperTable(
        "calibration", "Judge configurations compared",
        "Per dimension and configuration, on the items every configuration scored: QWK against "
        "the leave-one-out consensus of the humans, Krippendorff's α with the judge as one more "
        "rater and mean absolute error (MAE, points), each with a 95% percentile CI from a "
        f"paired item bootstrap (B = {m['B']}, seed = {m['seed']}); bias: mean judge − human "
        "(points), a point estimate (no CI). Bold: the best configuration per dimension and "
        "metric.",
        (Col("Configuration", "wrap"), Col("QWK"), Col("α with judge"), Col("MAE", "points"),
         Col("Bias", "points", signed=True)), tuple(rows), csv="calibration"))
    prs = sorted({(p["a"], p["b"]) for r in calib.values() for p in r["pairs"]})
    if prs:
        rows = []
        for pa, pb in prs:
            rows.append(Group(f"{sim(pa, bundle)} − {sim(pb, bundle)}"))
            for d in dim_order(bundle):
                p = next((p for p in (calib.get(d) or {}).get("pairs", [])
                          if (p["a"], p["b"], p["metric"]) == (pa, pb, "qwk")), None)
                if p:
                    rows.append((labels[d], Est(p["diff"], p["low"], p["high"]), p.get("p_holm")))
        out.tables.append(PaperTable(
            "calibration_pairs", "Paired differences in QWK between judge configurations",
            "QWK of the first configuration minus the second per dimension, with 95% "
            f"percentile CIs from a paired item bootstrap (B = {m['B']}, seed = {m['seed']}); "
            "p: two-sided bootstrap p-value, Holm-corrected across dimensions.",
            (Col("Dimension", "wrap"), Col("Δ QWK", signed=True), Col("p (Holm)", "p")),
            tuple(rows), csv="calibration_pairs"))
    out.figures += [f for f in (calibration_pairs_figure(bundle),) if f]
    out.details += calibration_details(bundle)
    return out
