"""Section "Do the human raters agree?": reliability per dimension, the number every other
number rests on."""

from __future__ import annotations

from messages import Msg

from ..bands import krippendorff_band
from .figures import agreement_figure
from .findings import Finding, Glance, SectionOutput, boot_words
from .format import dim_labels, dim_order, fmt, fmt_est, is_missing
from .paper import Col, Est, PaperTable
from .tables import agreement_details

__all__ = ["reliability"]

# the first word of each Krippendorff band (analysis.bands), for the summary table
_BAND_WORD = {"reliable": Msg("reliable"), "tentative": Msg("tentative"),
              "unreliable": Msg("unreliable")}

_READING = {"reliable": "Human raters agree reliably",
            "tentative": "Human raters agree well enough for tentative conclusions only",
            "unreliable": "Human raters do not agree reliably"}


def reliability(bundle: dict) -> SectionOutput:
    a = bundle["analysis"]["dimensions"]
    labels = dim_labels(bundle)
    out = SectionOutput()
    rows = []
    for d in dim_order(bundle):
        x = a.get(d) or {}
        if "alpha" not in x:
            continue
        lv = x["level"]
        al, ci = x["alpha"][lv], x["alpha_ci"]
        icc = x["icc"].get("ICC2") or {}
        ac = x["gwet"]["ac1"] if lv == "nominal" else x["gwet"]["ac2_quadratic"]
        why = x.get("not_estimable") or (Msg("too few items rated by two or more raters")
                                         if is_missing(al) else "")
        rows.append((labels[d], x["n_items"], Est(al, ci["low"], ci["high"], why=why),
                     Est(icc.get("value"), icc.get("low"), icc.get("high"),
                         why=why or Msg("ICC not estimable on these ratings (see the notes)"),
                         why_no_ci=Msg("ICC(2,1): {why}", why=icc["why_no_ci"])
                         if icc.get("why_no_ci") else ""),
                     Est(None, why=why or Msg("AC2 not estimable on these ratings")) if
                     is_missing(ac) else ac))
        out.findings.append(_alpha_finding(d, x))
        band = _BAND_WORD[krippendorff_band(al).split(" ")[0]] if not is_missing(al) else \
            Msg("not estimable")
        out.glance.append(Glance(Msg("Humans agree? (α)"), d, band if is_missing(al) else
                                 Msg("{band} · {estimate} (n = {n})", band=band,
                                     estimate=fmt_est(al, ci["low"], ci["high"]),
                                     n=x.get("n_items")),
                                 "finding" if band == "reliable" else "note"))
        out.notes += [f"{labels[d]}: {n}" for n in x.get("notes", [])]
    lv_words = ", ".join(sorted({a[d]["level"] for d in a if "alpha" in a[d]}))
    out.tables.append(PaperTable(
        "agreement", "Human agreement per dimension",
        f"n = items rated; Krippendorff's α at each dimension's level of measurement ({lv_words}); "
        "ICC(2,1) (two-way random effects, single rater, absolute agreement; REML variance "
        "components when ratings are missing, F-based CI); Gwet's AC2 with quadratic weights "
        f"(AC1 on nominal dimensions). α ≥ .800 reliable, ≥ .667 tentative (Krippendorff "
        f"2004). {boot_words(bundle)} for α.",
        (Col("Dimension", "wrap"), Col("n", "count"), Col("α"), Col("ICC(2,1)"), Col("AC2")),
        tuple(rows), csv="human_agreement"))
    if fig := agreement_figure(bundle):
        out.figures.append(fig)
    out.details += agreement_details(bundle)
    return out


def _alpha_finding(d: str, x: dict) -> Finding:
    lv = x["level"]
    al, ci = x["alpha"][lv], x["alpha_ci"]
    if is_missing(al):
        why = x.get("not_estimable") or x.get("status") or "too few paired ratings"
        return Finding(f"Human agreement is not estimable ({why}).", "note", d)
    band = krippendorff_band(al).split(" ")[0]
    text = (f"{_READING.get(band, 'Human agreement')}: α = {fmt_est(al, ci['low'], ci['high'])} "
            f"({lv}; {x['n_items']} items, {x['n_raters']} raters).")
    low = ci.get("low")
    for cut in (0.800, 0.667):
        if not is_missing(low) and al >= cut > low:
            text = text[:-1] + f"; the CI reaches below {fmt(cut)}."
            break
    return Finding(text, "finding", d)
