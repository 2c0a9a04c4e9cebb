"""Section "Judges calibrated on held-out items": each configuration made by `h2h calibrate
auto` against its base on the study's frozen test part, and the items that served as its
exemplars (left out of every other comparison of that judge with the humans)."""

from __future__ import annotations

import pandas as pd

from .findings import Finding, SectionOutput, sim
from .format import dim_labels, dim_order, fmt_est
from .model import HeldOutSearch, ReportBundle
from .paper import Col, Est, Group, PaperTable
from .tables import Table

__all__ = ["TITLE", "held_out"]

TITLE = "Judges calibrated on held-out items"


def _est(d: dict | None, key: str = "qwk") -> Est:
    d = d or {}
    return Est(d.get(key), d.get("low"), d.get("high"))


def _rows(h: HeldOutSearch, bundle: ReportBundle) -> list:
    labels = dim_labels(bundle)
    t = h.test
    rows: list = [Group(f"{sim(h.config, bundle)} (from {sim(h.base, bundle)}; "
                        f"{len(h.exemplar_items)} exemplar items)")]
    dims = t.get("dimensions") or {}
    for d in [k for k in dim_order(bundle) if k in dims] + [k for k in dims
                                                           if k not in dim_order(bundle)]:
        x = dims[d]
        rows.append((labels.get(d, d), x["n_items"], _est(x["base"]), _est(x["selected"]),
                     _est(x["delta"], "diff"), x["delta"].get("p_holm")))
    rows.append(("mean over dimensions", t.get("n_items"), _est(t.get("base")),
                 _est(t.get("selected")), _est(t.get("delta"), "diff"), None))
    return rows


def _text(d: dict | None, key: str = "qwk", signed: bool = False) -> str:
    d = d or {}
    return fmt_est(d.get(key), d.get("low"), d.get("high"), signed=signed)


def _finding(h: HeldOutSearch, bundle: ReportBundle) -> Finding:
    t = h.test
    text = (f"{sim(h.config, bundle)}, made from {sim(h.base, bundle)} with "
            f"{len(h.exemplar_items)} human-scored exemplars from the train part: on "
            f"{t.get('n_items')} held-out test items its mean QWK is "
            f"{_text(t.get('selected'))} against the base's {_text(t.get('base'))} "
            f"(difference {_text(t.get('delta'), 'diff', signed=True)}).")
    return Finding(text, "finding")


def _detail(bundle: ReportBundle) -> Table:
    """Every number at full precision (``tables/held_out.csv``)."""
    rows = []
    for h in bundle.held_out:
        t = h.test
        parts = [*((d, x) for d, x in (t.get("dimensions") or {}).items()),
                 ("mean", {"n_items": t.get("n_items"), "base": t.get("base"),
                           "selected": t.get("selected"), "delta": t.get("delta")})]
        for d, x in parts:
            b, s, dl = x.get("base") or {}, x.get("selected") or {}, x.get("delta") or {}
            rows.append({"configuration": h.config, "base": h.base, "selected": h.selected,
                         "dimension": d, "items": x.get("n_items"), "base_qwk": b.get("qwk"),
                         "base_low": b.get("low"), "base_high": b.get("high"),
                         "selected_qwk": s.get("qwk"), "selected_low": s.get("low"),
                         "selected_high": s.get("high"), "delta": dl.get("diff"),
                         "delta_low": dl.get("low"), "delta_high": dl.get("high"),
                         "p": dl.get("p"), "p_holm": dl.get("p_holm"),
                         "B": t.get("B"), "seed": t.get("seed"), "split_seed": h.split_seed,
                         "exemplar_items": " ".join(h.exemplar_items)})
    return Table("held_out", TITLE, "Held-out (test part) comparison of each configuration "
                 "made by h2h calibrate auto with its base, at full precision; the exemplar "
                 "items of each.", pd.DataFrame(rows),
                 (("base QWK", "base_low", "base_high"),
                  ("selected QWK", "selected_low", "selected_high"),
                  ("Δ", "delta_low", "delta_high")))


def held_out(bundle: ReportBundle) -> SectionOutput | None:
    if not bundle.held_out:
        return None
    out = SectionOutput()
    rows: list = []
    for h in bundle.held_out:
        rows += _rows(h, bundle)
        out.findings.append(_finding(h, bundle))
        ids = ", ".join(h.exemplar_items) or "none"
        out.notes.append(f"{h.config}: exemplar items in its prompt (left out of every "
                         f"comparison of it with the humans): {ids}")
    first = bundle.held_out[0].test
    which = " ".join(
        f"Exemplar items of {h.config} (in its prompt, so left out of every other comparison "
        "of it with the humans): " + (", ".join(h.exemplar_items) if len(h.exemplar_items)
                                      <= 40 else f"{len(h.exemplar_items)} train items, listed "
                                      "in tables/held_out.csv") + "."
        for h in bundle.held_out)
    out.tables.append(PaperTable(
        "held_out", TITLE,
        "Each configuration made by h2h calibrate auto against the configuration it was made "
        "from, on the study's test part: items of scenarios that were never used to choose "
        "anything (exemplars come from the train part, the choice was made on the dev part; "
        f"the split is by scenario, seed {bundle.held_out[0].split_seed}). QWK against the "
        "leave-one-out consensus of the humans per dimension and its mean over the dimensions, "
        "with 95% percentile CIs from a paired item bootstrap "
        f"(B = {first.get('B')}, seed = {first.get('seed')}); Δ: selected − base; p: "
        "two-sided bootstrap p-value, Holm-corrected across dimensions. " + which,
        (Col("Dimension", "wrap"), Col("n", "count"), Col("Base QWK"), Col("Selected QWK"),
         Col("Δ", signed=True), Col("p (Holm)", "p")), tuple(rows), csv="held_out"))
    out.details.append(_detail(bundle))
    return out
