"""Building the paper report for download from the admin page (a zip of `h2h report`'s
output folder), and the summary the page shows."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from sqlalchemy.engine import Engine

from analysis.options import AnalysisOptions
from analysis.report import build_bundle, write_report
from analysis.report.format import dim_labels
from analysis.report.sections import build_sections, glance_table

__all__ = ["report_zip"]


def report_zip(engine: Engine, B: int = 1000, seed: int = 0, figures: bool = True
               ) -> tuple[bytes, dict, list[dict]]:
    """The report as zip bytes, the bundle, and the report's summary table (one dict per
    dimension: its key, the rubric label, then each summary column's text). The report is
    English; the page names each dimension in the admin's language by its ``key``."""
    bundle = build_bundle(engine, AnalysisOptions(B=B, seed=seed))
    built = build_sections(bundle)
    with tempfile.TemporaryDirectory(prefix="h2h-report-") as tmp:
        out = Path(tmp) / "report"
        write_report(bundle, out, figures=figures, built=built)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(out.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(out.parent))
    columns, rows = glance_table(bundle, built)
    keys = {label: key for key, label in dim_labels(bundle).items()}
    summary = [{"key": keys.get(label, label), "Dimension": label,
                **{c: (g.text if g else "—")
                                       for c, g in zip(columns, cells, strict=True)}}
               for label, cells in rows]
    return buf.getvalue(), bundle, summary
