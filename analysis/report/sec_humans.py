"""Section "Do the human raters agree?": reliability per dimension, the number every other
number rests on."""

from __future__ import annotations

from messages import Msg

from ..bands import krippendorff_band
from ..results import HumanAgreement, IccForm
from .figures import agreement_figure
from .findings import Finding, Glance, SectionOutput, boot_words
from .format import dim_labels, dim_order, fmt, fmt_est, is_missing
from .model import ReportBundle
from .paper import Col, Est, PaperTable
from .tables import agreement_details

__all__ = ["reliability"]

# the first word of each Krippendorff band (analysis.bands), for the summary table
_BAND_WORD = {"reliable": Msg("reliable"), "tentative": Msg("tentative"),
              "unreliable": Msg("unreliable")}

_READING = {"reliable": "Human raters agree reliably",
            "tentative": "Human raters agree well enough for tentative conclusions only",
            "unreliable": "Human raters do not agree reliably"}


def reliability(bundle: ReportBundle) -> SectionOutput:
    a = bundle.analysis
    labels = dim_labels(bundle)
    out = SectionOutput()
    rows = []
    for d in dim_order(bundle):
        x = a.agreement(d)
        if x is None:
            continue
        al, ci = x.alpha_at_level, x.alpha_ci
        icc = x.icc.get("ICC2") or IccForm(None, None, None, None)
        ac = x.gwet.ac1 if x.level == "nominal" else x.gwet.ac2_quadratic
        why = x.not_estimable or (Msg("too few items rated by two or more raters")
                                  if is_missing(al) else "")
        rows.append((labels[d], x.n_items, Est(al, ci.low, ci.high, why=why),
                     Est(icc.value, icc.low, icc.high,
                         why=why or Msg("ICC not estimable on these ratings (see the notes)"),
                         why_no_ci=Msg("ICC(2,1): {why}", why=icc.why_no_ci)
                         if icc.why_no_ci else ""),
                     Est(None, why=why or Msg("AC2 not estimable on these ratings")) if
                     is_missing(ac) else ac))
        out.findings.append(_alpha_finding(d, x))
        band = _BAND_WORD[krippendorff_band(al).split(" ")[0]] if not is_missing(al) else \
            Msg("not estimable")
        out.glance.append(Glance(Msg("Humans agree? (α)"), d, band if is_missing(al) else
                                 Msg("{band} · {estimate} (n = {n})", band=band,
                                     estimate=fmt_est(al, ci.low, ci.high), n=x.n_items),
                                 "finding" if band == "reliable" else "note"))
        out.notes += [f"{labels[d]}: {n}" for n in x.notes]
    lv_words = ", ".join(sorted({x.level for x in a.dimensions.values()
                                 if isinstance(x, HumanAgreement)}))
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


def _alpha_finding(d: str, x: HumanAgreement) -> Finding:
    al, ci = x.alpha_at_level, x.alpha_ci
    if is_missing(al):
        why = x.not_estimable or x.status or "too few paired ratings"
        return Finding(f"Human agreement is not estimable ({why}).", "note", d)
    band = krippendorff_band(al).split(" ")[0]
    text = (f"{_READING.get(band, 'Human agreement')}: α = {fmt_est(al, ci.low, ci.high)} "
            f"({x.level}; {x.n_items} items, {x.n_raters} raters).")
    low = ci.low
    for cut in (0.800, 0.667):
        if not is_missing(low) and al >= cut > low:
            text = text[:-1] + f"; the CI reaches below {fmt(cut)}."
            break
    return Finding(text, "finding", d)
