"""Has a judge changed under the same name? Old and new scores of one configuration on the
same items (`h2h calibrate drift`).

Providers update models behind a name. A seeded sample of items the configuration judged is
judged again; on the (item, dimension) pairs with both scores:

* **agreement**: Cohen's kappa with quadratic weights on the full scale (Cohen 1968), per
  dimension and, when every dimension has the same scale, pooled over all pairs;
* **mean shift**: the mean of new − old over the pairs, with a percentile CI from an item
  bootstrap (an item is drawn with all its dimensions; B and the seed recorded);
* **verdict**: *stable* when the shift's CI lies within ±``margin`` points and kappa is at
  least ``kappa_min``; *changed* when kappa is below ``kappa_min`` or the whole CI lies beyond
  ±``margin`` (an equivalence test by the CI, as in Wellek 2010); otherwise *not settled*,
  with a larger sample to try. A configuration that samples (temperature above 0) agrees with
  itself less than a deterministic one even when nothing changed: the verdict says so.

The items that moved most (largest total |new − old| over their dimensions) are listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .chance import cohen_kappa
from .resample import item_weights, percentile_ci
from .serialize import Interval, Record, finite

__all__ = ["DriftOptions", "Moved", "DriftDimension", "Drift", "drift"]


def _t(template: str, **params) -> str:
    """English text for the command line (`h2h calibrate drift` is not shown in the app)."""
    return template.format(**params)


@dataclass(frozen=True)
class DriftOptions:
    """``margin``: the largest mean shift in points still called stable; ``kappa_min``: the
    least weighted kappa between old and new still called stable (0.8: "almost perfect",
    Landis & Koch 1977); ``min_pairs``: fewer pairs give no verdict."""

    B: int = 1000
    seed: int = 0
    ci: float = 0.95
    margin: float = 0.25
    kappa_min: float = 0.8
    min_pairs: int = 10
    top: int = 5


@dataclass(frozen=True)
class Moved(Record):
    """An item whose scores moved: per dimension (old, new), and the total |new − old|."""

    item_id: str
    moved: float
    scores: Mapping[str, tuple[float, float]]


@dataclass(frozen=True)
class DriftDimension(Record):
    n_pairs: int
    kappa: float | None
    mean_shift: float | None
    changed: int


@dataclass(frozen=True)
class Drift(Record):
    """Old against new on ``n_items`` items (``n_pairs`` item-dimension pairs)."""

    verdict: str
    text: str
    n_items: int
    n_pairs: int
    kappa: float | None
    mean_shift: Interval
    changed: int
    dimensions: Mapping[str, DriftDimension]
    moved: tuple[Moved, ...]
    B: int
    seed: int
    margin: float
    kappa_min: float
    notes: tuple[str, ...] = ()


def _kappa(old: np.ndarray, new: np.ndarray, values: Sequence[float]) -> float | None:
    return finite(cohen_kappa(old, new, values, "quadratic")) if old.size else None


def drift(pairs: pd.DataFrame, scales: Mapping[str, Sequence[float]],
          options: DriftOptions = DriftOptions(), *, temperature: float | None = 0.0
          ) -> Drift:
    """Old against new scores: ``pairs`` has ``item_id, dimension, old, new`` (NaN: no score;
    such rows are left out), ``scales`` each dimension's full scale of values.

    Examples
    --------
    A judge that now scores everything one point higher has changed:

    >>> df = pd.DataFrame({"item_id": [f"i{k}" for k in range(12)], "dimension": "e",
    ...                    "old": [1, 2, 3, 4] * 3, "new": [2, 3, 4, 5] * 3})
    >>> r = drift(df, {"e": [1, 2, 3, 4, 5]}, DriftOptions(B=200))
    >>> r.verdict, r.mean_shift.value
    ('changed', 1.0)
    """
    notes: list[str] = []
    df = pairs.dropna(subset=["old", "new"])
    df = df[df["dimension"].isin(list(scales))]
    dims: dict[str, DriftDimension] = {}
    for dim, g in df.groupby("dimension", sort=True):
        old, new = g["old"].to_numpy(float), g["new"].to_numpy(float)
        dims[str(dim)] = DriftDimension(len(g), _kappa(old, new, scales[dim]),
                                        float(np.mean(new - old)), int(np.sum(new != old)))
    same = len({tuple(scales[d]) for d in dims}) <= 1
    kappa = _kappa(df["old"].to_numpy(float), df["new"].to_numpy(float),
                   scales[next(iter(dims))]) if dims and same else None
    if dims and not same:
        notes.append(_t("the dimensions have different scales: kappa per dimension only; "
                         "the verdict uses the lowest"))
        kappa = min((d.kappa for d in dims.values() if d.kappa is not None), default=None)
    shift = _shift(df, options)
    verdict, text = _verdict(shift, kappa, len(df), options, temperature)
    return Drift(verdict, text, int(df["item_id"].nunique()), len(df), kappa, shift,
                 int(np.sum(df["old"] != df["new"])), dims, _moved(df, options.top),
                 options.B, options.seed, options.margin, options.kappa_min, tuple(notes))


def _shift(df: pd.DataFrame, options: DriftOptions) -> Interval:
    if df.empty:
        return Interval(None)
    d = (df["new"] - df["old"]).to_numpy(float)
    items, idx = np.unique(df["item_id"].to_numpy(str), return_inverse=True)
    sums = np.column_stack([np.bincount(idx, weights=d, minlength=items.size),
                            np.bincount(idx, minlength=items.size).astype(float)])
    value = float(d.mean())
    if options.B < 1 or items.size < 2:
        return Interval(value)
    w = item_weights(items.size, options.B, options.seed)
    boot = (w @ sums[:, 0]) / (w @ sums[:, 1])
    return Interval(value, *percentile_ci(boot, options.ci))


def _verdict(shift: Interval, kappa: float | None, n: int, o: DriftOptions,
             temperature: float | None) -> tuple[str, str]:
    sampling = temperature is None or temperature > 0
    why_noise = _t(" It samples (temperature {t}), so some change between runs is expected "
                    "even when the model is the same; compare with a check run right after "
                    "the first.", t="the provider's default" if temperature is None
                    else f"{temperature:g}") if sampling else ""
    if n < o.min_pairs or shift.value is None:
        return "not_settled", _t("no verdict: only {n} scores could be compared (at least "
                                  "{k} needed); judge a larger --sample", n=n, k=o.min_pairs)
    lo, hi = shift.low, shift.high
    if (kappa is not None and kappa < o.kappa_min) or \
            (lo is not None and (lo > o.margin or hi < -o.margin)):
        return "changed", _t("changed: old and new scores agree at weighted κ = {k} "
                              "(stable needs ≥ {kmin}); mean shift {s:+.2f} points [{lo}, "
                              "{hi}]. Do not mix its runs in one analysis.{noise}",
                              k=_f(kappa), kmin=o.kappa_min, s=shift.value, lo=_f(lo),
                              hi=_f(hi), noise=why_noise)
    if kappa is not None and lo is not None and -o.margin <= lo and hi <= o.margin:
        return "stable", _t("stable: old and new scores agree at weighted κ = {k}; mean "
                             "shift {s:+.2f} points [{lo}, {hi}], within ±{m:g}.",
                             k=_f(kappa), s=shift.value, lo=_f(lo), hi=_f(hi), m=o.margin)
    return "not_settled", _t("not settled: mean shift {s:+.2f} points [{lo}, {hi}] reaches "
                              "past ±{m:g} but is not beyond it, κ = {k}; judge a larger "
                              "--sample to tell.{noise}", s=shift.value, lo=_f(lo), hi=_f(hi),
                              m=o.margin, k=_f(kappa), noise=why_noise)


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _moved(df: pd.DataFrame, top: int) -> tuple[Moved, ...]:
    if df.empty:
        return ()
    d = df.assign(gap=(df["new"] - df["old"]).abs())
    totals = d.groupby("item_id")["gap"].sum()
    totals = totals[totals > 0].sort_values(ascending=False, kind="stable")
    out = []
    for iid, total in totals.head(top).items():
        g = d[d["item_id"] == iid].sort_values("dimension")
        out.append(Moved(str(iid), float(total), {
            str(r.dimension): (float(r.old), float(r.new)) for r in g.itertuples()}))
    return tuple(out)
