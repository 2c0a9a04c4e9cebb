"""The metrics `h2h metrics run` knows, and their scorers with the chosen settings."""

from __future__ import annotations

from typing import Literal

from .spec import Scorer

__all__ = ["METRICS", "MetricName", "build_scorer", "config_name"]

MetricName = Literal["bleu", "chrf", "rougeL", "embedding"]
METRICS: tuple[MetricName, ...] = ("bleu", "chrf", "rougeL", "embedding")


def config_name(metric: str, prefix: str | None) -> str:
    """The configuration's name: the metric's own (``bleu``), or ``PREFIX-bleu``."""
    return f"{prefix}-{metric}" if prefix else metric


def build_scorer(metric: MetricName, *, prefix: str | None = None,
                 zh_segmenter: str = "char", embedding_model=None) -> Scorer:
    """A scorer for ``metric``; ``embedding_model`` is a resolved
    :class:`analysis.refmetrics.embedding.ModelRef` (required for ``embedding``)."""
    name = config_name(metric, prefix)
    if metric == "bleu":
        from .lexical import BleuScorer

        return BleuScorer(name)
    if metric == "chrf":
        from .lexical import ChrfScorer

        return ChrfScorer(name)
    if metric == "rougeL":
        from .lexical import RougeLScorer

        return RougeLScorer(name, segmenter=zh_segmenter)  # type: ignore[arg-type]
    if metric == "embedding":
        if embedding_model is None:
            raise ValueError("the embedding metric needs a local model (--embedding-model)")
        from .embedding import EmbeddingScorer

        return EmbeddingScorer(embedding_model, name)
    raise ValueError(f"unknown metric '{metric}' (known: {', '.join(METRICS)})")
