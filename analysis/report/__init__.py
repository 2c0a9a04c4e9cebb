"""`h2h report`: the paper-ready report of a study (HTML, Markdown, LaTeX, CSV, figures,
manifest), as a list of sections (:mod:`.sections`). Every number comes from the same
functions `h2h analyze` uses.

The names load on first use (PEP 562), so that ``h2h report`` can start Chromium
(:mod:`.export`, which imports nothing heavy) before pandas, plotly and the database layer
are imported.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["build_bundle", "write_report", "FigureExporter", "SECTIONS", "Section",
           "SectionOutput", "Finding"]

_WHERE = {"build_bundle": "bundle", "write_report": "write", "FigureExporter": "export",
          "SECTIONS": "sections", "Section": "sections", "SectionOutput": "sections",
          "Finding": "sections"}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'analysis.report' has no attribute '{name}'")
    value = getattr(import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
