"""Reference-based automatic metrics (BLEU, chrF, ROUGE-L, embedding similarity) and how well
they agree with psychologists, beside the LLM judges and the human ceiling.

The H2HTalk benchmark scores its models with overlap and embedding metrics against reference
replies; this package computes them on a study's items (``h2h metrics run``) and holds them
against the human ratings (``h2h analyze``, ``h2h calibrate``, ``h2h report``). The names below
load on first use (PEP 562): ``h2h --help`` must not pay for sacrebleu, rouge-score, jieba or an
embedding model.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "METRICS", "build_scorer", "MetricSpec", "Scorer", "ScoredText", "cjk_share", "language",
    "BleuScorer", "ChrfScorer", "RougeLScorer", "EmbeddingScorer", "resolve_model",
    "Scored", "metric_dimension", "metric_comparison", "system_agreement",
    "weighted_correlations", "run_metrics",
]

# public name -> the module of this package that defines it
_WHERE = {
    "METRICS": "scorers", "build_scorer": "scorers",
    "MetricSpec": "spec", "Scorer": "spec", "ScoredText": "spec", "cjk_share": "spec",
    "language": "spec",
    "BleuScorer": "lexical", "ChrfScorer": "lexical", "RougeLScorer": "lexical",
    "EmbeddingScorer": "embedding", "resolve_model": "embedding",
    "Scored": "compare", "metric_dimension": "compare", "metric_comparison": "compare",
    "system_agreement": "system", "weighted_correlations": "correlation",
    "run_metrics": "run",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'analysis.refmetrics' has no attribute '{name}'")
    value = getattr(import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
