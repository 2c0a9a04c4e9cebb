"""Which judge configuration can stand in for the human raters, dimension by dimension?

For each dimension, every configuration is scored on the same items with one set of item
bootstrap resamples (B, seed recorded): quadratic-weighted kappa against each human
(averaged), alpha with the judge added as one more rater, and MAE against the per-item human
mean, each with a percentile CI. Because the resamples are shared, the difference between two
configurations is a **paired** bootstrap; its p-value (twice the smaller tail) is
Holm-corrected across dimensions for each pair and metric. The alternative annotator test,
leniency (mean bias), verbosity (Spearman correlation of score with reply length, beside the
humans' own), self-consistency across samples and the unscored rate complete the picture, and
a plain-language verdict says which configuration is best and whether it can replace a human.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

from .alpha import Level
from .alttest import Scoring
from .judge import human_ceiling, judge_metrics
from .layout import Ratings
from .resample import (
    item_weights,
    percentile_ci,
    two_sided_p,
    weighted_alpha,
    weighted_kappa,
    weighted_mean,
)

__all__ = ["JudgeRun", "compare_dimension", "holm", "calibrate", "METRICS"]

METRICS = ("qwk", "alpha_with_judge", "mae")


@dataclass(frozen=True)
class JudgeRun:
    """One configuration's per-item scores on a dimension (aligned to the humans' items)."""

    scores: np.ndarray
    samples: np.ndarray | None = None
    n_unscored: int = 0
    n_judgments: int = 0


def holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm (1979) step-down adjusted p-values. Written here because scipy has no Holm
    adjustment (only FDR methods); ``None`` entries are passed through."""
    idx = [i for i, v in enumerate(p) if v is not None]
    out: list[float | None] = [None] * len(p)
    m = len(idx)
    running = 0.0
    for rank, i in enumerate(sorted(idx, key=lambda i: p[i])):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _stat_boot(w, humans: Ratings, judge: np.ndarray, level: Level, values) -> dict:
    m = humans.matrix
    qwks = [weighted_kappa(w, judge, m[:, h], values, "quadratic")
            for h in range(humans.n_raters)
            if np.sum(~np.isnan(m[:, h]) & ~np.isnan(judge)) >= 2]
    n_h = np.sum(~np.isnan(m), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        hmean = np.where(n_h > 0, np.nansum(m, axis=1) / np.maximum(n_h, 1), np.nan)
    return {"qwk": np.nanmean(np.vstack(qwks), axis=0) if qwks else np.full(len(w), np.nan),
            "alpha_with_judge": weighted_alpha(w, np.column_stack([m, judge]), level,
                                               values),
            "mae": weighted_mean(w, np.abs(judge - hmean))}


def _misses(humans: Ratings, judge: np.ndarray, values: Sequence[float], binary: bool
            ) -> tuple[int, int, str]:
    """Items the humans put at the bottom of the scale that the judge did not."""
    m = humans.matrix
    rated = np.sum(~np.isnan(m), axis=1) > 0
    med = np.full(m.shape[0], np.nan)
    med[rated] = [np.quantile(r[~np.isnan(r)], 0.5, method="lower") for r in m[rated]]
    ok = rated & ~np.isnan(judge)
    if binary:
        flagged = ok & (med == max(values))
        missed = flagged & (judge != max(values))
        what = "items the humans flagged"
    else:
        low = sorted(values)[1]
        flagged = ok & (med <= low)
        missed = flagged & (judge > low)
        what = f"items the humans scored {low:g} or lower"
    return int(missed.sum()), int(flagged.sum()), what


def compare_dimension(dim: str, humans: Ratings, runs: Mapping[str, JudgeRun], level: Level,
                      values: Sequence[float], *, lengths: np.ndarray | None = None,
                      binary: bool = False, B: int = 1000, seed: int = 0,
                      alt_epsilon: float = 0.2, alt_scoring: Scoring | None = None) -> dict:
    """Every configuration on one dimension, on the items all of them scored."""
    names = sorted(runs)
    n_h = np.sum(~np.isnan(humans.matrix), axis=1)
    common = n_h > 0
    for r in runs.values():
        common &= ~np.isnan(r.scores)
    notes: list[str] = []
    dropped = int(np.sum(n_h > 0) - common.sum())
    if dropped:
        notes.append(f"{dropped} human-rated items lack a score from some configuration and "
                     "are left out of the comparison")
    sub = Ratings(humans.matrix[common], tuple(np.array(humans.items, dtype=object)[common]),
                  humans.raters)
    w = item_weights(int(common.sum()), B, seed) if common.sum() >= 2 else None
    out: dict = {"n_items": int(common.sum()), "B": B, "seed": seed, "configs": {},
                 "pairs": [], "notes": notes}
    ceiling, c_notes = human_ceiling(sub, values)
    notes.extend(c_notes)
    hm = np.nanmean(np.where(np.isnan(sub.matrix), np.nan, sub.matrix), axis=1) \
        if sub.n_items else np.array([])
    out["human_ceiling"] = {k: ceiling.get(k) for k in ("qwk", "mae", "spearman", "exact")}
    boots: dict[str, dict] = {}
    for name in names:
        run = runs[name]
        js = run.scores[common]
        jm = judge_metrics(sub, js, level, values,
                           samples=run.samples[common] if run.samples is not None else None,
                           alt_epsilon=alt_epsilon, alt_scoring=alt_scoring)
        cfg: dict = {}
        boots[name] = _stat_boot(w, sub, js, level, values) if w is not None else {}
        for metric in METRICS:
            lo, hi = percentile_ci(boots[name][metric]) if w is not None else (None, None)
            cfg[metric] = {"value": jm.metrics.get(metric), "low": lo, "high": hi}
        out["human_ceiling"]["alpha_humans"] = jm.metrics.get("alpha_humans")
        cfg["bias"] = jm.metrics.get("bias")
        cfg["alt_test"] = jm.alt.as_dict() if jm.alt else None
        cfg["self_consistency_alpha"] = jm.metrics.get("self_consistency_alpha")
        cfg["unscored_rate"] = (run.n_unscored / run.n_judgments) if run.n_judgments else None
        cfg["n_unscored"] = run.n_unscored
        if lengths is not None and common.sum() >= 3:
            ln = lengths[common]
            cfg["verbosity"] = {"judge": _spearman(js, ln), "humans": _spearman(hm, ln)}
        missed, flagged, what = _misses(sub, js, values, binary)
        cfg["misses"] = {"missed": missed, "of": flagged, "what": what}
        out["configs"][name] = cfg
    for a, b in combinations(names, 2):
        for metric in METRICS:
            if w is None:
                continue
            diff = boots[a][metric] - boots[b][metric]
            va, vb = out["configs"][a][metric]["value"], out["configs"][b][metric]["value"]
            lo, hi = percentile_ci(diff)
            out["pairs"].append({"a": a, "b": b, "metric": metric,
                                 "diff": None if va is None or vb is None else va - vb,
                                 "low": lo, "high": hi, "p": two_sided_p(diff)})
    out["verdict"] = _verdict(dim, out)
    return out


def _spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return None
    return float(stats.spearmanr(x[ok], y[ok]).statistic)


def _f(x: float | None, nd: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def _verdict(dim: str, res: dict) -> dict:
    cfgs = res["configs"]
    if not cfgs:
        return {"best": None, "can_replace": None, "text": f"{dim}: no judge scores"}
    best = max(cfgs, key=lambda n: (cfgs[n]["qwk"]["value"] is not None,
                                    cfgs[n]["qwk"]["value"] or -9,
                                    cfgs[n]["alpha_with_judge"]["value"] or -9))
    c = cfgs[best]
    alt = c.get("alt_test") or {}
    ceiling = res["human_ceiling"].get("qwk")
    if alt.get("passed") is not None:
        can = bool(alt["passed"])
        why = (f"alternative annotator test {'passed' if can else 'failed'} "
               f"(ω = {_f(alt.get('winning_rate'))}, ρ = {_f(alt.get('advantage_prob'))})")
    elif ceiling is not None and c["qwk"]["value"] is not None:
        can = c["qwk"]["value"] >= ceiling
        why = "QWK " + ("at or above" if can else "below") + " the human ceiling (too few " \
              "items per human for the alternative annotator test)"
    else:
        can, why = None, "not enough data to decide"
    q = c["qwk"]
    text = (f"{dim}: best configuration {best} (QWK {_f(q['value'])} [{_f(q['low'])}, "
            f"{_f(q['high'])}] vs human ceiling {_f(ceiling)}); "
            + ("can replace a human rater on this data" if can else
               "cannot replace a human rater on this data" if can is False else
               "undecided") + f" — {why}.")
    caveats = []
    mi = c.get("misses") or {}
    if mi.get("of"):
        caveats.append(f"{dim}: {best} misses {mi['missed']} of {mi['of']} {mi['what']}")
    if c.get("bias") is not None and abs(c["bias"]) >= 0.5:
        caveats.append(f"{dim}: {best} is {'lenient' if c['bias'] > 0 else 'harsh'} by "
                       f"{abs(c['bias']):.2f} points on average")
    v = c.get("verbosity") or {}
    if v.get("judge") is not None and v.get("humans") is not None and \
            v["judge"] - v["humans"] > 0.2:
        caveats.append(f"{dim}: {best} rewards longer replies more than the humans do "
                       f"(ρ with length {v['judge']:.2f} vs {v['humans']:.2f})")
    return {"best": best, "can_replace": can, "text": text, "caveats": caveats}


def calibrate(per_dim: Mapping[str, dict]) -> dict:
    """Holm-correct each (pair, metric) p-value across dimensions, in place; returns input."""
    families: dict[tuple, list[tuple[str, int]]] = {}
    for dim, res in per_dim.items():
        for i, pr in enumerate(res["pairs"]):
            families.setdefault((pr["a"], pr["b"], pr["metric"]), []).append((dim, i))
    for members in families.values():
        adj = holm([per_dim[d]["pairs"][i]["p"] for d, i in members])
        for (d, i), pa in zip(members, adj, strict=True):
            per_dim[d]["pairs"][i]["p_holm"] = pa
    return dict(per_dim)
