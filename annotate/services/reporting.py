"""Building the paper report for download from the admin page (a zip of `h2h report`'s
output folder)."""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from sqlalchemy.engine import Engine

from analysis.analyze import AnalysisOptions
from analysis.report import build_bundle, write_report

__all__ = ["report_zip"]


def report_zip(engine: Engine, B: int = 1000, seed: int = 0, figures: bool = True
               ) -> tuple[bytes, dict]:
    """The report as zip bytes, and the bundle (for showing verdicts on the page)."""
    bundle = build_bundle(engine, AnalysisOptions(B=B, seed=seed))
    with tempfile.TemporaryDirectory(prefix="h2h-report-") as tmp:
        out = Path(tmp) / "report"
        write_report(bundle, out, figures=figures)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(out.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(out.parent))
    return buf.getvalue(), bundle
