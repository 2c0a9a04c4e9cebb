"""The options of one analysis, passed whole from the command line to every statistic.

Every layer reads these fields by these names: a function below :func:`analysis.analyze.analyze`
that needs one of them takes the options whole, never the fields one by one (so a field cannot
be dropped, swapped or renamed on the way).
"""

from __future__ import annotations

from dataclasses import dataclass

from .alpha import CIMethod
from .alttest import Scoring

__all__ = ["AnalysisOptions"]


@dataclass(frozen=True)
class AnalysisOptions:
    """``B = 0`` skips every bootstrap (point estimates only). ``margin`` is the
    non-inferiority margin on QWK for the verdict; ``min_units`` the fewest items rated by two
    or more raters for alpha, kappa, AC1/AC2 and ICC (``--min-items``), and the fewest items a
    judge must share with two or more humans for a verdict; ``min_shared_items`` the fewest
    shared items for a rater pair to count in Cohen's kappa, and for a human to count in the
    human ceiling (items that another human also rated)."""

    B: int = 1000
    seed: int = 0
    alpha_min: float = 0.667
    ci: float = 0.95
    ci_method: CIMethod = "unit"
    alt_epsilon: float = 0.2
    alt_scoring: Scoring | None = None
    margin: float = 0.05
    min_units: int = 5
    min_shared_items: int = 10

    def __post_init__(self):
        if self.B < 0:
            raise ValueError(f"B must be 0 (no bootstrap) or more; got {self.B}")
        if self.margin < 0:
            raise ValueError(f"margin must be 0 or more; got {self.margin}")
        if self.min_units < 2 or self.min_shared_items < 2:
            raise ValueError("min_units and min_shared_items must be at least 2")

    def scoring_for(self, level: str) -> Scoring:
        """The alternative annotator test's scoring on a dimension of this level: the one
        asked for, else accuracy on a nominal scale and neg_rmse on an ordered one."""
        return self.alt_scoring or ("accuracy" if level == "nominal" else "neg_rmse")
