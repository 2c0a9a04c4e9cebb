"""`h2h report`: the paper-ready report of a study (HTML, Markdown, LaTeX, CSV, figures,
manifest). Every number comes from the same functions `h2h analyze` uses."""

from .bundle import build_bundle
from .write import write_report

__all__ = ["build_bundle", "write_report"]
