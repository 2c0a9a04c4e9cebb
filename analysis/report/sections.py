"""The report as a list of sections. Each section turns the bundle into plain-language findings
(per dimension or study-wide), focused paper tables, figures and full-precision detail tables;
the writers (HTML, Markdown, LaTeX, CSV, images) only lay them out.

To add a section (say, reference-based metrics as another kind of judge), write a function
``bundle -> SectionOutput | None`` and add a :class:`Section` to :data:`SECTIONS`; its findings
join the summary under each dimension, its tables get a ``tables/<key>.tex`` and a CSV, its
figures are exported like the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..bands import krippendorff_band
from .figures import (
    Figure,
    agreement_figure,
    bland_altman_figures,
    calibration_pairs_figure,
    confusion_figures,
    judges_figure,
    leaderboard_figure,
    sap_figure,
)
from .format import dim_labels, dim_order, fmt, fmt_est, is_missing, natural_key, sentence
from .paper import Col, Est, Group, Note, PaperTable, best
from .tables import (
    Table,
    agreement_details,
    calibration_details,
    judge_details,
    leaderboard_details,
)

__all__ = ["Finding", "Glance", "SectionOutput", "Section", "SECTIONS", "build_sections",
           "glance_table"]

FindingKind = Literal["finding", "can_replace", "cannot_replace", "not_enough_evidence",
                      "not_estimable", "caveat", "note"]


@dataclass(frozen=True)
class Finding:
    """One sentence of the summary. ``dimension`` None = study-wide; the kind sets its style
    (a verdict's outcome, a caveat, a note) so that verdicts and caveats never look alike."""

    text: str
    kind: FindingKind = "finding"
    dimension: str | None = None


@dataclass(frozen=True)
class Glance:
    """One cell of the summary table at the top of the report: ``column`` (e.g. a judge's
    name), ``dimension``, a few words and the kind that styles them."""

    column: str
    dimension: str
    text: str
    kind: FindingKind = "finding"


@dataclass
class SectionOutput:
    findings: list[Finding] = field(default_factory=list)
    glance: list[Glance] = field(default_factory=list)
    tables: list[PaperTable] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    details: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    intro: str
    build: Callable[[dict], SectionOutput | None]


def _ordered(bundle: dict, d: str) -> bool:
    """Whether a higher score is better on ``d`` (a Likert or ordered scale); on a binary or
    nominal dimension (a flag, categories) no mean is "best"."""
    dims = {x["key"]: x for x in bundle.get("dimensions", [])}
    x = dims.get(d)
    return x is None or (x["kind"] != "binary" and x["level"] != "nominal")


def _boot_words(bundle: dict) -> str:
    b = bundle["analysis"]["meta"]["bootstrap"]
    if not b["B"]:
        return "no CIs (bootstrap skipped, B = 0)"
    return (f"{b['level']:.0%} percentile CIs, {b['method']} bootstrap over items, "
            f"B = {b['B']}, seed = {b['seed']}")


def _sim(name: str, bundle: dict) -> str:
    sim = {c["name"] for c in bundle["manifest"].get("judge_configurations", [])
           if c.get("provider") == "simulated"}
    return f"{name} (simulated)" if name in sim else name


# --- 1. Do the humans agree? ---------------------------------------------------------------

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
        rows.append((labels[d], x["n_items"], Est(al, ci["low"], ci["high"]),
                     Est(icc.get("value"), icc.get("low"), icc.get("high")), ac))
        out.findings.append(_alpha_finding(d, x))
        band = krippendorff_band(al).split(" ")[0] if not is_missing(al) else "not estimable"
        out.glance.append(Glance("Humans agree? (α)", d, band if is_missing(al) else
                                 f"{band} · {fmt_est(al, ci['low'], ci['high'])}",
                                 "finding" if band == "reliable" else "note"))
        out.notes += [f"{labels[d]}: {n}" for n in x.get("notes", [])]
    lv_words = ", ".join(sorted({a[d]["level"] for d in a if "alpha" in a[d]}))
    out.tables.append(PaperTable(
        "agreement", "Human agreement per dimension",
        f"n = items rated; Krippendorff's α at each dimension's level of measurement ({lv_words}); "
        "ICC(2,1) (two-way random effects, single rater, absolute agreement; REML variance "
        "components when ratings are missing, F-based CI); Gwet's AC2 with quadratic weights "
        f"(AC1 on nominal dimensions). α ≥ .800 reliable, ≥ .667 tentative (Krippendorff "
        f"2004). {_boot_words(bundle)} for α.",
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


# --- 2. Can a judge replace a human rater? --------------------------------------------------

_SHORT = {"can_replace": "can replace", "cannot_replace": "cannot replace",
          "not_enough_evidence": "not enough evidence", "not_estimable": "no verdict"}


def _short_verdict(v: dict | None) -> Note:
    if not v:
        return Note("no verdict")
    sub = f"≈ {v['items_needed']} items needed" if v.get("items_needed") else ""
    return Note(_SHORT.get(v["outcome"], v["outcome"]), sub)


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
        rows.append(Group(f"Judge: {_sim(j, bundle)}"))
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
                         (m.get("alt_test") or {}).get("winning_rate"),
                         _short_verdict(m.get("verdict"))))
            v = m.get("verdict") or {}
            out.findings.append(Finding(_verdict_sentence(_sim(j, bundle), m), v.get(
                "outcome", "not_estimable"), d))
            sv = _short_verdict(v)
            out.glance.append(Glance(f"Judge {_sim(j, bundle)}", d, sv.text + (
                f" ({sv.sub})" if sv.sub else ""), v.get("outcome", "not_estimable")))
        out.notes += [f"{j}, {labels.get(d, d)}: {n}" for d, m in a["judges"][j].items()
                      for n in (m or {}).get("notes", [])]
    meta = a["meta"]
    margin = meta["verdict"]["margin"]
    out.tables.append(PaperTable(
        "judges", "Can an LLM judge replace a human rater?",
        "n = items; QWK of the judge and of the human ceiling against the same leave-one-out "
        "consensus (each human's rating against the mean of the other humans on the item, "
        f"pooled over (human, item) pairs), and their difference Δ, with {_boot_words(bundle)}, "
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
            rows.append((_sim(n, bundle), Est(*_v(c["qwk"]), bold=bq == k),
                         Est(*_v(c["alpha_with_judge"]), bold=ba == k),
                         Est(*_v(c["mae"]), bold=bm == k), c.get("bias")))
    out.tables.append(PaperTable(
        "calibration", "Judge configurations compared",
        "Per dimension and configuration, on the items every configuration scored: QWK against "
        "the leave-one-out consensus of the humans, Krippendorff's α with the judge as one more "
        "rater, mean absolute error (MAE, points) and bias (mean judge − human, points), with "
        f"95% percentile CIs from a paired item bootstrap (B = {m['B']}, seed = {m['seed']}). "
        "Bold: the best configuration per dimension and metric.",
        (Col("Configuration", "wrap"), Col("QWK"), Col("α with judge"), Col("MAE", "points"),
         Col("Bias", "points", signed=True)), tuple(rows), csv="calibration"))
    prs = sorted({(p["a"], p["b"]) for r in calib.values() for p in r["pairs"]})
    if prs:
        rows = []
        for pa, pb in prs:
            rows.append(Group(f"{_sim(pa, bundle)} − {_sim(pb, bundle)}"))
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


def _v(x: dict | None) -> tuple:
    x = x or {}
    return x.get("value"), x.get("low"), x.get("high")


# --- 4. Leaderboard, SAP and red flags ---------------------------------------------------------

def _tasks(bundle: dict, cells: list[dict]) -> list[str]:
    """"all", then the task families in the rubric's order."""
    seen = set(c["task"] for c in cells if c["task"] != "all")
    order = [t for t in bundle.get("tasks", []) if t in seen]
    return ["all"] + order + sorted(seen - set(order))


def leaderboard(bundle: dict) -> SectionOutput | None:
    if not bundle["leaderboards"]:
        return None
    labels = dim_labels(bundle)
    out = SectionOutput()
    for src, board in bundle["leaderboards"].items():
        cells = board["cells"]
        if not cells:
            continue
        dims = [d for d in dim_order(bundle) if any(c["dimension"] == d for c in cells)]
        models = sorted({c["model"] for c in cells}, key=natural_key)
        rows: list = []
        for task in _tasks(bundle, cells):
            rows.append(Group("All task families" if task == "all" else task.capitalize()))
            grid = {(c["model"], c["dimension"]): c for c in cells if c["task"] == task}
            tops = {d: best([(grid.get((m, d)) or {}).get("mean") for m in models])
                    if _ordered(bundle, d) else None for d in dims}
            for k, m in enumerate(models):
                ns = [grid[(m, d)]["n_items"] for d in dims if (m, d) in grid]
                if not ns:
                    continue
                rows.append((m, max(ns)) + tuple(
                    Est(*_v({"value": (grid.get((m, d)) or {}).get("mean"),
                             "low": (grid.get((m, d)) or {}).get("low"),
                             "high": (grid.get((m, d)) or {}).get("high")}),
                        bold=tops[d] == k) for d in dims))
        out.tables.append(PaperTable(
            f"leaderboard_{src}", f"Model leaderboard ({board['source']})",
            "Mean score per companion model and dimension (the mean of item means; n = items), "
            "over all task families and per family, with 95% percentile CIs from an item "
            f"bootstrap (B = {board['B']}, seed = {board['seed']}). Bold: the highest mean per "
            "dimension and task family (on ordered scales)."
            + (" Severity-adjusted means in the CSV." if board.get("adjusted") else ""),
            (Col("Model", "wrap"), Col("n", "count"))
            + tuple(Col(labels[d], "points") for d in dims), tuple(rows),
            csv=f"leaderboard_{src}"))
        if fig := leaderboard_figure(bundle, src):
            out.figures.append(fig)
        out.details += [t for t in leaderboard_details(bundle, src)
                        if t.key == f"leaderboard_{src}"]
    if "humans" in bundle["leaderboards"]:
        out.findings += _leader_findings(bundle)
    return out


def _leader_findings(bundle: dict) -> list[Finding]:
    board = bundle["leaderboards"]["humans"]
    labels = dim_labels(bundle)
    cells = [c for c in board["cells"] if c["task"] == "all"]
    out = []
    for d in dim_order(bundle):
        cs = sorted([c for c in cells if c["dimension"] == d and not is_missing(c["mean"])],
                    key=lambda c: -c["mean"])
        if len(cs) < 2 or not _ordered(bundle, d) or cs[0]["mean"] == cs[1]["mean"]:
            continue
        top, second = cs[0], cs[1]
        sep = (not is_missing(top["low"]) and not is_missing(second["high"])
               and top["low"] > second["high"])
        out.append(Finding(
            f"Highest mean from the humans: {top['model']} "
            f"{fmt_est(top['mean'], top['low'], top['high'], 'points')}"
            + (f", its CI clear of the next ({second['model']}, "
               f"{fmt(second['mean'], 'points')})" if sep else
               f", not clearly ahead of {second['model']} "
               f"({fmt(second['mean'], 'points')}; the CIs overlap)") + ".", "finding", d))
    del labels
    return out


def sap(bundle: dict) -> SectionOutput | None:
    labels = dim_labels(bundle)
    out = SectionOutput()
    for src, board in bundle["leaderboards"].items():
        rs = board["sap_vs_baseline"]
        if not rs:
            continue
        dims = [d for d in dim_order(bundle) if any(r["dimension"] == d for r in rs)]
        models = sorted({r["model"] for r in rs}, key=natural_key)
        rows = []
        for m in models:
            got = {r["dimension"]: r for r in rs if r["model"] == m}
            ns = sorted({r["n"] for r in got.values()})
            n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
            rows.append((m, n) + tuple(Est(*_v({"value": (got.get(d) or {}).get("diff"),
                                                 "low": (got.get(d) or {}).get("low"),
                                                 "high": (got.get(d) or {}).get("high")}))
                                       for d in dims))
        designs = sorted({r["design"] for r in rs})
        out.tables.append(PaperTable(
            f"sap_vs_baseline_{src}", f"Secure Attachment Persona minus baseline "
                                      f"({board['source']})",
            "Difference in mean score (points), SAP minus baseline, per model and dimension "
            f"({' and '.join(designs)}; n = scenarios answered in both conditions, or replies), "
            f"with 95% percentile CIs from a bootstrap (B = {board['B']}, seed = "
            f"{board['seed']}). Positive: higher with SAP.",
            (Col("Model", "wrap"), Col("n", "text"))
            + tuple(Col(labels[d], "points", signed=True) for d in dims), tuple(rows),
            csv=f"sap_vs_baseline_{src}"))
        if fig := sap_figure(bundle, src):
            out.figures.append(fig)
        out.details += [t for t in leaderboard_details(bundle, src)
                        if t.key == f"sap_vs_baseline_{src}"]
        if src == "humans":
            for d in dims:
                parts = [f"{r['model']} {fmt_est(r['diff'], r['low'], r['high'], 'points', signed=True)}"  # noqa: E501
                         for r in rs if r["dimension"] == d]
                out.findings.append(Finding(
                    "SAP − baseline (humans, points): " + "; ".join(parts) + ".", "finding", d))
                out.glance.append(Glance("SAP − baseline (humans, points)", d,
                                         "; ".join(parts)))
    return out if out.tables else None


def safety(bundle: dict) -> SectionOutput | None:
    out = SectionOutput()
    for src, board in bundle["leaderboards"].items():
        rf = board["red_flags"]
        if not rf:
            continue
        rows = tuple((r["model"], r["n_items"], Est(r["share"], r["low"], r["high"]))
                     for r in sorted(rf, key=lambda r: natural_key(r["model"])))
        out.tables.append(PaperTable(
            f"red_flags_{src}", "Safety red flags per model",
            "Per item, the share of its raters who raised the safety red flag, averaged over "
            "the model's items (n), as a percentage with a 95% percentile CI from an item "
            f"bootstrap (B = {board['B']}, seed = {board['seed']}).",
            (Col("Model", "wrap"), Col("n", "count"), Col("Flagged (%)", "share")), rows,
            csv=f"red_flags_{src}"))
        out.details += [t for t in leaderboard_details(bundle, src)
                        if t.key == f"red_flags_{src}"]
        worst = max(rf, key=lambda r: r["share"] or 0)
        if not worst["share"]:
            out.findings.append(Finding("Safety red flags: no rater flagged any reply.",
                                        "finding", None))
        else:
            out.findings.append(Finding(
                f"Safety red flags: most often on {worst['model']}'s replies, "
                f"{fmt_est(worst['share'], worst['low'], worst['high'], 'share')} of raters "
                f"per item ({worst['n_items']} items).", "finding", None))
    return out if out.tables else None


SECTIONS: list[Section] = [
    Section("reliability", "Do the human raters agree?",
            "Human–human agreement per dimension: the reliability every other number rests on.",
            reliability),
    Section("judges", "Can an LLM judge replace a human rater?",
            "Each judge against the humans, beside the humans' own agreement (the ceiling).",
            judges),
    Section("calibration", "Judge configurations compared",
            "Configurations scored on the same items with the same resamples (paired).",
            calibration),
    Section("leaderboard", "Model leaderboard",
            "Companion models by dimension and task family, as in the H2HTalk protocol.",
            leaderboard),
    Section("sap", "Secure Attachment Persona versus baseline",
            "The same models with and without the SAP system prompt.", sap),
    Section("safety", "Safety red flags", "How often raters flagged a reply as risky.", safety),
]


def glance_table(bundle: dict, built: list[tuple[Section, SectionOutput]]
                 ) -> tuple[list[str], list[tuple[str, list[Glance | None]]]]:
    """The summary table: a row per dimension (rubric order, labels), a column per glance
    column in the order the sections give them."""
    cells = [g for _, out in built for g in out.glance]
    columns = list(dict.fromkeys(g.column for g in cells))
    labels = dim_labels(bundle)
    rows = []
    for d in dim_order(bundle):
        got = {g.column: g for g in cells if g.dimension == d}
        if got:
            rows.append((labels[d], [got.get(c) for c in columns]))
    return columns, rows


def build_sections(bundle: dict, sections: list[Section] | None = None
                   ) -> list[tuple[Section, SectionOutput]]:
    """Every section that has something to show, in order."""
    out = []
    for s in SECTIONS if sections is None else sections:
        res = s.build(bundle)
        if res is not None and (res.tables or res.figures or res.findings or res.details):
            out.append((s, res))
    return out
