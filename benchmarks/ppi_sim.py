"""The simulated studies behind bench_ppi_coverage.py and bench_active_labelling.py.

Six companion models; each item (a reply) has a true quality q ~ N(mu_model, 1). Three
psychologists rate it: round(q + e), e ~ N(0, 0.4), clipped to 1-5; the item's human value is
their mean, and a model's true mean is the expected human value (computed once on 200,000
items per model). The judge scores each item three times (samples): most replies are clear-cut,
and there the judge is close to the item's quality plus its bias for that model (error SD
0.15, the samples agree); on ambiguous replies (a share that differs by model) it errs widely
(SD 1.5) and its samples disagree (SD 1.2). Its bias differs by model: it flatters one model
by 0.9 points and is a little harsh on another. Judge scores are rounded and clipped to 1-5
like real ones.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MODELS", "MU", "BIAS", "AMBIGUOUS", "simulate", "truth"]

MODELS = ("m1", "m2", "m3", "m4", "m5", "m6")
MU = np.array([2.6, 2.9, 3.1, 3.3, 3.5, 3.8])
BIAS = np.array([0.0, 0.1, -0.1, 0.9, 0.0, -0.3])
AMBIGUOUS = np.array([0.05, 0.10, 0.15, 0.20, 0.40, 0.10])


def simulate(rng: np.random.Generator, n_items: int) -> tuple[np.ndarray, ...]:
    """Human value, judge value (mean of samples), judge samples agree? — each models × items."""
    k = MU.size
    q = MU[:, None] + rng.normal(0, 1.0, (k, n_items))
    human = np.clip(np.rint(q[..., None] + rng.normal(0, 0.4, (k, n_items, 3))), 1, 5).mean(-1)
    amb = rng.random((k, n_items)) < AMBIGUOUS[:, None]
    err = rng.normal(0, 1, (k, n_items)) * np.where(amb, 1.5, 0.15)
    noise = rng.normal(0, 1, (k, n_items, 3)) * np.where(amb, 1.2, 0.05)[..., None]
    samples = np.clip(np.rint((q + BIAS[:, None] + err)[..., None] + noise), 1, 5)
    agree = samples.max(-1) == samples.min(-1)
    return human, samples.mean(-1), agree


def truth() -> np.ndarray:
    """The models' true means (expected human value), from 200,000 items each."""
    human, _, _ = simulate(np.random.default_rng(12345), 200_000)
    return human.mean(1)
