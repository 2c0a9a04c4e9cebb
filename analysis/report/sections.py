"""The report as a list of sections. Each section turns the bundle into plain-language findings
(per dimension or study-wide), focused paper tables, figures and full-precision detail tables;
the writers (HTML, Markdown, LaTeX, CSV, images) only lay them out.

To add a section (say, reference-based metrics as another kind of judge), write a function
``bundle -> SectionOutput | None`` and add a :class:`Section` to :data:`SECTIONS`; its findings
join the summary under each dimension, its tables get a ``tables/<key>.tex`` and a CSV, its
figures are exported like the others.
"""

from __future__ import annotations

from .findings import Finding, Glance, Section, SectionOutput
from .format import dim_labels, dim_order
from .model import ReportBundle
from .sec_heldout import TITLE as HELD_OUT_TITLE
from .sec_heldout import held_out
from .sec_humans import reliability
from .sec_judges import calibration, judges
from .sec_metrics import TITLE as METRICS_TITLE
from .sec_metrics import metrics
from .sec_models import leaderboard, safety, sap
from .sec_pairwise import TITLE as PAIRWISE_TITLE
from .sec_pairwise import pairwise
from .sec_ranking import ranking

__all__ = ["Finding", "Glance", "SectionOutput", "Section", "SECTIONS", "build_sections",
           "glance_table"]

SECTIONS: list[Section] = [
    Section("reliability", "Do the human raters agree?",
            "Human–human agreement per dimension: the reliability every other number rests on.",
            reliability, needs="analysis"),
    Section("judges", "Can an LLM judge replace a human rater?",
            "Each judge against the humans, beside the humans' own agreement (the ceiling).",
            judges, needs="analysis"),
    Section("calibration", "Judge configurations compared",
            "Configurations scored on the same items with the same resamples (paired).",
            calibration),
    Section("held_out", HELD_OUT_TITLE,
            "Configurations improved from the study's own ratings (h2h calibrate auto), each "
            "against its base on the test part, and the items that served as exemplars.",
            held_out, needs="analysis"),
    Section("metrics", METRICS_TITLE,
            "The benchmark's reference-based metrics (h2h metrics run) against the humans, "
            "beside the LLM judges and the humans' own agreement (the ceiling).", metrics,
            needs="analysis"),
    Section("leaderboard", "Model leaderboard",
            "Companion models by dimension and task family, as in the H2HTalk protocol.",
            leaderboard),
    Section("ranking", "Model ranking",
            "Companion models at the judge's scale with the humans' validity: the humans' "
            "scores of a subset and the judge's scores of every reply combined by "
            "prediction-powered inference (PPI++).", ranking),
    Section("sap", "Secure Attachment Persona versus baseline",
            "The same models with and without the SAP system prompt.", sap),
    Section("safety", "Safety red flags", "How often raters flagged a reply as risky.", safety),
    Section("pairwise", PAIRWISE_TITLE,
            "Replies compared two at a time (h2h pairs make): Bradley–Terry rankings of the "
            "models from the humans' preferences and from each pairwise judge, the judge's "
            "position bias, and how far it agrees with the humans.", pairwise),
]


def glance_table(bundle: ReportBundle, built: list[tuple[Section, SectionOutput]]
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


def build_sections(bundle: ReportBundle, sections: list[Section] | None = None
                   ) -> list[tuple[Section, SectionOutput]]:
    """Every section that has something to show, in order."""
    out = []
    for s in SECTIONS if sections is None else sections:
        res = s.build(bundle)
        if res is not None and (res.tables or res.figures or res.findings or res.details):
            out.append((s, res))
    return out
