"""The simulated studies behind bench_ppi_coverage.py and bench_active_labelling.py.

Six companion models; each item (a reply) has a true quality q ~ N(mu_model, 1).

:func:`simulate` (the coverage benchmark's judge): three psychologists rate each item
round(q + e), e ~ N(0, 0.4), clipped to 1-5; the item's human value is their mean, and a
model's true mean is the expected human value (computed once on 200,000 items per model).
The judge scores each item three times (samples): most replies are clear-cut, and there the
judge is close to the item's quality plus its bias for that model (error SD 0.15, the samples
agree); on ambiguous replies (a share that differs by model) it errs widely (SD 1.5) and its
samples disagree (SD 1.2). Its bias differs by model: it flatters one model by 0.9 points and
is a little harsh on another. Judge scores are rounded and clipped to 1-5 like real ones.
Every item's quality is continuous, so the psychologists' own rounding and disagreement is as
large on clear-cut replies as on ambiguous ones: the judge's sample spread says little about
the residual human − judge there.

:func:`simulate_selfconsistent` (a judge whose self-consistency is informative): a share of
replies (8-20% by model) are ambiguous, the rest clear-cut.

* A clear-cut reply sits on a rubric anchor a = round(q). Each of three psychologists gives
  a, except for a slip of ±1 (5% of ratings). The judge gives a shifted by its bias for the
  model rounded to a whole point (+1 for the flattered model), the same in all five samples
  except for a slip of ±1 (2% of samples).
* An ambiguous reply has a continuous quality q. The psychologists give round(q + N(0, 0.7))
  each; the judge's five samples are round(q + bias + N(0, 1.0) + N(0, 0.8)): the first
  error its own for the item, the second per sample. Its samples spread and its error is
  large.

Scores are clipped to 1-5 (a flattering judge at 5 loses its shift: a confident error there).
``shuffle_spread=True`` keeps every score and permutes the sample spreads among each model's
items: the same judge, with an uncertainty signal that says nothing.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MODELS", "MU", "BIAS", "AMBIGUOUS", "HARD", "simulate", "truth",
           "simulate_selfconsistent", "truth_selfconsistent"]

MODELS = ("m1", "m2", "m3", "m4", "m5", "m6")
MU = np.array([2.6, 2.9, 3.1, 3.3, 3.5, 3.8])
BIAS = np.array([0.0, 0.1, -0.1, 0.9, 0.0, -0.3])
AMBIGUOUS = np.array([0.05, 0.10, 0.15, 0.20, 0.40, 0.10])
HARD = np.array([0.08, 0.10, 0.12, 0.15, 0.20, 0.10])


def simulate(rng: np.random.Generator, n_items: int, *,
             spread: bool = False) -> tuple[np.ndarray, ...]:
    """Human value, judge value (mean of samples), and whether the judge's samples agree (or,
    ``spread=True``, their SD) — each models × items."""
    k = MU.size
    q = MU[:, None] + rng.normal(0, 1.0, (k, n_items))
    human = np.clip(np.rint(q[..., None] + rng.normal(0, 0.4, (k, n_items, 3))), 1, 5).mean(-1)
    amb = rng.random((k, n_items)) < AMBIGUOUS[:, None]
    err = rng.normal(0, 1, (k, n_items)) * np.where(amb, 1.5, 0.15)
    noise = rng.normal(0, 1, (k, n_items, 3)) * np.where(amb, 1.2, 0.05)[..., None]
    samples = np.clip(np.rint((q + BIAS[:, None] + err)[..., None] + noise), 1, 5)
    third = samples.std(-1) if spread else samples.max(-1) == samples.min(-1)
    return human, samples.mean(-1), third


def truth() -> np.ndarray:
    """The models' true means (expected human value), from 200,000 items each."""
    human, _, _ = simulate(np.random.default_rng(12345), 200_000)
    return human.mean(1)


def _slips(rng: np.random.Generator, shape: tuple[int, ...], rate: float) -> np.ndarray:
    return (rng.random(shape) < rate) * np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def simulate_selfconsistent(rng: np.random.Generator, n_items: int, *,
                            shuffle_spread: bool = False) -> tuple[np.ndarray, ...]:
    """Human value (mean of three), judge value (mean of five samples) and the SD of the
    judge's samples — each models × items (see the module's description)."""
    k = MU.size
    shape = (k, n_items)
    q = MU[:, None] + rng.normal(0, 1.0, shape)
    amb = rng.random(shape) < HARD[:, None]
    anchor = np.clip(np.rint(q), 1, 5)
    h_clear = anchor[..., None] + _slips(rng, (*shape, 3), 0.05)
    h_amb = np.rint(q[..., None] + rng.normal(0, 0.7, (*shape, 3)))
    human = np.clip(np.where(amb[..., None], h_amb, h_clear), 1, 5).mean(-1)
    j_clear = (anchor + np.rint(BIAS)[:, None])[..., None] + _slips(rng, (*shape, 5), 0.02)
    centre = q + BIAS[:, None] + rng.normal(0, 1.0, shape)
    j_amb = np.rint(centre[..., None] + rng.normal(0, 0.8, (*shape, 5)))
    samples = np.clip(np.where(amb[..., None], j_amb, j_clear), 1, 5)
    sd = samples.std(-1)
    if shuffle_spread:
        sd = np.take_along_axis(sd, rng.permuted(np.tile(np.arange(n_items), (k, 1)), axis=1),
                                axis=1)
    return human, samples.mean(-1), sd


def truth_selfconsistent() -> np.ndarray:
    """The models' true means under :func:`simulate_selfconsistent`, from 200,000 items
    each."""
    human, _, _ = simulate_selfconsistent(np.random.default_rng(12345), 200_000)
    return human.mean(1)
