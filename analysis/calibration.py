"""Which judge configuration can stand in for the human raters, dimension by dimension?

For each dimension, every configuration is scored on the same items with one set of item
bootstrap resamples (B, seed recorded): QWK and MAE against the leave-one-out consensus of the
humans, pooled over (human, item) pairs exactly as the human ceiling is (see
:mod:`analysis.ceiling`), and alpha with the judge added as one more rater, each with a
percentile CI. Because the resamples are shared, the difference between two configurations —
and between a configuration and the ceiling — is a **paired** bootstrap; the p-values between
configurations (twice the smaller tail) are Holm-corrected across dimensions for each pair and
metric. The alternative annotator test, leniency (mean bias), verbosity (Spearman correlation of
score with reply length, beside the humans' own), self-consistency across samples and the
unscored rate complete the picture. Each configuration's verdict comes from
:func:`analysis.verdict.replacement_verdict`, the one rule used everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

from messages import Msg

from .alpha import Level, alpha_from_matrix
from .ceiling import loo_pairs, mae_from_sums, pair_sums, pooled_metrics, qwk_from_sums
from .judge import judge_metrics, lower_medians
from .layout import Ratings
from .options import AnalysisOptions
from .resample import item_weights, percentile_ci, two_sided_p, weighted_alpha

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


def _misses(humans: Ratings, judge: np.ndarray, values: Sequence[float], binary: bool
            ) -> tuple[int, int, str]:
    """Items the humans put at the bottom of the scale that the judge did not."""
    m = humans.matrix
    rated = np.sum(~np.isnan(m), axis=1) > 0
    med = np.full(m.shape[0], np.nan)
    med[rated] = lower_medians(m[rated])
    ok = rated & ~np.isnan(judge)
    if binary:
        flagged = ok & (med == max(values))
        missed = flagged & (judge != max(values))
        what = Msg("items the humans flagged")
    else:
        low = sorted(values)[1]
        flagged = ok & (med <= low)
        missed = flagged & (judge > low)
        what = Msg("items the humans scored {low:g} or lower", low=low)
    return int(missed.sum()), int(flagged.sum()), what


def _no_scores(run: JudgeRun, margin: float, why: str = Msg("no scored judgments")) -> dict:
    from .verdict import replacement_verdict

    v = replacement_verdict(None, None, margin=margin,
                            not_estimable=Msg("{why} on this dimension", why=why))
    none = {"value": None, "low": None, "high": None}
    return {"status": why, "n_items": 0, "qwk": none,
            "alpha_with_judge": dict(none), "mae": dict(none), "bias": None, "alt_test": None,
            "vs_ceiling": None, "verdict": v.as_dict(), "self_consistency_alpha": None,
            "n_unscored": run.n_unscored, "n_judgments": run.n_judgments,
            "unscored_rate": (run.n_unscored / run.n_judgments) if run.n_judgments else None}


def compare_dimension(dim: str, humans: Ratings, runs: Mapping[str, JudgeRun], level: Level,
                      values: Sequence[float], *, lengths: np.ndarray | None = None,
                      binary: bool = False, options: AnalysisOptions = AnalysisOptions(),
                      known: Mapping[str, dict] | None = None) -> dict:
    """Every configuration on one dimension, on the items all of them scored.

    A configuration without any scored judgment on the dimension is listed as such (with its
    verdict "no verdict") and does not shrink the others' common items. ``known`` holds
    ``analyze``'s judge blocks for this dimension (``analysis["judges"][name][dim]``, computed
    with the same options); a configuration whose scored items are exactly the common items
    takes its metrics, CIs, test and verdict from there instead of computing them again.
    """
    B, seed, margin, ci = options.B, options.seed, options.margin, options.ci
    n_h = np.sum(~np.isnan(humans.matrix), axis=1)
    scored = {n: r for n, r in runs.items() if np.any(~np.isnan(r.scores) & (n_h > 0))}
    names = sorted(scored)
    common = n_h > 0
    for r in scored.values():
        common &= ~np.isnan(r.scores)
    notes: list[str] = []
    dropped = int(np.sum(n_h > 0) - common.sum())
    if dropped and names:
        notes.append(Msg("{n} human-rated items lack a score from some configuration and are "
                         "left out of the comparison", n=dropped))
    for n in sorted(set(runs) - set(scored)):
        notes.append(Msg("{name}: no scored judgments on {dim}", name=n, dim=dim))
    if names and not common.any():
        notes.append(Msg("the configurations share no scored item on this dimension; compare "
                         "them one at a time"))
        cfgs = {n: _no_scores(runs[n], margin, Msg("no item scored by every configuration"))
                for n in names}
        cfgs.update({n: _no_scores(runs[n], margin) for n in set(runs) - set(scored)})
        out = {"n_items": 0, "B": B, "seed": seed, "margin": margin,
               "configs": dict(sorted(cfgs.items())), "pairs": [], "notes": notes,
               "human_ceiling": {"qwk": {"value": None, "low": None, "high": None}}}
        out["verdict"] = _best_configuration(dim, out)
        return out
    sub = Ratings(humans.matrix[common], tuple(np.array(humans.items, dtype=object)[common]),
                  humans.raters)
    use_boot = B > 0 and common.sum() >= 2 and names
    w = item_weights(int(common.sum()), B, seed) if use_boot else None
    # The same leave-one-out pairs as `h2h analyze` forms for one judge on these items (the
    # humans left out for too few items are chosen on all items), so with one configuration
    # the numbers and the verdict are those of `h2h analyze`.
    pairs = loo_pairs(humans.matrix, rows=common, min_shared_items=options.min_shared_items)
    ceiling = pooled_metrics(pairs)
    n_rows = humans.n_items
    out: dict = {"n_items": int(common.sum()), "B": B, "seed": seed, "margin": margin,
                 "configs": {n: _no_scores(runs[n], margin) for n in set(runs) - set(scored)},
                 "pairs": [], "notes": notes}
    out["human_ceiling"] = {"qwk": {"value": ceiling["qwk"], "low": None, "high": None},
                            "mae": ceiling["mae"], "spearman": ceiling["spearman"],
                            "exact": ceiling["exact"], "n_items": ceiling["n_items"],
                            "n_pairs": ceiling["n_pairs"], "alpha_humans": None}
    hm = np.nanmean(sub.matrix, axis=1) if sub.n_items else np.array([])
    boots: dict[str, dict] = {}
    for name in names:
        run = runs[name]
        js_full = np.where(common, run.scores, np.nan)
        js = run.scores[common]
        own_rows = ~np.isnan(run.scores) & (n_h > 0)
        # The verdict is the configuration's own, on every human-rated item it scored (the
        # same as `h2h analyze` gives it); the comparison with the other configurations is
        # on the items all of them scored. One judge, one verdict, wherever it is shown.
        def metrics(scores: np.ndarray, samples: np.ndarray | None) -> dict:
            return _block(judge_metrics(humans, scores, level, values, samples=samples,
                                        options=options))

        own = (known or {}).get(name)
        if not (own and own.get("n_scored_items") == int(own_rows.sum())):
            own = metrics(run.scores, run.samples)
        block = own if np.array_equal(own_rows, common) else metrics(
            js_full, None if run.samples is None else
            np.where(common[:, None], run.samples, np.nan))
        comparison = block["vs_ceiling"]
        if w is not None:
            s_j = pair_sums(pairs, js_full[pairs.item], n_rows)[common]
            boots[name] = {"qwk": qwk_from_sums(w @ s_j), "mae": mae_from_sums(w @ s_j),
                           "alpha_with_judge": weighted_alpha(w, np.column_stack(
                               [sub.matrix, js]), level, values)}
        cfg: dict = {"status": "ok", "n_items": block["n_items"]}
        for metric in METRICS:
            lo, hi = percentile_ci(boots[name][metric], ci) if name in boots else (None, None)
            cfg[metric] = {"value": block.get(metric), "low": lo, "high": hi}
        if comparison is not None:  # the QWK CI is the one of the comparison with the ceiling
            cfg["qwk"].update(low=comparison["judge_qwk"]["low"],
                              high=comparison["judge_qwk"]["high"])
            out["human_ceiling"]["qwk"].update(low=comparison["ceiling_qwk"]["low"],
                                               high=comparison["ceiling_qwk"]["high"])
        cfg["alpha_with_judge"]["value"] = _alpha(np.column_stack([sub.matrix, js]), level,
                                                  values)
        out["human_ceiling"]["alpha_humans"] = _alpha(sub.matrix, level, values)
        cfg["bias"] = block.get("bias")
        cfg["alt_test"] = own["alt_test"]
        cfg["vs_ceiling"] = own["vs_ceiling"]
        cfg["verdict"] = own["verdict"]
        cfg["verdict_n_items"] = own["verdict"].get("n_items") or own.get("n_items")
        cfg["self_consistency_alpha"] = block.get("self_consistency_alpha")
        cfg["unscored_rate"] = (run.n_unscored / run.n_judgments) if run.n_judgments else None
        cfg["n_unscored"] = run.n_unscored
        cfg["n_judgments"] = run.n_judgments
        if lengths is not None and common.sum() >= 3:
            ln = lengths[common]
            cfg["verbosity"] = {"judge": _spearman(js, ln), "humans": _spearman(hm, ln)}
        missed, flagged, what = _misses(sub, js, values, binary)
        cfg["misses"] = {"missed": missed, "of": flagged, "what": what}
        out["configs"][name] = cfg
    for a, b in combinations(names, 2):
        if a not in boots or b not in boots:
            continue
        for metric in METRICS:
            diff = boots[a][metric] - boots[b][metric]
            va, vb = out["configs"][a][metric]["value"], out["configs"][b][metric]["value"]
            lo, hi = percentile_ci(diff, ci)
            out["pairs"].append({"a": a, "b": b, "metric": metric,
                                 "diff": None if va is None or vb is None else va - vb,
                                 "low": lo, "high": hi, "p": two_sided_p(diff)})
    out["configs"] = dict(sorted(out["configs"].items()))
    out["verdict"] = _best_configuration(dim, out)
    return out


def _block(jm) -> dict:
    """A :class:`analysis.judge.JudgeMetrics` as the dict `h2h analyze` stores per judge and
    dimension."""
    return {**jm.metrics, "alt_test": jm.alt.as_dict() if jm.alt else None,
            "vs_ceiling": jm.comparison.as_dict() if jm.comparison else None,
            "verdict": jm.verdict.as_dict()}


def _alpha(m: np.ndarray, level: Level, values: Sequence[float]) -> float | None:
    a = alpha_from_matrix(m, level, values)
    return float(a) if np.isfinite(a) else None


def _spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return None
    return float(stats.spearmanr(x[ok], y[ok]).statistic)


def _best_configuration(dim: str, res: dict) -> dict:
    """The dimension's summary: the best configuration (highest QWK) and its verdict, which
    comes from :func:`analysis.verdict.replacement_verdict` like every other verdict."""
    cfgs = {n: c for n, c in res["configs"].items() if c.get("status") == "ok"}
    if not cfgs:
        return {"best": None, "outcome": "not_estimable", "can_replace": None,
                "text": Msg("{dim}: no verdict — no configuration has scored judgments here.",
                            dim=dim),
                "caveats": []}
    def rank(n: str) -> tuple[float, float]:
        # highest QWK, ties broken by alpha with the judge; an undefined value ranks last (a
        # QWK of exactly 0 is a value, above any negative one)
        q, a = cfgs[n]["qwk"]["value"], cfgs[n]["alpha_with_judge"]["value"]
        return (-math.inf if q is None else q, -math.inf if a is None else a)

    best = max(cfgs, key=rank)
    c = cfgs[best]
    v = c["verdict"]
    if len(cfgs) > 1 and c.get("verdict_n_items") != c.get("n_items"):
        # the comparison and the verdict rest on different items: say which is which
        text = Msg("{dim}: best configuration {best}, compared on the {n} items every "
                   "configuration scored; on all the items it scored, {verdict}", dim=dim,
                   best=best, n=c["n_items"], verdict=v["text"])
    else:
        text = Msg("{dim}: best configuration {best}; {verdict}", dim=dim, best=best,
                   verdict=v["text"])
    caveats = []
    mi = c.get("misses") or {}
    if mi.get("missed"):  # "misses 0 of 18" is no caveat
        caveats.append(Msg("{dim}: {best} misses {missed} of {of} {what}", dim=dim, best=best,
                           missed=mi["missed"], of=mi["of"], what=mi["what"]))
    if c.get("bias") is not None and abs(c["bias"]) >= 0.5:
        p = {"dim": dim, "best": best, "points": abs(c["bias"])}
        caveats.append(Msg("{dim}: {best} is lenient by {points:.2f} points on average", **p)
                       if c["bias"] > 0 else
                       Msg("{dim}: {best} is harsh by {points:.2f} points on average", **p))
    vb = c.get("verbosity") or {}
    if vb.get("judge") is not None and vb.get("humans") is not None and \
            vb["judge"] - vb["humans"] > 0.2:
        caveats.append(Msg("{dim}: {best} rewards longer replies more than the humans do (ρ "
                           "with length {judge:.2f} vs {humans:.2f})", dim=dim, best=best,
                           judge=vb["judge"], humans=vb["humans"]))
    can = {"can_replace": True, "cannot_replace": False}.get(v["outcome"])
    return {"best": best, "outcome": v["outcome"], "can_replace": can, "text": text,
            "items_needed": v.get("items_needed"), "caveats": caveats}


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
