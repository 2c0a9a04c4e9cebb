"""The alternative annotator test (Calderon, Reichart & Dror, ACL 2025).

Can an LLM judge replace one of the human annotators? Leave each human ``j`` out in turn. On
every item ``j`` labelled (among items with at least ``min_humans`` human labels and a judge
label), score the judge's label and ``j``'s label against each remaining human's label on
that item — ``accuracy``: the share of remaining labels matched; ``neg_rmse``: minus the root
mean squared difference to them — and record the indicators ``W_f = [judge >= human]`` and
``W_h = [human >= judge]`` (ties count for both). Test ``H0: mean(W_h - W_f) >= epsilon``
with a one-sided one-sample t-test per human; control the false discovery rate across humans
with Benjamini–Yekutieli at ``q``. The winning rate ``omega`` is the share of tested humans
whose null is rejected (pass at ``omega >= 0.5``); the advantage probability ``rho`` is the
mean over tested humans of ``mean(W_f)``. Humans with fewer than ``min_items`` items are
skipped.

``epsilon`` is the cost-benefit margin: about 0.2 for expert annotators, 0.15 for skilled,
0.1 for crowd workers.

Reference
---------
Calderon, N., Reichart, R., & Dror, R. (2025). The Alternative Annotator Test for
LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs. ACL 2025.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats

from messages import Msg

__all__ = ["AltTestResult", "alt_test", "Scoring"]

Scoring = Literal["accuracy", "neg_rmse"]


@dataclass(frozen=True)
class AltTestResult:
    epsilon: float
    scoring: Scoring
    winning_rate: float | None
    advantage_prob: float | None
    passed: bool | None
    humans_tested: int
    humans_skipped: int
    items_used: int
    items_dropped: int
    p_values: dict[str, float] = field(default_factory=dict)
    rejected: dict[str, bool] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {"epsilon": self.epsilon, "scoring": self.scoring,
                "winning_rate": self.winning_rate, "advantage_prob": self.advantage_prob,
                "passed": self.passed, "humans_tested": self.humans_tested,
                "humans_skipped": self.humans_skipped, "items_used": self.items_used,
                "items_dropped": self.items_dropped}


def _scores(labels: np.ndarray, others: np.ndarray, scoring: Scoring) -> np.ndarray:
    """Score ``labels`` (n,) against the other humans' labels ``others`` (n, h; nan = none)."""
    valid = ~np.isnan(others)
    n_valid = valid.sum(axis=1)
    if scoring == "accuracy":
        match = (others == labels[:, None]) & valid
        return match.sum(axis=1) / n_valid
    sq = np.where(valid, (others - labels[:, None]) ** 2, 0.0)
    return -np.sqrt(sq.sum(axis=1) / n_valid)


# the fewest items a human must have rated (among those the judge scored) to be tested
MIN_ITEMS = 30


def alt_test(humans: np.ndarray, judge: np.ndarray, *, scoring: Scoring = "neg_rmse",
             epsilon: float = 0.2, q: float = 0.05, min_humans: int = 2,
             min_items: int = MIN_ITEMS, human_names: tuple | None = None) -> AltTestResult:
    """Run the test on an items × humans matrix (``nan`` = not labelled) and judge labels.

    Examples
    --------
    A judge that copies the majority beats humans who each disagree on a quarter of items:

    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(1, 6, 200).astype(float)
    >>> h = np.column_stack([np.where(rng.random(200) < .25, rng.integers(1, 6, 200), truth)
    ...                      for _ in range(4)])
    >>> res = alt_test(h, truth, scoring="accuracy", epsilon=0.1)
    >>> res.passed, res.humans_tested
    (True, 4)
    """
    humans = np.asarray(humans, dtype=float)
    judge = np.asarray(judge, dtype=float)
    if humans.ndim != 2 or judge.shape != (humans.shape[0],):
        raise ValueError("humans must be items × humans and judge one label per item")
    if scoring not in ("accuracy", "neg_rmse"):
        raise ValueError(f"scoring must be 'accuracy' or 'neg_rmse'; got {scoring!r}")
    names = human_names or tuple(range(humans.shape[1]))
    n_h = np.sum(~np.isnan(humans), axis=1)
    keep = (n_h >= min_humans) & ~np.isnan(judge)
    notes: list[str] = []
    dropped = int(np.sum((n_h > 0) & ~keep))
    if dropped:
        notes.append(Msg("alt-test: {n} items dropped (fewer than {min} human labels or no "
                         "judge label)", n=dropped, min=min_humans))
    p_values: dict[str, float] = {}
    rho_parts: list[float] = []
    skipped = 0
    for j in range(humans.shape[1]):
        rows = keep & ~np.isnan(humans[:, j])
        if rows.sum() < min_items:
            skipped += 1
            continue
        others = np.delete(humans[rows], j, axis=1)
        s_judge = _scores(judge[rows], others, scoring)
        s_human = _scores(humans[rows, j], others, scoring)
        w_f = (s_judge >= s_human).astype(float)
        w_h = (s_human >= s_judge).astype(float)
        diff = w_h - w_f
        if np.ptp(diff) == 0:
            # A constant difference has no variance and the t statistic is undefined; the
            # evidence is then decided by the constant itself.
            p = 0.0 if diff[0] < epsilon else 1.0
            notes.append(f"alt-test: human {names[j]}'s differences are all {diff[0]:g}; "
                         "p set to " + ("0" if p == 0 else "1"))
        else:
            p = float(stats.ttest_1samp(diff, epsilon, alternative="less").pvalue)
        p_values[str(names[j])] = p
        rho_parts.append(float(w_f.mean()))
    if skipped:
        notes.append(Msg("alt-test: {n} humans skipped (fewer than {min} items)", n=skipped,
                         min=min_items))
    if not p_values:
        notes.append(Msg("alt-test: no human has enough items; the test cannot be run"))
        return AltTestResult(epsilon, scoring, None, None, None, 0, skipped,
                             int(keep.sum()), dropped, notes=tuple(notes))
    ps = np.array(list(p_values.values()))
    adjusted = stats.false_discovery_control(ps, method="by")
    rejected = {k: bool(a <= q) for k, a in zip(p_values, adjusted, strict=True)}
    omega = sum(rejected.values()) / len(rejected)
    return AltTestResult(epsilon, scoring, float(omega), float(np.mean(rho_parts)),
                         bool(omega >= 0.5), len(p_values), skipped, int(keep.sum()), dropped,
                         p_values, rejected, tuple(notes))
