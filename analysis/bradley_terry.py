"""Bradley–Terry rankings from pairwise preferences, with Davidson's ties and a scenario
bootstrap.

The model (Bradley & Terry 1952) gives each player ``i`` (a companion model, a condition, or
both) a log-strength ``β_i``::

    P(i beats j) = exp(β_i) / (exp(β_i) + exp(β_j)) = σ(β_i − β_j)

With ties, Davidson's (1970) extension adds one parameter ``ν ≥ 0``; with ``π = exp(β)``::

    P(i beats j) = π_i / (π_i + π_j + ν √(π_i π_j))
    P(tie)       = ν √(π_i π_j) / (π_i + π_j + ν √(π_i π_j))

Writing ``s = (β_i − β_j) / 2``, ``w``, ``l``, ``t`` for i's wins, losses and ties against j
and ``n = w + l + t``, the log-likelihood of one pair is::

    ℓ = (w − l) s + t log ν − n log(2 cosh s + ν)

(``ν = 0`` without ties: Bradley–Terry). It depends on differences only, so the strengths are
identified up to a shift and are centred to mean 0. ``ℓ`` is concave in ``(β, log ν)`` (minus a
log-sum-exp of ``s, −s, log ν``), and is maximised by Newton's method with step halving from
``β = 0`` and the ``ν`` that matches the share of ties; the iteration stops when no parameter
moves by more than ``tol``. (Hunter's 2004 MM algorithm converges linearly and needs hundreds
of iterations to agree with a reference to 1e-6; Newton needs fewer than ten.)

**When there is no estimate.** A finite maximum exists only when the comparison graph is
*strongly connected*: draw ``i → j`` when ``i`` beat or tied ``j`` at least once; every player
must reach every other (Ford 1957; Hunter 2004, Assumption 1; a tie bounds the difference both
ways). Otherwise the likelihood grows without bound as some groups drift apart — a model that
never lost is infinitely strong. The players then fall into groups (the strongly connected
components): strengths are estimated within each group of two or more (the maximum over the
within-group comparisons, which is the limit of the full likelihood), and between groups the
result says what is known — one group never lost to the other, or they were never compared —
and no number. Ranks are given only when the groups are totally ordered.

**Bootstrap.** Comparisons of one scenario share its context, so scenarios are resampled
(B resamples with replacement, seeded). Each resample is a vector of scenario weights; the
per-pair win/loss/tie counts of all B resamples are one sparse product, and the B fits run as
one vectorised Newton iteration (batched linear solves). A resample whose graph is no longer
strongly connected within a group has no finite estimate; the result counts them. Intervals
are percentile intervals of the centred log-strengths over all B resamples, those without an
estimate counted beyond each bound (an interval that holds wherever they lie; none where they
decide a bound).

References
----------
Bradley, R. A., & Terry, M. E. (1952). Rank analysis of incomplete block designs: I. The method
of paired comparisons. Biometrika, 39(3/4), 324-345.
Davidson, R. R. (1970). On extending the Bradley-Terry model to accommodate ties in paired
comparison experiments. JASA, 65(329), 317-328.
Ford, L. R. (1957). Solution of a ranking problem from binary comparisons. The American
Mathematical Monthly, 64(8), 28-33.
Hunter, D. R. (2004). MM algorithms for generalized Bradley-Terry models. The Annals of
Statistics, 32(1), 384-406.

Examples
--------
Three players whose counts follow the Davidson model exactly with π = (4, 1, ¼) and ν = 1
(the hand-worked case of the tests): the fit returns them.

>>> a = ["A"] * 7 + ["B"] * 7 + ["A"] * 21
>>> b = ["B"] * 7 + ["C"] * 7 + ["C"] * 21
>>> o = (["a"] * 4 + ["b"] + ["tie"] * 2) * 2 + ["a"] * 16 + ["b"] + ["tie"] * 4
>>> r = bradley_terry(a, b, o, B=0)
>>> [round(x, 6) + 0.0 for x in r.log_strength], round(r.nu, 6), r.rank
([1.386294, 0.0, -1.386294], 1.0, (1, 2, 3))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from messages import Msg

from .resample import item_weights
from .serialize import finite

__all__ = ["BTResult", "GroupRelation", "bradley_terry", "elo", "ELO_SCALE", "ELO_BASE",
           "Outcome", "encode", "Encoded", "fit_weighted", "pair_counts", "kendall_tau_b"]

Outcome = Literal["a", "b", "tie"]
ELO_SCALE = 400.0 / math.log(10.0)
"""An Elo-like display: ``1000 + 400 · log10(π)``, as Chatbot Arena shows Bradley–Terry
strengths (a difference of 400 points is 10:1 odds). A display only: the same numbers."""
ELO_BASE = 1000.0
_S_MAX = 300.0  # |β_i − β_j| / 2 beyond this is infinite for every purpose (cosh overflows at 710)


def elo(log_strength: float | None) -> float | None:
    """A centred log-strength on the Elo-like display scale (:data:`ELO_SCALE`)."""
    return None if log_strength is None else ELO_BASE + ELO_SCALE * log_strength


@dataclass(frozen=True)
class GroupRelation:
    """How two groups of players relate when they cannot be put on one scale: ``above``
    never lost to ``below`` (every comparison between them was a win for ``above``'s side), or
    the two were ``never compared`` (``above`` is then just the first of the two)."""

    above: tuple[str, ...]
    below: tuple[str, ...]
    kind: Literal["dominates", "never compared"]

    @property
    def reason(self) -> Msg:
        a, b = ", ".join(self.above), ", ".join(self.below)
        if self.kind == "dominates":
            return Msg("{a} never lost to {b}: their difference in strength is infinite (no "
                       "finite estimate)", a=a, b=b)
        return Msg("{a} and {b} were never compared, directly or through other models", a=a,
                   b=b)


@dataclass(frozen=True)
class BTResult:
    """A Bradley–Terry (Davidson) fit with scenario-bootstrap intervals.

    Per player (in ``players`` order): ``log_strength`` centred to mean 0 within its group,
    ``low``/``high`` (percentile interval; None with ``B = 0`` or too few valid resamples),
    ``rank`` (1 = strongest; None for all when the groups are not totally ordered: a group
    that never lost to the next ranks above it, its strength unknown),
    ``n_comparisons`` and ``group`` (index into ``groups``). A player in a group of one has no
    estimate (None). ``nu`` is Davidson's tie parameter (None without ties). ``wins[i][j]`` is
    how often i beat j, ``ties[i][j]`` how often they tied.
    """

    players: tuple[str, ...]
    log_strength: tuple[float | None, ...]
    low: tuple[float | None, ...]
    high: tuple[float | None, ...]
    rank: tuple[int | None, ...]
    n_comparisons: tuple[int, ...]
    group: tuple[int, ...]
    groups: tuple[tuple[str, ...], ...]
    relations: tuple[GroupRelation, ...]
    nu: float | None
    n: int
    n_ties: int
    n_scenarios: int
    wins: tuple[tuple[int, ...], ...]
    ties: tuple[tuple[int, ...], ...]
    B: int
    seed: int
    ci: float
    n_boot_valid: int
    log_likelihood: float | None
    iterations: int
    converged: bool
    dropped_self: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    boot: np.ndarray | None = field(default=None, compare=False, repr=False)
    """(B, players) centred log-strengths per resample (NaN: no finite estimate in it), for
    statistics that need the same resamples (Kendall's τ between two rankings)."""

    @property
    def connected(self) -> bool:
        """One group holds every player: every pair can be compared on one scale."""
        return len(self.groups) == 1

    @property
    def tie_model(self) -> Literal["davidson", "none"]:
        return "davidson" if self.nu is not None else "none"

    def index(self, player: str) -> int:
        return self.players.index(player)

    def win_rate(self, i: int, j: int) -> tuple[float | None, int]:
        """i's share of the comparisons with j (a tie counts half) and how many there were."""
        n = self.wins[i][j] + self.wins[j][i] + self.ties[i][j]
        return ((self.wins[i][j] + 0.5 * self.ties[i][j]) / n if n else None), n


# --- encoding ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Encoded:
    """Comparisons as arrays: player indices ``i < j`` of each pair, the pair index, the
    outcome seen from the pair's first player (0 win, 1 loss, 2 tie) and the cluster."""

    players: tuple[str, ...]
    pairs: np.ndarray        # (P, 2) player indices, first < second
    pair: np.ndarray         # (n,) pair index of each comparison
    outcome: np.ndarray      # (n,) 0: pairs[p, 0] won, 1: pairs[p, 1] won, 2: tie
    cluster: np.ndarray      # (n,) cluster (scenario) index
    n_clusters: int
    dropped_self: int


def encode(a: Sequence[str], b: Sequence[str], outcome: Sequence[str], *,
           players: Sequence[str] | None = None, clusters: Sequence | None = None,
           cluster_levels: Sequence | None = None) -> Encoded:
    """Comparisons (``a`` against ``b``, ``outcome`` "a", "b" or "tie") as arrays; a
    comparison of a player with itself is dropped (counted in ``dropped_self``).
    ``cluster_levels`` fixes the clusters' indices (every cluster, in order), so two data
    sets resampled together (humans and a judge) share their scenarios' indices."""
    a = np.asarray(a, dtype=object)
    b = np.asarray(b, dtype=object)
    o = np.asarray(outcome, dtype=object)
    if not (len(a) == len(b) == len(o)):
        raise ValueError("a, b and outcome must have the same length")
    bad = sorted({str(x) for x in o if x not in ("a", "b", "tie")})
    if bad:
        raise ValueError(f"outcome must be 'a', 'b' or 'tie', not {bad[:3]}")
    names = tuple(players) if players is not None else tuple(sorted(set(a) | set(b), key=str))
    index = {p: k for k, p in enumerate(names)}
    unknown = sorted({str(x) for x in np.concatenate([a, b]) if x not in index})
    if unknown:
        raise ValueError(f"players not listed: {unknown[:3]}")
    cl = np.arange(len(a)) if clusters is None else np.asarray(clusters, dtype=object)
    if len(cl) != len(a):
        raise ValueError("clusters must have one entry per comparison")
    ia = np.fromiter((index[x] for x in a), dtype=np.int64, count=len(a))
    ib = np.fromiter((index[x] for x in b), dtype=np.int64, count=len(b))
    keep = ia != ib
    dropped = int((~keep).sum())
    ia, ib, o, cl = ia[keep], ib[keep], o[keep], cl[keep]
    lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
    m = len(names)
    code = lo * m + hi
    uniq, pair = np.unique(code, return_inverse=True)
    pairs = np.stack([uniq // m, uniq % m], axis=1) if len(uniq) else np.zeros((0, 2), int)
    a_won, b_won = o == "a", o == "b"
    first_won = np.where(ia == lo, a_won, b_won)
    second_won = np.where(ia == lo, b_won, a_won)
    out = np.where(first_won, 0, np.where(second_won, 1, 2)).astype(np.int64)
    if cluster_levels is not None:
        level = {str(c): k for k, c in enumerate(cluster_levels)}
        missing = sorted({str(c) for c in cl} - set(level))
        if missing:
            raise ValueError(f"clusters not in cluster_levels: {missing[:3]}")
        cidx = np.fromiter((level[str(c)] for c in cl), dtype=np.int64, count=len(cl))
        n_clusters = len(level)
    else:
        _, cidx = np.unique(cl.astype(str), return_inverse=True) if len(cl) else (None, cl)
        n_clusters = int(cidx.max()) + 1 if len(cl) else 0
    return Encoded(names, pairs.astype(np.int64), pair.astype(np.int64), out,
                   np.asarray(cidx, dtype=np.int64), n_clusters, dropped)


def pair_counts(enc: Encoded) -> sparse.csr_matrix:
    """Clusters × (3 · pairs): how often each pair's first player won, lost and tied, per
    cluster. The counts of a resample are its cluster weights times this matrix."""
    col = enc.pair * 3 + enc.outcome
    return sparse.csr_matrix((np.ones(len(col)), (enc.cluster, col)),
                             shape=(enc.n_clusters, 3 * len(enc.pairs)))


# --- graph ------------------------------------------------------------------------------------

def _beat_graph(pairs: np.ndarray, w: np.ndarray, ls: np.ndarray, t: np.ndarray,
                m: int) -> sparse.csr_matrix:
    """Edge i → j when i beat or tied j at least once."""
    i, j = pairs[:, 0], pairs[:, 1]
    fwd = (w > 0) | (t > 0)   # i beat or tied j
    back = (ls > 0) | (t > 0)  # j beat or tied i
    rows = np.concatenate([i[fwd], j[back]])
    cols = np.concatenate([j[fwd], i[back]])
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, m))


def _components(pairs, w, ls, t, m) -> np.ndarray:
    return connected_components(_beat_graph(pairs, w, ls, t, m), directed=True,
                                connection="strong")[1]


def _order_groups(labels: np.ndarray, pairs, w, ls, t, players
                  ) -> tuple[list[list[int]], list[GroupRelation], bool]:
    """Groups (strongly connected components) in a topological order of "never lost to",
    the relations between groups that matter, and whether that order is total."""
    k = int(labels.max()) + 1 if len(labels) else 0
    dom = np.zeros((k, k), bool)   # dom[x, y]: x beat y's members, never lost or tied
    met = np.zeros((k, k), bool)
    for (i, j), wi, li, ti in zip(pairs, w, ls, t, strict=True):
        gi, gj = labels[i], labels[j]
        if gi == gj or wi + li + ti == 0:
            continue
        met[gi, gj] = met[gj, gi] = True
        if wi > 0:
            dom[gi, gj] = True
        if li > 0:
            dom[gj, gi] = True
    # Kahn's algorithm; among ready groups, the one listed first (stable, seed-free)
    indeg = dom.sum(axis=0)
    members = [[p for p in range(len(labels)) if labels[p] == g] for g in range(k)]
    ready = sorted((g for g in range(k) if indeg[g] == 0), key=lambda g: members[g][0])
    order: list[int] = []
    total = True
    while ready:
        if len(ready) > 1:
            total = False
        g = ready.pop(0)
        order.append(g)
        for h in range(k):
            if dom[g, h]:
                indeg[h] -= 1
                if indeg[h] == 0:
                    ready.append(h)
        ready.sort(key=lambda g: members[g][0])
    if total:  # a chain also needs each group to have beaten the next directly or in steps
        total = all(dom[order[x], order[x + 1]] for x in range(len(order) - 1))
    names = [tuple(players[p] for p in members[g]) for g in order]
    pos = {g: x for x, g in enumerate(order)}
    reach = dom.copy()
    for mid in range(k):  # transitive closure (k is small)
        reach |= reach[:, [mid]] & reach[[mid], :]
    relations = []
    for x in range(k):
        for y in range(x + 1, k):
            gx, gy = order[x], order[y]
            if reach[gx, gy]:
                if dom[gx, gy]:
                    relations.append(GroupRelation(names[pos[gx]], names[pos[gy]],
                                                   "dominates"))
            elif not reach[gy, gx] and not met[gx, gy]:
                relations.append(GroupRelation(names[pos[gx]], names[pos[gy]],
                                               "never compared"))
    return [members[g] for g in order], relations, total


# --- the fit ----------------------------------------------------------------------------------

def _log1p_cosh(s: np.ndarray, nu) -> np.ndarray:
    """log(2 cosh s + ν), without overflow."""
    a = np.abs(s)
    return a + np.log1p(np.exp(-2 * a) + nu * np.exp(-a))


def _loglik(beta, theta, pi, pj, w, ls, t, ties) -> np.ndarray:
    """ℓ of each data set; ``beta`` (m, R), counts (P, R) (pairs × data sets)."""
    s = np.clip((beta[pi] - beta[pj]) / 2, -_S_MAX, _S_MAX)
    nu = np.exp(theta)[None, :] if ties else 0.0
    ll = (w - ls) * s - (w + ls + t) * _log1p_cosh(s, nu)
    if ties:
        ll = ll + t * theta[None, :]
    return ll.sum(axis=0)


def fit_weighted(counts: np.ndarray, pairs: np.ndarray, m: int, free: np.ndarray, *,
                 ties: bool, tol: float = 1e-10, max_iter: int = 100,
                 start: tuple[np.ndarray, float] | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Maximum likelihood for R data sets at once.

    ``counts`` (R, P, 3): per pair the first player's wins, losses and ties; ``free`` the
    players whose log-strength is estimated (the others are held at 0: one reference per
    group, and players without comparisons). Returns (β (R, m), log ν (R,), converged (R,),
    iterations). The caller centres β within groups. ``start`` (β, log ν) starts every data
    set there (the bootstrap starts from the point estimate: fewer iterations).

    Each Newton step solves the R systems ``−H Δ = g`` at once. With ``d = β_i − β_j``,
    ``s = d / 2``, ``D = 2 cosh s + ν``: ``∂ℓ/∂d = (w − l)/2 − n sinh s / D``,
    ``∂²ℓ/∂d² = −n (1 + ν cosh s / 2) / D²``, ``∂ℓ/∂log ν = t − n ν / D``,
    ``∂²ℓ/∂(log ν)² = −2 n ν cosh s / D²`` and ``∂²ℓ/∂d ∂log ν = n ν sinh s / D²``.
    """
    r = counts.shape[0]
    # pairs × data sets: row gathers and (players × pairs) products are the fast layout
    w = np.ascontiguousarray(counts[..., 0].T, dtype=float)
    ls = np.ascontiguousarray(counts[..., 1].T, dtype=float)
    t = np.ascontiguousarray(counts[..., 2].T, dtype=float)
    n = w + ls + t
    half_wl = (w - ls) / 2
    pi, pj = pairs[:, 0], pairs[:, 1]
    npairs = len(pairs)
    fidx = np.flatnonzero(free)
    k = len(fidx)
    size = k + (1 if ties else 0)
    red = np.full(m, -1)
    red[fidx] = np.arange(k)
    ri, rj = red[pi], red[pj]
    both = (ri >= 0) & (rj >= 0)
    flat_ij = ri[both] * size + rj[both]
    flat_ji = rj[both] * size + ri[both]
    diag = np.arange(k) * (size + 1)
    sign_t = np.zeros((m, npairs))
    sign_t[pi, np.arange(npairs)] = 1.0
    sign_t[pj, np.arange(npairs)] = -1.0
    abs_t = np.abs(sign_t)
    sign_f, abs_f = sign_t[fidx], abs_t[fidx]
    beta = np.zeros((m, r))
    if ties:
        share = np.clip(t.sum(axis=0) / np.maximum(n.sum(axis=0), 1), 1e-6, 1 - 1e-6)
        theta = np.log(2 * share / (1 - share))
    else:
        theta = np.full(r, -np.inf)
    if start is not None:
        beta[:] = np.asarray(start[0], float)[:, None]
        if ties:
            theta[:] = start[1]
    converged = np.zeros(r, bool)
    ll = _loglik(beta, theta, pi, pj, w, ls, t, ties)
    it = 0
    for it in range(1, max_iter + 1):
        act = np.flatnonzero(~converged)
        if not len(act):
            it -= 1
            break
        whole = len(act) == r
        b = beta if whole else beta[:, act]
        th = theta if whole else theta[act]
        hw, na = (half_wl, n) if whole else (half_wl[:, act], n[:, act])
        ta = t if whole else t[:, act]
        s = np.clip((b[pi] - b[pj]) / 2, -_S_MAX, _S_MAX)
        c, sh = np.cosh(s), np.sinh(s)
        nu = np.exp(th)[None, :] if ties else 0.0
        den = 2 * c + nu
        inv2 = na / (den * den)
        gd = hw - na * sh / den
        hdd = -inv2 * (1 + nu * c / 2)
        H = np.zeros((size * size, len(act)))
        H[flat_ij] = -hdd[both]
        H[flat_ji] = -hdd[both]
        H[diag] = abs_f @ hdd
        G = np.empty((size, len(act)))
        G[:k] = sign_f @ gd
        if ties:
            G[k] = (ta - na * nu / den).sum(axis=0)
            cross = sign_f @ (inv2 * sh * nu)
            H[np.arange(k) * size + k] = cross
            H[k * size + np.arange(k)] = cross
            H[k * size + k] = (-2 * inv2 * nu * c).sum(axis=0)
        Hs = H.reshape(size, size, len(act)).transpose(2, 0, 1)
        try:
            step = np.linalg.solve(-Hs, G.T[..., None])[..., 0].T
        except np.linalg.LinAlgError:  # a singular system (a degenerate resample): per set
            step = np.stack([np.linalg.lstsq(-h, g, rcond=None)[0]
                             for h, g in zip(Hs, G.T, strict=True)], axis=1)
        old = ll[act]
        scale = np.ones(len(act))
        for _half in range(30):  # step halving: the likelihood must not go down
            nb = b.copy()
            nb[fidx] += scale[None, :] * step[:k]
            nth = th + scale * step[k] if ties else th
            new = _loglik(nb, nth, pi, pj, w[:, act], ls[:, act], ta, ties) if not whole \
                else _loglik(nb, nth, pi, pj, w, ls, t, ties)
            worse = new < old - 1e-12 * np.maximum(1.0, np.abs(old))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        moved = np.abs(scale[None, :] * step).max(axis=0) if size else np.zeros(len(act))
        beta[:, act] = nb
        theta[act] = nth
        ll[act] = new
        converged[act[moved < tol]] = True
    return beta.T.copy(), theta, converged, it


def _nu_unbounded(pairs: np.ndarray, w: np.ndarray, ls: np.ndarray, t: np.ndarray,
                  m: int) -> bool:
    """Whether Davidson's ν has no finite maximum although the graph is strongly connected.

    Along a direction (δ for the half-differences, e > 0 for log ν) a pair's log-likelihood
    grows like ``(w − l) δ + t e − n max(|δ|, e)``, never positive; it stays level only if
    ``δ = e`` when i won (``−δ = e`` when j won) and ``|δ| ≤ e`` for a tie-only pair, and a
    pair with wins both ways cannot stay level. So ν runs off to infinity exactly when no
    pair has wins both ways and these difference constraints (e = 1) have a solution, i.e.
    their graph has no negative cycle (Bellman–Ford). Example: A never beat B, B beat A 6
    times, they tied 24 times — the shares 0 : 6 : 24 are reached only in the limit.
    """
    if t.sum() == 0 or ((w > 0) & (ls > 0)).any():
        return False
    edges = []  # (u, v, c): x_v <= x_u + c, with x the half log-strengths
    for (i, j), wi, li, ti in zip(pairs, w, ls, t, strict=True):
        if wi > 0:
            edges.append((i, j, -1.0))
            if ti > 0:
                edges.append((j, i, 1.0))
        elif li > 0:
            edges.append((j, i, -1.0))
            if ti > 0:
                edges.append((i, j, 1.0))
        elif ti > 0:
            edges += [(i, j, 1.0), (j, i, 1.0)]
    dist = np.zeros(m)
    for _ in range(m + 1):
        changed = False
        for u, v, c in edges:
            if dist[u] + c < dist[v] - 1e-12:
                dist[v] = dist[u] + c
                changed = True
        if not changed:
            return True  # the constraints hold: a direction along which ℓ never falls
    return False  # a negative cycle: no such direction, so ν is finite


def _centre(beta: np.ndarray, groups: list[list[int]]) -> np.ndarray:
    out = np.full_like(beta, np.nan)
    for g in groups:
        if len(g) >= 2:
            out[:, g] = beta[:, g] - beta[:, g].mean(axis=1, keepdims=True)
    return out


def _free_mask(m: int, groups: list[list[int]]) -> np.ndarray:
    free = np.zeros(m, bool)
    for g in groups:
        if len(g) >= 2:
            free[g[1:]] = True  # the first of each group is its reference
    return free


def _valid(counts: np.ndarray, base: np.ndarray, pairs: np.ndarray, m: int,
           groups: list[list[int]]) -> np.ndarray:
    """Resamples in which every group of two or more is still strongly connected on its
    own comparisons (else it has no finite estimate): from a group's first member, every
    member is reached along "beat or tied" edges and along their reverse. Only a resample
    that lost an edge of the original graph can have fallen apart, so only those are
    searched (all of them at once: a breadth-first search as batched products)."""
    def edges(c):
        return (c[..., 0] > 0) | (c[..., 2] > 0), (c[..., 1] > 0) | (c[..., 2] > 0)

    fwd0, back0 = edges(base)
    fwd, back = edges(counts)
    lost = np.flatnonzero(((fwd0 & ~fwd) | (back0 & ~back)).any(axis=1))
    ok = np.ones(len(counts), bool)
    if not len(lost):
        return ok
    for g in groups:
        if len(g) < 2:
            continue
        local = np.full(m, -1)
        local[g] = np.arange(len(g))
        li, lj = local[pairs[:, 0]], local[pairs[:, 1]]
        inside = (li >= 0) & (lj >= 0)
        adj = np.zeros((len(lost), len(g), len(g)), np.float32)
        adj[:, li[inside], lj[inside]] = fwd[lost][:, inside]
        adj[:, lj[inside], li[inside]] = back[lost][:, inside]
        for a in (adj, adj.transpose(0, 2, 1)):
            reach = np.zeros((len(lost), 1, len(g)), np.float32)
            reach[:, 0, 0] = 1.0
            for _step in range(len(g)):
                more = ((reach @ a) + reach > 0).astype(np.float32)
                if np.array_equal(more, reach):
                    break
                reach = more
            ok[lost] &= reach[:, 0, :].all(axis=1)
    return ok


def bradley_terry(a: Sequence[str], b: Sequence[str], outcome: Sequence[str], *,
                  players: Sequence[str] | None = None, clusters: Sequence | None = None,
                  B: int = 1000, seed: int = 0, ci: float = 0.95, tol: float = 1e-10,
                  max_iter: int = 100, cluster_levels: Sequence | None = None,
                  weights: np.ndarray | None = None) -> BTResult:
    """Fit Bradley–Terry (Davidson's model when there are ties) with a cluster bootstrap.

    Parameters
    ----------
    a, b : sequences of str
        The two players of each comparison (e.g. the models of the two replies).
    outcome : sequence of {"a", "b", "tie"}
        Who won.
    players : sequence of str, optional
        Every player to report, in this order (default: those seen, sorted). A listed player
        with no comparison gets no estimate.
    clusters : sequence, optional
        The resampling unit of each comparison (the scenario; default: each comparison).
    B : int
        Bootstrap resamples of the clusters (0: point estimates only). The B fits share one
        vectorised Newton iteration.
    seed : int
        Seed of the resampling.
    ci : float
        Coverage of the percentile intervals.
    cluster_levels, weights : optional
        Every cluster in a fixed order, and (B, clusters) resampling weights to use instead of
        drawing them: two data sets fitted with the same weights are resampled together.

    Returns
    -------
    BTResult
        Centred log-strengths, intervals, ranks, groups and the relations between groups
        that cannot be put on one scale, ν, counts and the bootstrap's bookkeeping.

    Notes
    -----
    See the module docstring for the likelihood, the existence condition and the bootstrap.
    Ties are modelled by Davidson's ν when the data have any; without ties this is the plain
    Bradley–Terry model (ν = 0), whose estimates equal ``choix.opt_pairwise(alpha=0)``.
    """
    if B < 0:
        raise ValueError(f"B must be 0 or more, got {B}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be between 0 and 1, got {ci}")
    enc = encode(a, b, outcome, players=players, clusters=clusters,
                 cluster_levels=cluster_levels)
    weights = _given_weights(weights, enc.n_clusters)
    if weights is not None:
        B = len(weights)
    m = len(enc.players)
    T = pair_counts(enc)
    p = len(enc.pairs)
    base = np.asarray(T.sum(axis=0)).reshape(p, 3)
    w, ls, t = base[:, 0], base[:, 1], base[:, 2]
    labels = _components(enc.pairs, w, ls, t, m) if m else np.zeros(0, int)
    # a player without comparisons is a group of its own (never compared with anyone)
    groups, relations, total = _order_groups(labels, enc.pairs, w, ls, t, enc.players)
    group_of, same = _group_of(groups, enc.pairs, m)
    n_ties = int(t.sum())
    within_t = float(t[same].sum())
    within_n = float((w + ls + t)[same].sum())
    ties = within_t > 0
    free = _free_mask(m, groups)
    cnt = base[None].astype(float)
    cnt[:, ~same] = 0.0
    all_ties = bool(within_n) and within_t == within_n
    unbounded = ties and not all_ties and _nu_unbounded(enc.pairs, *cnt[0].T, m)
    notes = _tie_notes(all_ties, unbounded)
    estimable = bool(free.any()) and not all_ties and not unbounded
    if estimable:
        beta, theta, point, ll, nu, converged, iters = _point_fit(
            cnt, enc.pairs, m, free, groups, ties, tol, max_iter)
    else:
        point = np.full(m, np.nan)
        ll, nu, converged, iters = None, None, False, 0
    low = np.full(m, np.nan)
    high = np.full(m, np.nan)
    n_valid = 0
    boot_all = None
    if estimable and B > 0 and enc.n_clusters > 0:
        W = item_weights(enc.n_clusters, B, seed) if weights is None else weights
        boot = np.asarray((T.T @ W.T).T).reshape(B, p, 3)
        boot[:, ~same] = 0.0
        boot_all = _boot_fits(boot, cnt[0], enc.pairs, m, groups, free, ties,
                              (beta[0], theta[0]), max_iter)
        low, high, n_valid = _percentiles(boot_all, ci, m)
        if n_valid < B:
            notes.append(Msg("{k} of {B} bootstrap resamples had no finite estimate (in them "
                             "a model never lost, or a group fell apart); each interval counts "
                             "them beyond its bounds, so it holds wherever they lie, and none "
                             "is given where they decide a bound", k=B - n_valid, B=B))
    rank = _ranks(groups, point, m) if total and not all_ties and not unbounded and m \
        else [None] * m
    n_per, wins, tie_m = _tables(enc.pairs, w, ls, t, m)
    if enc.dropped_self:
        notes.append(Msg("{n} comparisons of a model with itself were left out",
                         n=enc.dropped_self))
    if estimable and not converged:
        notes.append(Msg("the fit did not converge in {n} iterations", n=max_iter))

    return BTResult(
        players=enc.players, log_strength=_floats(point), low=_floats(low),
        high=_floats(high), rank=tuple(rank), n_comparisons=_ints(n_per),
        group=_ints(group_of), groups=_names(groups, enc.players),
        relations=tuple(relations), nu=nu, n=int((w + ls + t).sum()), n_ties=n_ties,
        n_scenarios=enc.n_clusters, wins=_table(wins), ties=_table(tie_m), B=B, seed=seed,
        ci=ci, n_boot_valid=n_valid, log_likelihood=ll, iterations=iters, converged=converged,
        dropped_self=enc.dropped_self, notes=tuple(notes), boot=boot_all)


def _floats(v: np.ndarray) -> tuple[float | None, ...]:
    return tuple(finite(x) for x in v)


def _ints(v: np.ndarray) -> tuple[int, ...]:
    return tuple(int(x) for x in v)


def _table(m: np.ndarray) -> tuple[tuple[int, ...], ...]:
    return tuple(_ints(row) for row in m)


def _names(groups, players: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(players[x] for x in g) for g in groups)


def _given_weights(weights: np.ndarray | None, n_clusters: int) -> np.ndarray | None:
    """Resampling weights given by the caller, checked: (B, clusters)."""
    if weights is None:
        return None
    weights = np.asarray(weights, float)
    if weights.ndim != 2 or weights.shape[1] != n_clusters:
        raise ValueError("weights must be (B, clusters)")
    return weights


def _tie_notes(all_ties: bool, unbounded: bool) -> list[str]:
    """Why the strengths have no finite estimate when the ties decide it."""
    notes: list[str] = []
    if all_ties:
        notes.append(Msg("every comparison was a tie: the tie parameter has no finite "
                         "estimate and no model is ranked above another"))
    if unbounded:
        notes.append(Msg("the tie parameter has no finite estimate: no two models each beat "
                         "the other, and the ties and one-way wins are fitted exactly only "
                         "in the limit; no model is given a strength"))
    return notes


def _group_of(groups, pairs: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Each player's group, and whether each pair's two players are in the same group."""
    group_of = np.empty(m, int)
    for gi, g in enumerate(groups):
        group_of[g] = gi
    same = group_of[pairs[:, 0]] == group_of[pairs[:, 1]] if len(pairs) else np.zeros(0, bool)
    return group_of, same


def _point_fit(cnt: np.ndarray, pairs: np.ndarray, m: int, free: np.ndarray, groups,
               ties: bool, tol: float, max_iter: int):
    """The maximum-likelihood fit of the observed counts: (β, θ, centred log-strengths,
    log-likelihood, ν, converged, iterations)."""
    beta, theta, conv, iters = fit_weighted(cnt, pairs, m, free, ties=ties, tol=tol,
                                            max_iter=max_iter)
    point = _centre(beta, groups)[0]
    ll = float(_loglik(beta.T, theta, pairs[:, 0], pairs[:, 1], cnt[..., 0].T,
                       cnt[..., 1].T, cnt[..., 2].T, ties)[0])
    nu = float(np.exp(theta[0])) if ties else None
    return beta, theta, point, ll, nu, bool(conv[0]), iters


def _ranks(groups, point: np.ndarray, m: int) -> list[int | None]:
    """Ranks by group, then by strength within a group (one that never lost: first, with no
    strength)."""
    rank: list[int | None] = [None] * m
    order = [x for g in groups for x in sorted(g, key=lambda x: -np.nan_to_num(point[x]))]
    for r_, x in enumerate(order, start=1):
        rank[x] = r_
    return rank


def _boot_fits(boot: np.ndarray, observed: np.ndarray, pairs: np.ndarray, m: int, groups,
               free: np.ndarray, ties: bool, start, max_iter: int) -> np.ndarray:
    """The centred log-strengths of each resample (B, players); a resample without a finite
    estimate is a row of NaN. A resample without ties is fitted without ν (its maximum is at
    ν = 0); one whose ν runs off (see :func:`_nu_unbounded`) has no estimate."""
    B = len(boot)
    ok = _valid(boot, observed, pairs, m, groups)
    boot_all = np.full((B, m), np.nan)
    tied = boot[..., 2].sum(axis=1) > 0
    if ties:
        for r in np.flatnonzero(ok & tied & ~((boot[..., 0] > 0) & (boot[..., 1] > 0))
                                .any(axis=1)):
            ok[r] = not _nu_unbounded(pairs, *boot[r].T, m)
    tie_rows = ok & tied if ties else np.zeros(B, bool)
    for rows, with_ties in ((tie_rows, True), (ok & ~tie_rows, False)):
        if not rows.any():
            continue
        # from the point estimate, to 1e-7: far below the intervals' own resolution
        bb, _th, bconv, _ = fit_weighted(boot[rows], pairs, m, free, ties=with_ties,
                                         tol=1e-7, max_iter=max_iter, start=start)
        boot_all[np.flatnonzero(rows)[bconv]] = _centre(bb, groups)[bconv]
    return boot_all


def _percentiles(boot_all: np.ndarray, ci: float, m: int
                 ) -> tuple[np.ndarray, np.ndarray, int]:
    """Each player's percentile interval over all the resamples, a resample without an
    estimate counted as beyond each bound (below the lower, above the upper): the interval
    then holds wherever those lie (in them a model never lost: its strength is infinite). None
    where they decide a bound, or from fewer than two estimates. Also: how many resamples had
    an estimate. With every resample estimated this is numpy's linear percentile."""
    low = np.full(m, np.nan)
    high = np.full(m, np.nan)
    n = len(boot_all)
    tail = (1 - ci) / 2
    for j in range(m):
        v = np.sort(boot_all[:, j][np.isfinite(boot_all[:, j])])
        k = n - len(v)  # resamples without an estimate of this player
        lo, hi = (n - 1) * tail - k, (n - 1) * (1 - tail)  # positions among the estimates
        # lo >= 0 exactly when hi <= len(v) - 1 (the k count on both sides); the tolerance
        # because (1 - 0.9) / 2 * 40 is 1.9999999999999996; np.interp holds the ends
        if len(v) >= 2 and lo > -1e-9:
            low[j], high[j] = np.interp([lo, hi], np.arange(len(v)), v)
    return low, high, int(np.isfinite(boot_all).any(axis=1).sum())


def _tables(pairs: np.ndarray, w, ls, t, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Comparisons per player, and the wins and ties of each player against each other."""
    n_per = np.zeros(m, int)
    if len(pairs):
        np.add.at(n_per, pairs[:, 0], (w + ls + t).astype(int))
        np.add.at(n_per, pairs[:, 1], (w + ls + t).astype(int))
    wins = np.zeros((m, m), int)
    tie_m = np.zeros((m, m), int)
    for (i, j), wi, li, ti in zip(pairs, w, ls, t, strict=True):
        wins[i, j] += int(wi)
        wins[j, i] += int(li)
        tie_m[i, j] += int(ti)
        tie_m[j, i] += int(ti)
    return n_per, wins, tie_m


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ_b between the rows of ``x`` and ``y`` (R, k): the concordant minus the
    discordant pairs over √((pairs untied in x) · (pairs untied in y)) (Kendall 1945); NaN
    where a row has no untied pair.

    >>> float(kendall_tau_b(np.array([[1., 2, 3, 4]]), np.array([[1., 3, 2, 4]]))[0])
    0.6666666666666666
    """
    x = np.atleast_2d(np.asarray(x, float))
    y = np.atleast_2d(np.asarray(y, float))
    iu = np.triu_indices(x.shape[1], 1)
    dx = np.sign(x[:, :, None] - x[:, None, :])[:, iu[0], iu[1]]
    dy = np.sign(y[:, :, None] - y[:, None, :])[:, iu[0], iu[1]]
    num = (dx * dy).sum(axis=1)
    den = np.sqrt((dx != 0).sum(axis=1) * (dy != 0).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
