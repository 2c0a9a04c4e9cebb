"""A many-facet Rasch model for ordinal ratings: rater severity, item fair scores, misfit.

For item ``n`` (a companion reply), rater ``j`` and the ordered categories ``0..m`` of one
dimension's scale (the rating-scale form of Linacre's many-facet model; Eckes 2015, ch. 4):

    log P(x = k) / P(x = k-1) = θ_n − λ_j − τ_k ,   k = 1..m

θ_n is the item's quality, λ_j the rater's severity and τ_k the k-th threshold, all in logits.
Identification: Σ_j λ_j = 0 (an average rater has severity 0) and Σ_k τ_k = 0.

Estimation has two steps, as in eRm (Mair & Hatzinger 2007):

1. **Severities and thresholds by conditional maximum likelihood (CML)**: each item's raw
   score is sufficient for its θ, so conditioning on it removes θ from the likelihood and the
   severities are consistent however few ratings an item has (joint ML, FACETS' method,
   inflates them: by about 30 % at 6 ratings per item in our simulations). The conditional
   likelihood uses the elementary symmetric functions of each item's set of raters
   (formula in :func:`_cml`); BFGS on its exact gradient. SEs from the inverse observed
   information (central differences of the gradient), with the sum-to-zero constraints.
2. **Item measures θ by ML** with severities and thresholds fixed: the θ whose expected raw
   score from the item's raters equals the observed one; SE 1/√(Σ W) with W = Var(x) under
   the model (Linacre's model SE).

* **Fair score** of an item (Linacre's "fair average"): the expected rating at its θ from a
  rater of average severity (λ = 0), E = Σ_k v_k P_k, in the scale's own units; its SE by the
  delta method, |Cov(v, k)| · SE(θ), since ∂E/∂θ = Cov(v, k) in this model.
* **Infit / outfit** mean squares: infit = Σ (x − E)² / Σ (W·d) (information-weighted),
  outfit = Σ z² / Σ d with z = (x − E)/√W, where d = (L − 1)/L for a rating of an item with
  L ratings: its θ was fitted to those L ratings, which uses up one degree of freedom (without
  this, every rater's mean square sits near 0.67 at 3 ratings per item). Expected 1;
  outside 0.5–1.5 is flagged (Linacre's "productive for measurement" range) when the
  element has at least 10 (raters) or 5 (items) ratings; the n is always shown.
* **Extreme items** (every rating in the lowest or highest used category) carry no
  information on raters; their θ is solved for a raw score 0.3 points inside the extreme
  (FACETS' default adjustment) and they are marked ``extreme``; like FACETS, fit statistics
  leave them out. A rater whose every rating
  is at one end is left out as not estimable.
* Only used categories enter (an unused category has no estimable threshold); the notes say
  which. Raters and items must form one connected design; otherwise the largest connected
  part is fitted and the rest reported as not estimable.
* θ of an item with few ratings (e.g. 3) is imprecise (see its SE); fair scores shrink
  nothing — they only remove the raters' severity. ``tests/analysis/test_rater_model.py``
  checks recovery on simulated data with known severities and agreement with R's eRm.

Why not a library: PyPI's MFRM implementations (raschpy, mirt) are young single-author
packages; raschpy pulls matplotlib, seaborn, scikit-learn and openpyxl in for one model, and
mirt's facet design puts one rater per person × item cell, which does not fit several raters
scoring the same reply on one dimension. R's TAM and FACETS are not installable from Debian;
eRm is (r-cran-erm), and its rating scale model with raters in the role of eRm's "items"
is this very model, so it serves as the reference in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import logsumexp

from messages import Msg

__all__ = ["RaterModel", "fit_rater_model", "fit_dimensions", "fair_scores", "FIT_RANGE",
           "EXTREME_ADJUSTMENT"]

FIT_RANGE = (0.5, 1.5)
EXTREME_ADJUSTMENT = 0.3
_MIN_FIT_N = 5  # fewer ratings than this: infit/outfit are shown but not flagged
# Where the conditional likelihood has no maximum (the ratings do not pin the severities down:
# it keeps rising as some raters move apart), BFGS runs the severities off, to where the
# gradient falls below its tolerance (about 18 logits: e^-18 ~ 1.5e-8) or much further, to
# overflow. No measurement puts two raters this far apart (a factor of e^15, about 3
# million, in the odds of every category step), so a severity beyond it is that, not a value.
_MAX_SEVERITY = 15.0


@dataclass(frozen=True)
class RaterModel:
    """One dimension's fit. ``estimable`` False means ``reason`` says why and nothing else is
    filled. ``raters``: rater, severity, se, n, infit, outfit, flag. ``items``: item,
    measure, se, fair_score, fair_se, observed_mean, n, infit, outfit, flag, extreme."""

    estimable: bool
    reason: str = ""
    categories: tuple[float, ...] = ()
    thresholds: tuple[float, ...] = ()
    raters: pd.DataFrame = field(default_factory=pd.DataFrame)
    items: pd.DataFrame = field(default_factory=pd.DataFrame)
    n_ratings: int = 0
    loglik: float | None = None
    converged: bool = False
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        if not self.estimable:
            return {"estimable": False, "reason": self.reason}
        return {"estimable": True, "categories": list(self.categories),
                "thresholds": list(self.thresholds), "n_ratings": self.n_ratings,
                "loglik": self.loglik, "converged": self.converged, "notes": list(self.notes),
                "fit_range": list(FIT_RANGE),
                "raters": _records(self.raters), "items": _records(self.items)}


def _records(df: pd.DataFrame) -> list[dict]:
    return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v)
             for k, v in row.items()} for row in df.to_dict("records")]


def _probs(eta: np.ndarray, cum_tau: np.ndarray) -> np.ndarray:
    """Category probabilities, observations × (m+1), for linear predictors θ − λ."""
    k = np.arange(cum_tau.size)
    logits = eta[:, None] * k[None, :] - cum_tau[None, :]
    return np.exp(logits - logsumexp(logits, axis=1, keepdims=True))


def _expand(free: np.ndarray, n: int) -> np.ndarray:
    """n sum-to-zero values from their first n−1."""
    return np.append(free, -free.sum()) if n > 1 else np.zeros(1)


def _conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise polynomial products of two batches of coefficient rows."""
    out = np.zeros((a.shape[0], a.shape[1] + b.shape[1] - 1))
    for j in range(b.shape[1]):
        out[:, j:j + a.shape[1]] += a * b[:, j:j + 1]
    return out


def _cml(x: np.ndarray, ii: np.ndarray, jj: np.ndarray, n_raters: int, m: int
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, bool] | None:
    """Conditional ML of severities and thresholds (items' θ conditioned away).

    For item n with raters R_n and raw score r_n = Σ x_nj, with ψ_jk = exp(−k λ_j − c_k) and
    c_k = τ_1 + … + τ_k: P(x_n | r_n) = Π_j ψ_{j x_nj} / γ_{r_n}, where γ_r is the
    coefficient of z^r in Π_{j ∈ R_n} Σ_k ψ_jk z^k (Andersen 1977; Andrich 1978). Items are
    grouped by their set of raters (each γ computed once per set) and sets of equal size are
    computed together; ∂ log γ_r / ∂λ_j = −E(x_j | r) with P(x_j = k | r) =
    ψ_jk γ^(−j)_{r−k} / γ_r, γ^(−j) the product without rater j. Returns severities,
    thresholds, the covariance of the free parameters (inverse observed information) and the
    conditional log-likelihood; None if the likelihood has no maximum in the severities
    (``_MAX_SEVERITY``).
    """
    n_items = int(ii.max()) + 1
    order = np.lexsort((jj, ii))
    ii_s, jj_s = ii[order], jj[order]
    size = np.bincount(ii, minlength=n_items)
    raw = np.bincount(ii, x, n_items).astype(int)
    starts = np.concatenate([[0], np.cumsum(size)[:-1]])
    informative = (raw > 0) & (raw < m * size)
    # batches: for each set size R, the rater sets (P × R) and item counts per raw score
    batches = []
    for r_size in np.unique(size[informative]):
        items = np.nonzero(informative & (size == r_size))[0]
        sets = jj_s[starts[items][:, None] + np.arange(r_size)[None, :]]
        uniq, inv = np.unique(sets, axis=0, return_inverse=True)
        counts = np.zeros((len(uniq), r_size * m + 1))
        np.add.at(counts, (inv.ravel(), raw[items]), 1.0)
        batches.append((uniq, counts))
    keep = informative[ii]
    sum_x = np.bincount(jj[keep], x[keep], n_raters)
    n_cat = np.bincount(x[keep], minlength=m + 1).astype(float)
    ks = np.arange(m + 1)
    tri = np.tril(np.ones((m, m)))  # c_k = Σ_{h ≤ k} τ_h  →  ∂c/∂τ
    del ii_s

    def unpack(p):
        la = _expand(p[:n_raters - 1], n_raters)
        ta = _expand(p[n_raters - 1:], m) if m > 1 else np.zeros(1)
        return la, ta

    def value_grad(p):
        la, ta = unpack(p)
        cum = np.concatenate([[0.0], np.cumsum(ta)])
        ll = -(sum_x @ la) - n_cat @ cum
        g_la = -sum_x.copy()
        g_c = -n_cat[1:].copy()
        for sets, counts in batches:
            n_set, r_size = sets.shape
            psi = np.exp(-la[sets][:, :, None] * ks[None, None, :] - cum[None, None, :])
            pre = [np.ones((n_set, 1))]
            for t in range(r_size):
                pre.append(_conv(pre[-1], psi[:, t, :]))
            gamma = pre[-1]
            with np.errstate(divide="ignore"):
                ll -= np.sum(counts * np.where(counts > 0, np.log(gamma), 0.0))
            suf = np.ones((n_set, 1))
            w = counts / gamma
            for t in range(r_size - 1, -1, -1):
                rest = _conv(pre[t], suf)  # the product without rater t
                width = rest.shape[1]
                for k in range(1, m + 1):
                    e_k = psi[:, t, k] * np.sum(w[:, k:k + width] * rest, axis=1)
                    g_la += np.bincount(sets[:, t], k * e_k, n_raters)
                    g_c[k - 1] += e_k.sum()
                suf = _conv(suf, psi[:, t, :])
        g_ta = tri.T @ g_c
        grad = [g_la[:-1] - g_la[-1]]
        if m > 1:
            grad.append(g_ta[:-1] - g_ta[-1])
        return -ll, -np.concatenate(grad)

    def info(p):  # observed information: forward differences of the exact gradient
        h = 1e-5
        g0 = value_grad(p)[1]
        hess = np.empty((p.size, p.size))
        for a in range(p.size):
            e = np.zeros(p.size)
            e[a] = h
            hess[a] = (value_grad(p + e)[1] - g0) / h
        return (hess + hess.T) / 2

    p0 = np.zeros(n_raters - 1 + (m - 1 if m > 1 else 0))
    # the log-likelihood is concave and nearly quadratic: starting BFGS from the true
    # curvature at 0 takes a few iterations instead of hundreds
    h0 = info(p0)
    opts: dict = {"maxiter": 2000, "gtol": 1e-8}
    if np.linalg.eigvalsh(h0).min() > 0:
        inv0 = np.linalg.inv(h0)
        opts["hess_inv0"] = (inv0 + inv0.T) / 2
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        res = optimize.minimize(value_grad, p0, jac=True, method="BFGS", options=opts)
    la, ta = unpack(res.x)
    if not np.all(np.isfinite(res.x)) or np.max(np.abs(la)) > _MAX_SEVERITY:
        return None
    cov_free = np.linalg.pinv(info(res.x))
    # BFGS may stop on lost precision at the optimum; what matters is a vanishing gradient
    # (relative to the number of ratings the likelihood sums over)
    n_obs = max(1.0, float(keep.sum()))
    converged = bool(np.max(np.abs(value_grad(res.x)[1]), initial=0.0) < 1e-7 * n_obs + 1e-6)
    return la, ta, cov_free, float(-res.fun), converged


def _se_sum_zero(cov_free: np.ndarray, n: int) -> np.ndarray:
    """SEs of n sum-to-zero parameters from the covariance of their first n − 1."""
    a = np.vstack([np.eye(n - 1), -np.ones((1, n - 1))])
    return np.sqrt(np.clip(np.diag(a @ cov_free @ a.T), 0, None))


def _theta_ml(target: np.ndarray, idx: np.ndarray, la: np.ndarray, cum: np.ndarray
              ) -> np.ndarray:
    """θ per item whose expected raw score from its raters equals ``target`` (the ML
    estimate), for all items at once: Newton steps θ += (target − E)/Var, each at most one
    logit; E is increasing in θ, so this converges from 0."""
    n = target.size
    k = np.arange(cum.size)
    th = np.zeros(n)
    for _ in range(200):
        pr = _probs(th[idx] - la, cum)
        e = pr @ k
        var = pr @ k ** 2 - e ** 2
        gap = target - np.bincount(idx, e, n)
        step = np.clip(gap / np.maximum(np.bincount(idx, var, n), 1e-12), -1.0, 1.0)
        th += step
        if np.max(np.abs(gap)) < 1e-10:
            break
    return th


def _fit_stats(resid: np.ndarray, w: np.ndarray, idx: np.ndarray, n: int, df: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Infit and outfit per element; ``df`` is each rating's share of residual degrees of
    freedom, (L − 1)/L for an item with L ratings, since its θ was fitted to those L."""
    cnt = np.bincount(idx, minlength=n).astype(float)
    r2 = np.where(df > 0, resid ** 2, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        infit = np.bincount(idx, r2, n) / np.bincount(idx, w * df, n)
        outfit = np.bincount(idx, r2 / w, n) / np.bincount(idx, df, n)
    return infit, outfit, cnt


def _flag(infit: float, outfit: float, n: float, min_n: int) -> str:
    if n < min_n or not np.isfinite(infit):
        return ""
    lo, hi = FIT_RANGE
    worst = max(infit, outfit)
    best = min(infit, outfit)
    if worst > hi:
        return Msg("misfit (erratic)")
    if best < lo:
        return Msg("overfit (too predictable)")
    return ""


def fit_rater_model(long: pd.DataFrame, values: Sequence[float] | None = None, *,
                    item: str = "item", rater: str = "rater", score: str = "score"
                    ) -> RaterModel:
    """Fit the many-facet Rasch model to one dimension's long ratings.

    ``values`` is the full declared scale (used to name unused categories); missing scores
    ("cannot rate") are left out.

    Examples
    --------
    Two raters, the second one category harsher on every reply (the design is symmetric, so
    their severities are ± the same value):

    >>> df = pd.DataFrame({"item": list("abcdefabcdef"), "rater": ["r1"] * 6 + ["r2"] * 6,
    ...                    "score": [2, 3, 4, 3, 4, 5, 1, 2, 3, 2, 3, 4]})
    >>> m = fit_rater_model(df, [1, 2, 3, 4, 5])
    >>> sev = m.raters.set_index("rater")["severity"]
    >>> bool(sev["r2"] > 0 > sev["r1"]), round(float(sev.sum()), 6)
    (True, 0.0)
    """
    df = long[[item, rater, score]].copy()
    df[score] = pd.to_numeric(df[score], errors="coerce")
    df = df.dropna(subset=[score])
    if df.duplicated([item, rater]).any():
        raise ValueError("an item is rated twice by the same rater; pass one rating per "
                         "(item, rater)")
    used = np.sort(df[score].unique())
    notes: list[str] = []
    if values is not None:
        unused = [v for v in values if v not in set(used)]
        if unused:
            notes.append(Msg("categories never used: {values}; thresholds are estimated on the "
                             "used ones", values=", ".join(f"{v:g}" for v in unused)))
    if used.size < 2:
        return RaterModel(False, Msg("not estimable: every rating is in one category, so "
                                     "there is no variation to separate raters from items"))
    m = used.size - 1
    df["x"] = np.searchsorted(used, df[score].to_numpy())
    # leave out extreme items (then possibly extreme raters) until none are left
    core = df
    for _ in range(100):
        g = core.groupby(item)["x"]
        ext_items = set(g.min()[g.min() == m].index) | set(g.max()[g.max() == 0].index)
        g = core.groupby(rater)["x"]
        ext_raters = set(g.min()[g.min() == m].index) | set(g.max()[g.max() == 0].index)
        if not ext_items and not ext_raters:
            break
        core = core[~core[item].isin(ext_items) & ~core[rater].isin(ext_raters)]
    if core[rater].nunique() < 2 or core[item].nunique() < 2:
        return RaterModel(False, Msg("not estimable: fewer than two raters or two non-extreme "
                                     "items rated by them"))
    # largest connected part of the item–rater design
    it_codes, it_names = pd.factorize(core[item])
    ra_codes, ra_names = pd.factorize(core[rater])
    ni, nr = len(it_names), len(ra_names)
    adj = sparse.coo_matrix((np.ones(len(core)), (it_codes, ni + ra_codes)),
                            shape=(ni + nr, ni + nr))
    n_comp, label = connected_components(adj, directed=False)
    if n_comp > 1:
        big = np.bincount(label).argmax()
        keep_items = set(np.asarray(it_names)[label[:ni] != big])
        keep_raters = set(np.asarray(ra_names)[label[ni:] != big])
        notes.append(Msg("the design is not connected; fitted on its largest part, leaving out "
                         "{raters} rater(s) and {items} item(s)", raters=len(keep_raters),
                         items=len(keep_items)))
        core = core[~core[item].isin(keep_items) & ~core[rater].isin(keep_raters)]
        it_codes, it_names = pd.factorize(core[item])
        ra_codes, ra_names = pd.factorize(core[rater])
        ni, nr = len(it_names), len(ra_names)
    if core[rater].nunique() < 2 or core[item].nunique() < 2:
        return RaterModel(False, Msg("not estimable: the connected part has fewer than two "
                                     "raters or items"))
    if np.unique(core["x"]).size < used.size:
        return RaterModel(False, Msg("not estimable: once extreme items are set aside, some "
                                     "used categories occur only in them"))
    x = core["x"].to_numpy()
    fit = _cml(x, it_codes, ra_codes, nr, m)
    if fit is None:
        return RaterModel(False, Msg("not estimable: the ratings do not pin the raters' "
                                     "severities down (the likelihood keeps rising as some "
                                     "raters move apart); more items rated by several of the "
                                     "same raters are needed"))
    la, ta, cov_free, ll, ok = fit
    se_la = _se_sum_zero(cov_free[:nr - 1, :nr - 1], nr)
    cum = np.concatenate([[0.0], np.cumsum(ta)])
    k = np.arange(m + 1)
    lam = dict(zip(ra_names, la, strict=True))
    # θ per item by ML with raters and thresholds fixed; an extreme raw score is moved 0.3
    # inside the extreme first (FACETS' default), since its ML estimate is infinite
    rated = df[df[rater].isin(lam.keys())]
    r_codes, r_items = pd.factorize(rated[item])
    n_per = np.bincount(r_codes).astype(float)
    raw_i = np.bincount(r_codes, rated["x"].to_numpy(float))
    top = m * n_per
    is_ext = (raw_i == 0) | (raw_i == top)
    target = np.where(raw_i == top, raw_i - EXTREME_ADJUSTMENT,
                      np.where(raw_i == 0, raw_i + EXTREME_ADJUSTMENT, raw_i))
    th = _theta_ml(target, r_codes, rated[rater].map(lam).to_numpy(float), cum)
    theta = dict(zip(r_items, th, strict=True))
    extreme = set(np.asarray(r_items)[is_ext])
    # statistics on every rating whose item and rater are measured
    obs = df[df[item].isin(theta.keys()) & df[rater].isin(lam.keys())]
    t = obs[item].map(theta).to_numpy(float)
    lj = obs[rater].map(lam).to_numpy(float)
    pr = _probs(t - lj, cum)
    e = pr @ k
    w = pr @ k ** 2 - e ** 2
    resid = obs["x"].to_numpy() - e
    ic, inames = pd.factorize(obs[item])
    rc, rnames = pd.factorize(obs[rater])
    per_item = np.bincount(ic).astype(float)[ic]
    # a reply rated once carries no residual information (its θ fits that rating exactly)
    dfs = (per_item - 1) / per_item
    # extreme items carry no information on fit either (FACETS leaves them out of it too)
    dfs = np.where(obs[item].isin(extreme).to_numpy(), 0.0, dfs)
    i_in, i_out, i_n = _fit_stats(resid, w, ic, len(inames), dfs)
    r_in, r_out, _ = _fit_stats(resid, w, rc, len(rnames), dfs)
    r_n = np.bincount(rc, minlength=len(rnames)).astype(float)
    i_w = np.bincount(ic, w, len(inames))
    se_of = dict(zip(ra_names, se_la, strict=True))
    raters = pd.DataFrame({"rater": list(rnames), "severity": [lam[r] for r in rnames],
                           "se": [se_of[r] for r in rnames], "n": r_n.astype(int),
                           "infit": r_in, "outfit": r_out})
    # an object column, so each flag stays a message (pandas 3 would store plain text)
    raters["flag"] = pd.Series([_flag(a, b, n, 10) for a, b, n in zip(r_in, r_out, r_n,
                                                                      strict=True)],
                               index=raters.index, dtype=object)
    th_i = np.array([theta[i] for i in inames])
    se_i = 1 / np.sqrt(i_w)
    p0 = _probs(th_i, cum)  # an average rater: λ = 0
    fair = p0 @ used
    cov_vk = p0 @ (used * k) - fair * (p0 @ k)
    items = pd.DataFrame({
        "item": list(inames), "measure": th_i, "se": se_i, "fair_score": fair,
        "fair_se": np.abs(cov_vk) * se_i,
        "observed_mean": obs.groupby(ic)[score].mean().to_numpy(float),
        "n": i_n.astype(int), "infit": i_in, "outfit": i_out})
    items["flag"] = pd.Series([_flag(a, b, n, _MIN_FIT_N)
                               for a, b, n in zip(i_in, i_out, i_n, strict=True)],
                              index=items.index, dtype=object)
    items["extreme"] = items["item"].isin(extreme)
    if not ok:
        notes.append(Msg("the optimiser stopped before full convergence; treat values with "
                         "care"))
    return RaterModel(True, "", tuple(float(v) for v in used), tuple(float(v) for v in ta),
                      raters.sort_values("severity").reset_index(drop=True),
                      items.sort_values("item").reset_index(drop=True),
                      int(len(obs)), ll, ok, tuple(notes))


def fit_dimensions(ratings: pd.DataFrame, scales: dict[str, tuple[Sequence[float], bool]]
                   ) -> dict[str, RaterModel]:
    """Fit every dimension of long ratings (``item_id, rater, dimension, score``).

    ``scales`` maps a dimension to (full scale values, ordered?); an unordered scale (named
    categories) is reported as not estimable, since the model needs ordered categories.
    """
    out: dict[str, RaterModel] = {}
    for dim, (values, ordered) in scales.items():
        sub = ratings[ratings["dimension"] == dim]
        if not ordered:
            out[dim] = RaterModel(False, Msg("not estimable: named categories have no order"))
        elif sub.empty:
            out[dim] = RaterModel(False, Msg("not estimable: no ratings"))
        else:
            out[dim] = fit_rater_model(sub.rename(columns={"item_id": "item"}), values)
    return out


def fair_scores(models: dict[str, RaterModel]) -> pd.DataFrame:
    """``item_id, dimension, fair_score, fair_se`` from fitted dimensions (long)."""
    parts = [m.items.assign(dimension=d)[["item", "dimension", "fair_score", "fair_se"]]
             for d, m in models.items() if m.estimable]
    if not parts:
        return pd.DataFrame(columns=["item_id", "dimension", "fair_score", "fair_se"])
    return pd.concat(parts).rename(columns={"item": "item_id"}).reset_index(drop=True)
