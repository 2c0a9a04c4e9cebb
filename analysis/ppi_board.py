"""The prediction-powered leaderboard: companion models ranked at the judge's scale with the
humans' validity (`h2h leaderboard`).

Per model × dimension, per task family and over all tasks, three estimates side by side: the
humans alone, the judge alone (uncalibrated), and the two combined (PPI++ by default,
:mod:`analysis.ppi`); the SAP − baseline difference per model, paired by scenario; each
model's rank interval (bootstrap) and pairwise "A above B" tests with Holm-adjusted p-values.

Inputs are per-item values (long frames), so the caller decides what an item's human value
is (the mean of its ratings, or the many-facet model's fair score) and which items a judge
configuration may be held against (:func:`judge_items`). Every estimate that cannot be made
is ``None`` with a note saying why.

References: Angelopoulos et al. (2023), Science 382:669; Angelopoulos, Duchi & Zrnic (2023),
PPI++, arXiv:2311.01453; Zrnic & Candès (2024), Active statistical inference, ICML; Holm
(1979), Scand. J. Statist. 6:65.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from .ppi import Estimator, MeanEstimate, active_mean, classical_mean, ppi_mean

__all__ = ["BoardOptions", "judge_items", "ppi_leaderboard", "active_strata", "MIN_STRATUM",
           "METHOD_SENTENCE", "holm", "set_aside_sentence"]

METHOD_SENTENCE = (
    "Model means combine the LLM judge's scores of every reply with the psychologists' "
    "scores of a random subset by prediction-powered inference with power tuning (PPI++; "
    "Angelopoulos et al., 2023, Science; Angelopoulos, Duchi & Zrnic, 2023), which corrects "
    "the judge's bias with the human-rated replies and gives {level:.0%} confidence "
    "intervals that are valid whatever that bias; ranks carry {B}-resample bootstrap "
    "intervals and pairwise differences Holm-adjusted p-values.")


_FULL_RESAMPLE = 200_000  # B x judge-only items up to which those are resampled one by one


@dataclass(frozen=True)
class BoardOptions:
    """``estimator`` picks the combined column; ``min_human`` is the fewest human-rated items
    a model needs for a combined value; ``B`` bootstrap resamples for the rank intervals
    (0: no rank intervals), ``seed`` their seed; ``level`` the confidence level."""

    estimator: Estimator = "ppi++"
    min_human: int = 10
    B: int = 1000
    seed: int = 0
    level: float = 0.95

    def __post_init__(self):
        if self.estimator not in ("ppi++", "ppi", "human", "judge"):
            raise ValueError(f"estimator: '{self.estimator}' is not ppi++, ppi, human or judge")
        if self.min_human < 2:
            raise ValueError(f"min_human must be at least 2; got {self.min_human}")
        if self.B < 0:
            raise ValueError(f"B must be 0 (no rank intervals) or more; got {self.B}")
        if not 0 < self.level < 1:
            raise ValueError(f"level must be between 0 and 1; got {self.level}")


def judge_items(items: pd.DataFrame, judge: pd.DataFrame,
                exclude: Collection[str] = ()) -> tuple[pd.DataFrame, int]:
    """The items a judge configuration is held against, and how many were set aside.

    The one place that decides it: every item of the study except ``exclude`` (for example a
    configuration's few-shot exemplars, which it has seen with their human scores). Returns
    the judge's rows on the kept items and the number of study items whose judge rows were
    set aside.
    """
    keep = ~judge["item_id"].isin(set(exclude))
    # counted among the items the judge scored: an exemplar it never judged leaves nothing out
    gone = judge.loc[~keep, "item_id"]
    set_aside = int(gone[gone.isin(set(items["item_id"]))].nunique())
    return judge[keep], set_aside


@dataclass
class _Cell:
    """One model × dimension × task scope; arrays over the scope's items, aligned."""

    model: str
    dimension: str
    task: str | None
    y: np.ndarray            # human value (NaN: not rated)
    yh: np.ndarray           # judge value (NaN: not scored, or never judged)
    agree: np.ndarray        # the judge's samples agreed
    prob: np.ndarray | None  # probability of being human-rated (active draws)
    picked_unrated: int = 0
    notes: list[str] = field(default_factory=list)
    combined: MeanEstimate | None = None
    human: MeanEstimate | None = None
    judge: MeanEstimate | None = None

    @property
    def rated(self) -> np.ndarray:
        return ~np.isnan(self.y)

    @property
    def scored(self) -> np.ndarray:
        return ~np.isnan(self.yh)


def _triple(e: MeanEstimate | None, ci: bool = True) -> dict[str, float | None]:
    if e is None:
        return {"estimate": None, "low": None, "high": None}
    ok = ci and math.isfinite(e.low)
    return {"estimate": _f(e.estimate), "low": _f(e.low) if ok else None,
            "high": _f(e.high) if ok else None}


def _f(v) -> float | None:
    return None if v is None or not math.isfinite(float(v)) else float(v)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979).

    >>> holm(np.array([0.01, 0.04, 0.03])).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


MIN_STRATUM = 30
"""Fewest human-rated items each of "samples agreed" and "samples differed" needs for its own
lambda and offset in an active estimate; with fewer the two share one (four fitted numbers on
a few heavily weighted items make the standard error optimistic: measured in
benchmarks/bench_active_labelling.py)."""


def active_strata(agree: np.ndarray, scored: np.ndarray, rated: np.ndarray) -> np.ndarray:
    """The strata of an active estimate, known before any draw: 0 the judge's samples
    agreed, 1 they differed, 2 no judge score; 0 and 1 merged when either has fewer than
    :data:`MIN_STRATUM` rated items.

    >>> active_strata(np.array([True, False, True]), np.array([True, True, False]),
    ...               np.ones(3, bool)).tolist()
    [0, 0, 2]
    """
    st = np.where(~scored, 2, np.where(agree, 0, 1))
    if min(int((rated & (st == 0)).sum()), int((rated & (st == 1)).sum())) < MIN_STRATUM:
        st = np.where(st == 1, 0, st)
    return st


def _active_arrays(cell: _Cell) -> tuple[np.ndarray, ...]:
    """Every item of the cell for :func:`active_mean`: judge value (0 where unscored), human
    value, rated?, probability of being rated, stratum (:func:`active_strata`)."""
    st = active_strata(cell.agree, cell.scored, cell.rated)
    return np.where(cell.scored, cell.yh, 0.0), cell.y, cell.rated, cell.prob, st


def _estimate(cell: _Cell, opt: BoardOptions) -> None:
    """Fill the cell's three estimates (and notes)."""
    rated, scored = cell.rated, cell.scored
    h, j = cell.y[rated], cell.yh[scored]
    both = rated & scored
    lvl = opt.level
    if j.size >= 2:
        cell.judge = classical_mean(j, level=lvl, method="judge (uncalibrated)")
    elif j.size == 1:
        cell.notes.append("judge-only: one judged item, no CI")
    if h.size >= 2:
        cell.human = classical_mean(h, level=lvl)
    if cell.prob is not None and h.size >= 2:
        yh, yy, lab, p, _ = _active_arrays(cell)
        cell.human = active_mean(yh, yy, lab, p, lam=0, level=lvl)
    if h.size < opt.min_human:
        cell.notes.append(f"fewer than {opt.min_human} human-rated items ({h.size}): no "
                          "combined value; the judge-only value is uncalibrated"
                          + ("; the human-only mean has no CI" if h.size >= 2 else ""))
        if cell.human is not None:
            cell.human = MeanEstimate(cell.human.estimate, math.nan, math.nan, math.nan,
                                      cell.human.n, 0, None, cell.human.method, lvl)
        return
    left_h = int((rated & ~scored).sum())
    left_j = int((~rated & ~scored).sum())
    if left_h:
        # "without a judge score": unscored, never judged, or set aside (judge_items)
        cell.notes.append(f"{left_h} human-rated item(s) without a judge score: left out of "
                          "the combined estimate's human side")
    if left_j:
        cell.notes.append(f"{left_j} item(s) without a human value that the judge did not "
                          "score: left out of the combined estimate's judge side")
    if opt.estimator == "human":
        cell.combined = cell.human
        return
    if opt.estimator == "judge":
        cell.combined = cell.judge
        return
    if both.sum() < opt.min_human:
        cell.notes.append(f"only {int(both.sum())} human-rated items have a judge score "
                          f"(fewer than {opt.min_human}): no combined value")
        return
    lam = None if opt.estimator == "ppi++" else 1.0
    if cell.prob is not None:
        if cell.picked_unrated:
            cell.notes.append(f"{cell.picked_unrated} item(s) picked by an active draw are "
                              "not rated yet: no combined value until they are")
            cell.human = None
            return
        yh, yy, lab, p, st = _active_arrays(cell)
        cell.combined = active_mean(yh, yy, lab, p, strata=st, lam=lam, level=lvl)
    else:
        unl = scored & ~rated
        if not unl.any():
            cell.notes.append("every judged item is human-rated: the judge adds nothing; the "
                              "combined estimate is the human-only one")
            cell.combined = classical_mean(cell.y[both], level=lvl)
            return
        cell.combined = ppi_mean(cell.y[both], cell.yh[both], cell.yh[unl], lam=lam,
                                 level=lvl)
    if cell.combined.constant_judge:
        cell.notes.append("the judge gave every item the same score: lambda = 0, the "
                          "combined estimate is the human-only one")


def _bootstrap(cell: _Cell, opt: BoardOptions, rng: np.random.Generator) -> np.ndarray:
    """B resampled values of the cell's combined estimate (items resampled within the model,
    lambda tuned again in each resample for PPI++)."""
    B = opt.B
    rated, scored = cell.rated, cell.scored
    est = opt.estimator
    if est == "human" or (cell.prob is None and est != "judge"
                          and not (scored & ~rated).any()):
        x = cell.y[rated]
        return x[rng.integers(0, x.size, (B, x.size))].mean(1)
    if est == "judge":
        x = cell.yh[scored]
        return x[rng.integers(0, x.size, (B, x.size))].mean(1)
    if cell.prob is not None:  # active draws: normal draws around the estimate, its SE
        c = cell.combined
        return c.estimate + c.se * rng.standard_normal(B)
    both = rated & scored
    y, yh = cell.y[both], cell.yh[both]
    yu = cell.yh[scored & ~rated]
    n, N = y.size, yu.size
    il = rng.integers(0, n, (B, n))
    Y, Yh = y[il], yh[il]
    if B * N <= _FULL_RESAMPLE:
        Yu = yu[rng.integers(0, N, (B, N))]
        mu, s1u, s2u = Yu.mean(1), Yu.sum(1), (Yu ** 2).sum(1)
    else:
        # many judge-only items: their resampled mean is normal to high accuracy (CLT), so
        # it is drawn as such instead of resampling B x N values; their spread is kept
        mu = yu.mean() + yu.std() / np.sqrt(N) * rng.standard_normal(B)
        s1u, s2u = N * mu, N * (yu.var() + mu ** 2)
    if est == "ppi":
        lam = np.ones(B)
    else:
        cov = np.mean((Y - Y.mean(1, keepdims=True)) * (Yh - Yh.mean(1, keepdims=True)), 1)
        tot = n + N
        s1, s2 = Yh.sum(1) + s1u, (Yh ** 2).sum(1) + s2u
        var = (s2 - s1 ** 2 / tot) / (tot - 1)  # ddof 1 over both sets, as tuned_lambda
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(var > 0, np.clip(cov / ((1 + n / N) * var), 0, 1), 0.0)
    return lam * mu + (Y - lam[:, None] * Yh).mean(1)


def _ranks(cells: list[_Cell], opt: BoardOptions, rng: np.random.Generator) -> dict | None:
    ok = [c for c in cells if c.combined is not None]
    if len(ok) < 2:
        return None
    est = np.array([c.combined.estimate for c in ok])
    point = (-est).argsort(kind="stable").argsort() + 1
    out = {"models": []}
    if opt.B > 0:
        boots = np.stack([_bootstrap(c, opt, rng) for c in ok], axis=1)  # B × models
        r = (-boots).argsort(1, kind="stable").argsort(1) + 1
        lo = np.quantile(r, (1 - opt.level) / 2, axis=0, method="lower")
        hi = np.quantile(r, (1 + opt.level) / 2, axis=0, method="higher")
    for k, c in enumerate(ok):
        out["models"].append({"model": c.model, "rank": int(point[k]),
                              "low": int(lo[k]) if opt.B > 0 else None,
                              "high": int(hi[k]) if opt.B > 0 else None})
    out["models"].sort(key=lambda m: m["rank"])
    left = [c.model for c in cells if c.combined is None]
    if left:
        out["left_out"] = left
    if len(ok) >= 2:
        ia, ib = np.array(list(combinations(range(len(ok)), 2))).T
        se_m = np.array([c.combined.se for c in ok])
        d = est[ia] - est[ib]
        se = np.hypot(se_m[ia], se_m[ib])
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(se > 0, 2 * norm.sf(np.abs(d) / se), np.where(d != 0, 0.0, 1.0))
        h = norm.ppf(0.5 + opt.level / 2) * se
        adj = holm(p)
        out["pairwise"] = []
        for k in range(d.size):
            a, b = ok[ia[k]].model, ok[ib[k]].model
            sig = adj[k] < 1 - opt.level
            verdict = (f"{a} above {b}" if sig and d[k] > 0 else f"{b} above {a}" if sig
                       else "not distinguishable")
            out["pairwise"].append({"a": a, "b": b, "difference": _f(d[k]),
                                    "low": _f(d[k] - h[k]), "high": _f(d[k] + h[k]),
                                    "p": _f(p[k]), "p_holm": _f(adj[k]), "verdict": verdict})
    return out


def _paired_diff(sub: pd.DataFrame, model: str, dim: str, opt: BoardOptions,
                 active: bool = False) -> dict | None:
    """SAP − baseline for one model and dimension, paired by scenario: PPI on the per-scenario
    differences (human-rated pairs labelled, judge-only pairs unlabelled)."""
    s = sub[sub["condition"] == "sap"].drop_duplicates("scenario").set_index("scenario")
    b = sub[sub["condition"] == "baseline"].drop_duplicates("scenario").set_index("scenario")
    if s.empty or b.empty:
        return None
    common = s.index.intersection(b.index)
    dh = (s.loc[common, "h"] - b.loc[common, "h"]).dropna()
    dj = (s.loc[common, "j"] - b.loc[common, "j"]).dropna()
    out: dict[str, Any] = {"model": model, "dimension": dim, "design": "paired by scenario",
                           "n_human": int(len(dh)), "n_judge": int(len(dj)), "notes": []}
    lvl = opt.level
    hum = classical_mean(dh.to_numpy(), level=lvl) if len(dh) >= opt.min_human else None
    jud = classical_mean(dj.to_numpy(), level=lvl) if len(dj) >= 2 else None
    comb = None
    lab = dh.index.intersection(dj.index)
    unl = dj.index.difference(dh.index)
    if len(lab) < opt.min_human:
        out["notes"].append(f"fewer than {opt.min_human} scenarios with human values in both "
                            f"conditions ({len(lab)}): no combined difference")
    elif opt.estimator == "human":
        comb = hum
    elif opt.estimator == "judge":
        comb = jud
    elif len(unl) == 0:
        comb = classical_mean(dh.loc[lab].to_numpy(), level=lvl)
        out["notes"].append("every judged pair is human-rated: the combined difference is "
                            "the human-only one")
    else:
        comb = ppi_mean(dh.loc[lab].to_numpy(), dj.loc[lab].to_numpy(), dj.loc[unl].to_numpy(),
                        lam=None if opt.estimator == "ppi++" else 1.0, level=lvl)
    if active and comb is not None:
        out["notes"].append("the human-rated pairs are taken as a uniform subset here: the "
                            "active draws' weights apply to the model means only")
    out.update(_triple(comb))
    out["lambda"] = _f(comb.lam) if comb is not None and comb.lam is not None else None
    out["human_only"] = _triple(hum)
    out["judge_only"] = _triple(jud)
    return out


def ppi_leaderboard(items: pd.DataFrame, human: pd.DataFrame, judge: pd.DataFrame,
                    scales: Mapping[str, Any], *, options: BoardOptions = BoardOptions(),
                    draws: pd.DataFrame | None = None,
                    context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The leaderboard as the JSON of `h2h leaderboard --json`.

    Parameters
    ----------
    items : DataFrame
        ``item_id, model, task, scenario, condition`` (condition may be missing or None).
    human : DataFrame
        ``item_id, dimension, value``: an item's human value (one row per rated item).
    judge : DataFrame
        ``item_id, dimension, value, agree``: the judge's value of the item (mean of its
        samples; NaN when the judge returned no score) and whether its samples agreed.
    scales : mapping
        Dimension -> :class:`analysis.scales.Scale` (binary and nominal dimensions are left
        out, with the reason).
    draws : DataFrame, optional
        ``item_id, probability, picked`` from active draws (:mod:`analysis.ppi` active
        inference): each item's overall probability of being human-rated and whether an
        active draw picked it.

    Returns
    -------
    dict
        ``{"rows": [...], "meta": {...}}``; each row has ``model, dimension, task`` (None =
        all tasks), ``estimate, low, high`` (the combined value), ``n_human, n_judge,
        method, lambda, human_only, judge_only``. ``meta`` holds the settings, the notes of
        every cell, the rank intervals and pairwise tests (``ranks``), and the SAP −
        baseline differences.
    """
    opt = options
    rng = np.random.default_rng(opt.seed)
    it = items.copy()
    if "condition" not in it.columns:
        it["condition"] = None
    hv = human.pivot_table(index="item_id", columns="dimension", values="value",
                           aggfunc="first") if not human.empty else pd.DataFrame()
    jv = judge.pivot_table(index="item_id", columns="dimension", values="value",
                           aggfunc="first", dropna=False) if not judge.empty else pd.DataFrame()
    ja = (judge.assign(agree=judge["agree"].astype(float))
          .pivot_table(index="item_id", columns="dimension", values="agree", aggfunc="first")
          if not judge.empty else pd.DataFrame())
    meta: dict[str, Any] = {"estimator": opt.estimator, "level": opt.level, "B": opt.B,
                            "seed": opt.seed, "min_human_items": opt.min_human,
                            **(dict(context) if context else {}),
                            "interval": "normal (CLT) interval; standard errors as in PPI++ "
                                        "(variances with ddof 0), lambda clipped to [0, 1]",
                            "judge_value": "the mean of the judge's samples of the item",
                            "notes": [], "dimensions_left_out": [], "ranks": [],
                            "sap_vs_baseline": []}
    rows: list[dict] = []
    layout = _Layout.of(it, draws)
    meta["design"] = (_DESIGN_ACTIVE if layout.prob is not None else
                      "uniform: the human-rated items taken as a random subset")
    dims = [d for d in scales if d in set(judge["dimension"]) | set(human["dimension"])]
    for dim in dims:
        why = _left_out(scales[dim])
        if why is not None:
            meta["dimensions_left_out"].append({"dimension": dim, "reason": why})
            continue
        h_d = hv[dim] if dim in hv.columns else pd.Series(dtype=float)
        j_d = jv[dim] if dim in jv.columns else pd.Series(dtype=float)
        a_d = ja[dim] if dim in ja.columns else pd.Series(dtype=float)
        # every study item's values, aligned once; a cell takes its rows by position
        Y = h_d.reindex(layout.ids).to_numpy(float)
        J = j_d.reindex(layout.ids).to_numpy(float)
        A = a_d.reindex(layout.ids).fillna(1.0).to_numpy(float) > 0.5
        for task in [None, *layout.tasks]:
            cells = layout.cells(dim, task, Y, J, A, opt)
            for cell in cells:
                rows.append(_row(cell, opt))
                meta["notes"] += [{"model": cell.model, "dimension": dim, "task": task,
                                   "note": n} for n in cell.notes]
            ranks = _ranks(cells, opt, rng)
            if ranks is not None:
                meta["ranks"].append({"dimension": dim, "task": task, **ranks})
        per = it.assign(h=h_d.reindex(it["item_id"]).to_numpy(),
                        j=j_d.reindex(it["item_id"]).to_numpy())
        for model, g in sorted(per.groupby("model"), key=lambda x: str(x[0])):
            d = _paired_diff(g, str(model), dim, opt, active=layout.prob is not None)
            if d is not None:
                meta["sap_vs_baseline"].append(d)
    meta["method_sentence"] = METHOD_SENTENCE.format(level=opt.level, B=opt.B)
    combined = [r for r in rows if r["estimate"] is not None]
    if opt.estimator in ("ppi++", "ppi") and combined and \
            all(r["method"] == "human" for r in combined):
        meta["method_sentence"] += (" Here every reply the judge scored is human-rated too, so "
                                    "each combined mean is the humans' mean.")
    aside = (meta.get("judge") or {}).get("items_set_aside")
    if aside:
        meta["method_sentence"] += set_aside_sentence(
            aside, meta["judge"].get("items_set_aside_why"))
    return {"rows": rows, "meta": meta}


def set_aside_sentence(n: int, why: str | None = None) -> str:
    """What the method sentence adds when the judge's scores of ``n`` items were set aside
    (:func:`judge_items`): they count on neither side of the judge's estimates.

    >>> set_aside_sentence(1, "an exemplar")
    " The judge's scores of 1 item are left out (an exemplar)."
    """
    return (f" The judge's scores of {n} item{'s' if n != 1 else ''} are left out"
            + (f" ({why})" if why else "") + ".")


_DESIGN_ACTIVE = ("active draws: each item weighted by 1 / its probability of being "
                  "human-rated (Zrnic & Candès 2024)")


def _left_out(sc: Any) -> str | None:
    """Why a dimension is not ranked (None: it is)."""
    if getattr(sc, "binary", False):
        return "a binary dimension: a share of flags, not a score to rank models by"
    if sc.level == "nominal":
        return "named categories have no mean"
    return None


@dataclass(frozen=True)
class _Layout:
    """The study's items, aligned once: ids, each item's model and task, the rows of each
    model, and (with active draws) each item's probability of being rated and whether a draw
    picked it."""

    ids: pd.Index
    task_of: np.ndarray
    models: list[str]
    tasks: list[str]
    rows_of: dict[str, np.ndarray]
    prob: np.ndarray | None
    picked: np.ndarray | None

    @classmethod
    def of(cls, it: pd.DataFrame, draws: pd.DataFrame | None) -> _Layout:
        ids = pd.Index(it["item_id"])
        model_of = it["model"].astype(str).to_numpy()
        task_of = it["task"].astype(object).to_numpy()
        models = sorted(set(model_of))
        prob = picked = None
        if draws is not None and not draws.empty:
            d = draws.drop_duplicates("item_id").set_index("item_id")
            prob = d["probability"].reindex(ids).to_numpy(float)
            picked = d["picked"].reindex(ids).fillna(False).astype(bool).to_numpy()
        return cls(ids, task_of, models,
                   sorted({t for t in task_of if t is not None and t == t}),
                   {m: np.flatnonzero(model_of == m) for m in models}, prob, picked)

    def cells(self, dim: str, task: str | None, Y: np.ndarray, J: np.ndarray, A: np.ndarray,
              opt: BoardOptions) -> list[_Cell]:
        """The estimated cells of one dimension and task scope (None: all tasks)."""
        out = []
        # all tasks: those where the dimension applies, i.e. where anyone rated or the judge
        # scored it (memory fidelity's items without a value were counted "unscored" on the
        # dialogue and itinerary items it is not asked of)
        seen = ~np.isnan(Y) | ~np.isnan(J)
        live = np.isin(self.task_of, list({t for t in self.task_of[seen]}))
        for model in self.models:
            pos = self.rows_of[model]
            if task is not None:
                pos = pos[self.task_of[pos] == task]
            else:
                pos = pos[live[pos]]
            if pos.size == 0 or (np.isnan(Y[pos]).all() and np.isnan(J[pos]).all()):
                continue
            cell = _Cell(model, dim, task, Y[pos], J[pos], A[pos], None)
            if self.prob is not None and (~np.isnan(self.prob[pos])).any():
                self._weights(cell, pos)
            _estimate(cell, opt)
            out.append(cell)
        return out

    def _weights(self, cell: _Cell, pos: np.ndarray) -> None:
        cell.prob = self.prob[pos]
        cell.picked_unrated = int((self.picked[pos] & np.isnan(cell.y)).sum())
        if np.isnan(cell.prob).any() or (cell.prob <= 0).any():
            cell.notes.append("some items have no probability of having been rated (added "
                              "after the active draw, or in a model with nothing rated "
                              "before it): the rated items are taken as uniform (PPI++)")
            cell.prob = None


def _row(c: _Cell, opt: BoardOptions) -> dict[str, Any]:
    comb = c.combined
    lam = comb.lam if comb is not None else None
    if comb is not None and opt.estimator == "judge":
        method = "judge (uncalibrated)"
    elif comb is not None and comb.method in ("human", "active human"):
        method = comb.method
    elif comb is not None:
        method = comb.method if opt.estimator != "ppi" else comb.method.replace("++", "")
    else:
        method = None
    if comb is not None and comb.constant_judge:
        method = "human (constant judge)"
    return {"model": c.model, "dimension": c.dimension, "task": c.task,
            **_triple(comb),
            "n_human": int(c.rated.sum()), "n_judge": int(c.scored.sum()),
            "method": method, "lambda": _f(lam) if lam is not None else None,
            "human_only": _triple(c.human), "judge_only": _triple(c.judge)}
