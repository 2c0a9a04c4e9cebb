"""Bradley–Terry (Davidson) against references written from the model's probabilities, resample
by resample: the bootstrap's fits, the resamples left out (fallen apart, ν without a finite
maximum), the tie-parameter check on hand-worked three-player designs, one Newton step against
finite differences, the iteration count and the singular-system fallback."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from analysis.bradley_terry import bradley_terry, fit_weighted, kendall_tau_b


def _expand(rows):
    """(a, b, outcome, count) rows as the three lists bradley_terry takes."""
    a, b, o = [], [], []
    for x, y, w, k in rows:
        a += [x] * k
        b += [y] * k
        o += [w] * k
    return a, b, o


def _davidson_ll(beta, nu, counts, half_ties=False):
    """Davidson's log-likelihood written from its probabilities (see `_ml`); ``counts`` maps
    (i, j) to (i's wins, j's wins, ties). With ``half_ties`` (a fit without ν) a tie counts
    as half a win and half a loss."""
    out = 0.0
    for (i, j), (w, ls, t) in counts.items():
        pi, pj = math.exp(beta[i]), math.exp(beta[j])
        tie = nu * math.sqrt(pi * pj)
        den = pi + pj + tie
        out += w * math.log(pi / den) + ls * math.log(pj / den)
        if t and half_ties:
            out += t * 0.5 * (math.log(pi / den) + math.log(pj / den))
        elif t:
            out += t * math.log(tie / den)
    return out


def _ml(counts, m, ties):
    """The maximum-likelihood log-strengths (centred) and ν of Davidson's model, written from
    its probabilities (Davidson 1970): with π = exp(β),
    P(i beats j) = π_i / (π_i + π_j + ν √(π_i π_j)), P(tie) = ν √(π_i π_j) / (same), and ν = 0
    without ties (Bradley–Terry). ``counts`` maps (i, j) to (i's wins, j's wins, ties);
    maximised by BFGS over (β_1 .. β_{m-1}, log ν) with β_0 = 0."""
    def nll(x):
        beta = np.concatenate([[0.0], x[:m - 1]])
        return -_davidson_ll(beta, math.exp(x[m - 1]) if ties else 0.0, counts)

    x0 = np.zeros(m - 1 + (1 if ties else 0))
    res = minimize(nll, x0, method="BFGS", options={"gtol": 1e-11, "xrtol": 1e-12})
    beta = np.concatenate([[0.0], res.x[:m - 1]])
    return beta - beta.mean(), (math.exp(res.x[m - 1]) if ties else None), -res.fun


def _resample_counts(clusters, weights):
    """Per pair (i, j), i < j: the weighted wins of i, of j and the ties."""
    out = {}
    for cl, wt in zip(clusters, weights, strict=True):
        for i, j, res in cl:
            w, ls, t = out.get((i, j), (0, 0, 0))
            out[(i, j)] = (w + wt * (res == "a"), ls + wt * (res == "b"), t + wt * (res == "tie"))
    return out


def _fit_clusters(clusters, weights, **kw):
    names = "ABCD"
    a, b, o, cl = [], [], [], []
    for k, c in enumerate(clusters):
        for i, j, res in c:
            a.append(names[i])
            b.append(names[j])
            o.append(res)
            cl.append(k)
    return bradley_terry(a, b, o, clusters=cl, weights=np.asarray(weights, float), **kw)


# --- the bootstrap, resample by resample ------------------------------------------------------

# Two players, four scenarios: A beat B; B beat A; A beat B twice; a tie.
TWO = [[(0, 1, "a")], [(0, 1, "b")], [(0, 1, "a"), (0, 1, "a")], [(0, 1, "tie")]]


def test_two_players_every_resample_has_the_closed_form_or_none():
    # With two players Davidson's model is saturated: the fit reproduces the shares, so
    # e^{β_A - β_B} = w / l and ν = t / √(w l) (test_bradley_terry's closed form); centred,
    # A gets +ln(w/l)/2. A finite maximum needs w > 0 and l > 0: with l = 0 and no tie the
    # two fall apart (A never lost), with l = 0 and a tie (or only ties) ν and the
    # difference run off together. Each row of weights is one resample of the scenarios.
    W = [[1, 1, 1, 1],   # w 3, l 1, t 1: ln 3
         [2, 1, 0, 1],   # w 2, l 1, t 1: ln 2
         [0, 2, 2, 0],   # w 4, l 2, no tie: ln 2 (no ν)
         [1, 0, 2, 1],   # l 0, a tie: ν unbounded, left out
         [2, 0, 2, 0],   # l 0, no tie: fallen apart, left out
         [0, 3, 1, 0],   # w 2, l 3: ln(2/3)
         [0, 0, 0, 4],   # only ties: ν unbounded, left out
         [0, 2, 0, 0],   # w 0, no tie: fallen apart (A never won), left out
         [0, 2, 0, 1]]   # w 0, a tie: ν unbounded, left out
    # max_iter far above what a finite fit needs (under 10), so a resample fitted although
    # it has no finite maximum could not hide behind a fit that does not converge
    r = _fit_clusters(TWO, W, max_iter=1000)
    want = [math.log(3) / 2, math.log(2) / 2, math.log(2) / 2, None, None,
            math.log(2 / 3) / 2, None, None, None]
    for row, x in zip(r.boot, want, strict=True):
        if x is None:
            assert np.isnan(row).all()
        else:
            np.testing.assert_allclose(row, [x, -x], atol=1e-7)
    assert r.n_boot_valid == 4 and r.B == 9 and r.n_scenarios == 4
    # five of nine resamples without an estimate decide both bounds: no interval (the four
    # estimates' own percentiles, given before, ignored that A's strength is infinite in two
    # of the five)
    assert r.low == (None, None) and r.high == (None, None)
    assert any("5 of 9 bootstrap resamples had no finite estimate" in n for n in r.notes)
    # the point estimate: w 3, l 1, t 1 over all scenarios
    assert r.log_strength[0] == pytest.approx(math.log(3) / 2, abs=1e-7)
    assert r.nu == pytest.approx(1 / math.sqrt(3), abs=1e-7)
    # saturated: the maximised log-likelihood is Σ count · log(share), shares 3/5, 1/5, 1/5
    assert r.log_likelihood == pytest.approx(3 * math.log(3 / 5) + 2 * math.log(1 / 5),
                                             abs=1e-9)


def test_an_interval_needs_two_resamples_with_an_estimate():
    r = _fit_clusters(TWO, [[1, 1, 1, 1]])
    assert r.n_boot_valid == 1 and r.low == (None, None) and r.high == (None, None)
    # two: the percentile interval of two values, numpy's linear interpolation between them
    r = _fit_clusters(TWO, [[1, 1, 1, 1], [0, 3, 1, 0]], ci=0.9)
    lo, hi = math.log(2 / 3) / 2, math.log(3) / 2
    assert r.n_boot_valid == 2 and r.ci == 0.9
    assert r.low[0] == pytest.approx(lo + 0.05 * (hi - lo), abs=1e-7)
    assert r.high[0] == pytest.approx(lo + 0.95 * (hi - lo), abs=1e-7)


# Three players in a cycle: A beat B, B beat C, C beat A, and A tied C. No pair has wins both
# ways, yet every resample that stays strongly connected has a finite ν: with x the half
# log-strengths, a level direction would need x_A - x_B >= 1 and x_B - x_C >= 1 (the wins)
# and x_C - x_A >= 1 or |x_A - x_C| <= 1 (C's win or the tie): they add up to a contradiction.
CYCLE = [[(0, 1, "a")], [(1, 2, "a")], [(0, 2, "b")], [(0, 2, "tie")]]
FLIP = {"a": "b", "b": "a", "tie": "tie"}


@pytest.mark.parametrize("reverse", [False, True])
def test_a_cycle_with_ties_is_fitted_resample_by_resample_like_the_reference(reverse):
    # reversed, the cycle runs the other way: in [1, 1, 0, 1] A then reaches C only through
    # the tie (before, C reached A only through it)
    cycle = [[(i, j, FLIP[o] if reverse else o) for i, j, o in c] for c in CYCLE]
    W = [[1, 1, 1, 1],   # the cycle and one tie: Davidson
         [2, 1, 1, 0],   # no tie: Bradley-Terry (ν = 0)
         [1, 1, 0, 2],   # A > B > C, two ties A-C: Davidson, finite
         [1, 1, 2, 0],   # no tie
         [2, 0, 1, 1],   # B beat nobody (reversed: nobody beat B): fallen apart
         [1, 2, 1, 1],   # exactly one tie: Davidson
         [0, 1, 1, 2],   # nobody beat B (reversed: B beat nobody): fallen apart
         [1, 1, 0, 1]]   # A > B > C, and C reaches A only through its one tie with A
    r = _fit_clusters(cycle, W, max_iter=1000)
    for row, w in zip(r.boot, W, strict=True):
        counts = _resample_counts(cycle, w)
        if w in ([2, 0, 1, 1], [0, 1, 1, 2]):
            assert np.isnan(row).all(), w
            continue
        ties = sum(t for _, _, t in counts.values()) > 0
        ref, _, _ = _ml(counts, 3, ties)
        np.testing.assert_allclose(row, ref, atol=2e-6, err_msg=str(w))
    assert r.n_boot_valid == 6
    ref, nu, ll = _ml(_resample_counts(cycle, [1, 1, 1, 1]), 3, True)
    np.testing.assert_allclose(r.log_strength, ref, atol=2e-6)
    assert r.nu == pytest.approx(nu, abs=1e-5)
    assert r.log_likelihood == pytest.approx(ll, abs=1e-8)


def test_max_iter_bounds_the_bootstrap_fits_too():
    # one Newton step is not enough for any fit: the point estimate says so, and no
    # resample's fit converges, so none gives an interval
    r = _fit_clusters(TWO, [[1, 1, 1, 1], [2, 1, 0, 1], [0, 2, 2, 0]], max_iter=1)
    assert not r.converged and r.iterations == 1
    assert r.n_boot_valid == 0 and r.low == (None, None)
    assert any("did not converge in 1 iterations" in n for n in r.notes)


# --- when ν has no finite maximum: hand-worked three-player designs ---------------------------
#
# Along a direction (x for the half log-strengths, e = 1 for log ν) a pair's log-likelihood
# grows like (w - l) δ + t - n max(|δ|, 1), δ = x_i - x_j: never positive, level only if δ = 1
# when i won (and tied), δ = -1 when j won (and tied), |δ| <= 1 for ties only, δ >= 1 for wins
# of i only. ν runs off exactly when no pair has wins both ways and a direction is level for
# every pair (then the likelihood rises to its supremum only in the limit); otherwise the
# maximum is finite and is the reference's.

UNBOUNDED = {
    # one tie, B beat A 6 times: δ_AB = -1 is level
    "one tie": [("A", "B", "b", 6), ("A", "B", "tie", 1)],
    # A beat B 6 times, 24 ties: δ_AB = 1
    "a's wins and ties": [("A", "B", "a", 6), ("A", "B", "tie", 24)],
    # A beat and tied B, C beat and tied B, A and C tied: x = (1, 0, 1)
    "two over one": [("A", "B", "a", 1), ("A", "B", "tie", 1), ("B", "C", "b", 1),
                     ("B", "C", "tie", 1), ("A", "C", "tie", 1)],
    # A beat B (no tie), A beat and tied C, C beat and tied B: x = (2, 0, 1); A's lead
    # over B of 2 is allowed because A and B never tied
    "a lead without a tie": [("A", "B", "a", 1), ("A", "C", "a", 1), ("A", "C", "tie", 1),
                             ("B", "C", "b", 1), ("B", "C", "tie", 1)],
    # the same with every outcome reversed: x = (0, 2, 1)
    "reversed lead without a tie": [("A", "B", "b", 1), ("A", "C", "b", 1),
                                    ("A", "C", "tie", 1), ("B", "C", "a", 1),
                                    ("B", "C", "tie", 1)],
}

BOUNDED = {
    # A beat B, B beat C, A and C only tied: δ_AC >= 2 against |δ_AC| <= 1
    "chain and a tie": [("A", "B", "a", 1), ("B", "C", "a", 1), ("A", "C", "tie", 1)],
    # the same reversed: C above B above A, A and C tied
    "reversed chain and a tie": [("A", "B", "b", 1), ("B", "C", "b", 1), ("A", "C", "tie", 1)],
    # A beat and tied B and C, C beat and tied B: δ_AB = 1 but δ_AC + δ_CB = 2
    "wins and ties around": [("A", "B", "a", 1), ("A", "B", "tie", 1), ("A", "C", "a", 1),
                             ("A", "C", "tie", 1), ("B", "C", "b", 1), ("B", "C", "tie", 1)],
    # the same reversed
    "reversed wins and ties around": [("A", "B", "b", 1), ("A", "B", "tie", 1),
                                      ("A", "C", "b", 1), ("A", "C", "tie", 1),
                                      ("B", "C", "a", 1), ("B", "C", "tie", 1)],
}


@pytest.mark.parametrize("name", sorted(UNBOUNDED))
def test_ties_without_a_finite_nu_give_no_strengths(name):
    r = bradley_terry(*_expand(UNBOUNDED[name]), B=0)
    assert r.connected
    assert r.nu is None and set(r.log_strength) == {None}, name
    assert any("tie parameter has no finite estimate" in n for n in r.notes)


@pytest.mark.parametrize("name", sorted(BOUNDED))
def test_ties_with_a_finite_nu_are_fitted_like_the_reference(name):
    r = bradley_terry(*_expand(BOUNDED[name]), B=0)
    idx = {p: k for k, p in enumerate(r.players)}
    rows = []  # one cluster: every comparison k times, the lower index first
    for x, y, o, k in BOUNDED[name]:
        i, j = idx[x], idx[y]
        rows += [(i, j, o) if i < j else (j, i, FLIP[o])] * k
    ref, nu, ll = _ml(_resample_counts([rows], [1]), len(r.players), True)
    assert r.converged, name
    np.testing.assert_allclose(r.log_strength, ref, atol=2e-6, err_msg=name)
    assert r.nu == pytest.approx(nu, abs=1e-5)
    assert r.log_likelihood == pytest.approx(ll, abs=1e-8)


# --- the Newton iteration ---------------------------------------------------------------------

# A beat B 3 times and lost once, B beat C twice and lost twice, A beat C 4 times, with ties
COUNTS = np.array([[[3.0, 1.0, 2.0], [4.0, 0.0, 1.0], [2.0, 2.0, 3.0]]])  # (1, pairs, 3)
PAIRS = np.array([[0, 1], [0, 2], [1, 2]])
FREE = np.array([False, True, True])


COUNTS_BY_PAIR = {tuple(p): tuple(c) for p, c in zip(PAIRS.tolist(), COUNTS[0], strict=True)}


def _ll_ref(x, ties):
    """Davidson's log-likelihood of COUNTS, x = (β_B, β_C[, log ν]), β_A = 0; without ν a tie
    counts as half a win and half a loss."""
    return _davidson_ll([0.0, x[0], x[1]], math.exp(x[2]) if ties else 0.0, COUNTS_BY_PAIR,
                        half_ties=not ties)


@pytest.mark.parametrize("ties", [True, False])
def test_one_step_is_a_newton_step_on_the_likelihood(ties):
    # from a start near the maximum, one iteration moves by -H⁻¹ g, with the gradient and
    # the Hessian of the likelihood taken here by central differences (h = 1e-4: errors of
    # order h², far below the tolerance)
    x0 = np.array([-0.2, -1.0, 0.1])[: 3 if ties else 2]
    h = 1e-4
    k = len(x0)
    eye = np.eye(k) * h
    g = np.array([(_ll_ref(x0 + e, ties) - _ll_ref(x0 - e, ties)) / (2 * h) for e in eye])
    H = np.array([[(_ll_ref(x0 + a + b, ties) - _ll_ref(x0 + a - b, ties)
                    - _ll_ref(x0 - a + b, ties) + _ll_ref(x0 - a - b, ties)) / (4 * h * h)
                   for b in eye] for a in eye])
    want = x0 + np.linalg.solve(-H, g)
    assert _ll_ref(want, ties) > _ll_ref(x0, ties)  # a full step: no halving
    start = (np.array([0.0, x0[0], x0[1]]), x0[2] if ties else 0.0)
    beta, theta, conv, it = fit_weighted(COUNTS, PAIRS, 3, FREE, ties=ties, max_iter=1,
                                         start=start)
    assert it == 1 and not conv[0]
    np.testing.assert_allclose(beta[0, 1:], want[:2], atol=1e-6)
    assert beta[0, 0] == 0.0
    if ties:
        assert theta[0] == pytest.approx(want[2], abs=1e-6)


def test_iterations_count_the_newton_steps_the_fit_needed():
    # the reported count is the number of steps: allowed that many the fit converges, allowed
    # one fewer it does not; allowed none, it takes none
    for ties in (True, False):
        _, _, conv, it = fit_weighted(COUNTS, PAIRS, 3, FREE, ties=ties)
        assert conv[0] and 3 <= it < 10
        _, _, conv_k, it_k = fit_weighted(COUNTS, PAIRS, 3, FREE, ties=ties, max_iter=it)
        _, _, conv_less, _ = fit_weighted(COUNTS, PAIRS, 3, FREE, ties=ties, max_iter=it - 1)
        assert conv_k[0] and it_k == it and not conv_less[0]
    beta, _, conv, it = fit_weighted(COUNTS, PAIRS, 3, FREE, ties=True, max_iter=0)
    assert it == 0 and not conv[0] and not beta.any()


def test_one_step_from_zero_without_ties_by_hand():
    # two players, A beat B 6 times and lost twice; B is the reference, A free. At β = 0:
    # ℓ'(β_A) = (w - l)/2 = 2 and ℓ'' = -n/4 = -2 (s = β_A/2, ℓ = (w-l)s - n log(2 cosh s)),
    # so one Newton step lands on β_A = 1 (ℓ rises from -8 ln 2 to 2 - 8 ln(2 cosh ½)),
    # short of the maximum ln 3
    counts = np.array([[[6.0, 2.0, 0.0]]])
    beta, _, conv, it = fit_weighted(counts, np.array([[0, 1]]), 2, np.array([True, False]),
                                     ties=False, max_iter=1)
    assert it == 1 and not conv[0]
    assert beta[0].tolist() == pytest.approx([1.0, 0.0], abs=1e-12)


def test_a_singular_system_is_solved_by_least_squares():
    # C is estimated but was never compared: its row of the Hessian is zero, the system
    # singular; least squares leaves C where it started and fits A against B: β_B = -ln(3)
    # with A (the reference) at 0, A having beaten B 6 times to 2
    counts = np.array([[[6.0, 2.0, 0.0], [0.0, 0.0, 0.0]]])
    beta, _, conv, _ = fit_weighted(counts, np.array([[0, 1], [0, 2]]), 3,
                                    np.array([False, True, True]), ties=False)
    assert conv[0]
    assert beta[0].tolist() == pytest.approx([0.0, -math.log(3), 0.0], abs=1e-9)


def test_kendall_tau_b_of_one_pair():
    # one untied pair in each ranking: τ_b = ±1 (the denominator is √(1·1) = 1)
    assert kendall_tau_b(np.array([[1.0, 2.0]]), np.array([[3.0, 5.0]]))[0] == 1.0
    assert kendall_tau_b(np.array([[1.0, 2.0]]), np.array([[5.0, 3.0]]))[0] == -1.0


def test_step_halving_keeps_the_likelihood_from_falling():
    # two players, A (free) beat B (held at 0) 6 times and lost twice, started far off at
    # β_A = -10. With s = β_A / 2, ℓ = (w - l) s - n log(2 cosh s), so ℓ' = (w - l)/2 -
    # (n/2) tanh s and ℓ'' = -(n/4) sech² s: there the curvature is tiny and the Newton step
    # is about 16,500, which overshoots; it is halved until ℓ does not fall (the first such
    # point after nine halvings is β_A ≈ 22.3, which overshoots the other way, and so on)
    w, ls = 6.0, 2.0
    n = w + ls

    def ll(x):
        s = x / 2
        return (w - ls) * s - n * (abs(s) + math.log1p(math.exp(-2 * abs(s))))

    x = -10.0
    for k in (1, 2, 3):
        s = x / 2
        step = ((w - ls) / 2 - n / 2 * math.tanh(s)) / (n / 4 / math.cosh(s) ** 2)
        scale = 1.0
        while ll(x + scale * step) < ll(x):
            scale /= 2
        x += scale * step
        beta, _, conv, it = fit_weighted(np.array([[[w, ls, 0.0]]]), np.array([[0, 1]]), 2,
                                         np.array([True, False]), ties=False, max_iter=k,
                                         start=(np.array([-10.0, 0.0]), 0.0))
        assert it == k and not conv[0]
        assert beta[0, 0] == pytest.approx(x, rel=1e-9), k
        if k == 1:
            assert 22 < x < 23  # -10 + 16,520 / 2⁹



def test_each_data_set_converges_on_its_own():
    # a split 4:4 is at its maximum from the start (β = 0): converged after one step; 6:2
    # needs several. Allowed two steps, the first has converged and the second not.
    counts = np.array([[[4.0, 4.0, 0.0]], [[6.0, 2.0, 0.0]]])
    beta, _, conv, it = fit_weighted(counts, np.array([[0, 1]]), 2, np.array([True, False]),
                                     ties=False, max_iter=2)
    assert conv.tolist() == [True, False] and it == 2
    assert beta[0].tolist() == [0.0, 0.0]


def test_nothing_to_estimate_converges_at_once():
    beta, _, conv, it = fit_weighted(np.array([[[6.0, 2.0, 0.0]]]), np.array([[0, 1]]), 2,
                                     np.array([False, False]), ties=False)
    assert conv[0] and it == 1 and not beta.any()


def test_a_looser_tolerance_stops_earlier():
    a, b, o = _expand([("A", "B", "a", 3), ("A", "B", "b", 1)])
    tight, loose = bradley_terry(a, b, o, B=0), bradley_terry(a, b, o, B=0, tol=0.1)
    assert tight.converged and loose.converged and loose.iterations < tight.iterations
    assert tight.log_strength[0] == pytest.approx(math.log(3) / 2, abs=1e-10)


# --- groups -----------------------------------------------------------------------------------

def test_a_chain_of_single_wins_is_ranked_without_strengths():
    # A beat B once, B beat C once: three groups of one, each never lost to the next, so a
    # total order (ranks 1, 2, 3) but no strength and no interval for anyone
    r = bradley_terry(["A", "B"], ["B", "C"], ["a", "a"], B=0)
    assert r.groups == (("A",), ("B",), ("C",)) and r.rank == (1, 2, 3)
    assert set(r.log_strength) == {None}
    assert [(x.above, x.below, x.kind) for x in r.relations] == [
        (("A",), ("B",), "dominates"), (("B",), ("C",), "dominates")]


def test_a_single_win_of_the_second_player_orders_the_groups():
    # B beat A once (A is the pair's first player): {B} above {A}
    r = bradley_terry(["A"], ["B"], ["b"], B=0)
    assert r.groups == (("B",), ("A",)) and r.rank == (2, 1)
    assert [(x.above, x.below, x.kind) for x in r.relations] == [(("B",), ("A",), "dominates")]


def test_a_group_above_a_model_it_beat():
    # A and B split their games (one group), B beat C twice: {A, B} above {C}
    a, b, o = _expand([("A", "B", "a", 1), ("A", "B", "b", 1), ("B", "C", "a", 2)])
    r = bradley_terry(a, b, o, B=0)
    assert r.groups == (("A", "B"), ("C",))
    assert r.rank[2] == 3 and sorted(r.rank[:2]) == [1, 2]
    assert [(x.above, x.below, x.kind) for x in r.relations] == [
        (("A", "B"), ("C",), "dominates")]


def test_groups_that_are_not_ordered_are_listed_in_player_order():
    # A beat C; B and D were never compared with anyone. A has never lost, B and D neither:
    # after A, the groups ready to be listed are B, C and D, listed in the players' order
    r = bradley_terry(["A"], ["C"], ["a"], players=["A", "B", "C", "D"], B=0)
    assert r.groups == (("A",), ("B",), ("C",), ("D",))
    assert r.rank == (None,) * 4
    assert [(x.above, x.below, x.kind) for x in r.relations] == [
        (("A",), ("B",), "never compared"), (("A",), ("C",), "dominates"),
        (("A",), ("D",), "never compared"), (("B",), ("C",), "never compared"),
        (("B",), ("D",), "never compared"), (("C",), ("D",), "never compared")]


def test_no_comparisons_at_all():
    r = bradley_terry([], [], [], B=0)
    assert (r.players, r.groups, r.rank, r.n) == ((), (), (), 0)
    # only a comparison of a model with itself: nothing left to fit
    r = bradley_terry(["A"], ["A"], ["a"], players=["A", "B"], B=10)
    assert r.n == 0 and r.dropped_self == 1 and r.log_strength == (None, None)
    assert r.groups == (("A",), ("B",)) and r.n_boot_valid == 0 and r.n_scenarios == 0


def test_weights_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match=r"weights must be \(B, clusters\)"):
        _fit_clusters(TWO, [[1, 1, 1, 1, 1]])
    with pytest.raises(ValueError, match=r"weights must be \(B, clusters\)"):
        _fit_clusters(TWO, [1, 1, 1, 1])


def test_a_model_above_a_group_leaves_the_group_s_resamples_as_they_were():
    # the cycle of CYCLE plus D, who beat A in every scenario: {D} (never lost) is a group of
    # its own above {A, B, C}; the resamples of {A, B, C} are those of the cycle alone, and
    # D never has a strength
    clusters = [c + [(0, 3, "b")] for c in CYCLE]
    W = [[1, 1, 1, 1], [2, 1, 1, 0], [2, 0, 1, 1], [1, 1, 0, 1], [0, 1, 1, 2]]
    r = _fit_clusters(clusters, W, max_iter=1000)
    assert r.groups == (("D",), ("A", "B", "C")) and r.rank[3] == 1
    for row, w in zip(r.boot, W, strict=True):
        assert np.isnan(row[3])
        if w in ([2, 0, 1, 1], [0, 1, 1, 2]):
            assert np.isnan(row).all(), w
        else:
            ref, _, _ = _ml(_resample_counts(CYCLE, w), 3, True)
            np.testing.assert_allclose(row[:3], ref, atol=2e-6, err_msg=str(w))


def test_a_resample_without_a_pair_can_leave_nu_unbounded():
    # A beat and tied B, B beat and tied C (one scenario each); A and C split two games in a
    # third. Without the third (w = [1, 1, 0]), x = (2, 1, 0) is level for every pair that was
    # compared (δ_AB = δ_BC = 1): ν runs off. With it A and C won both ways: finite.
    clusters = [[(0, 1, "a"), (0, 1, "tie")], [(1, 2, "a"), (1, 2, "tie")],
                [(0, 2, "a"), (0, 2, "b")]]
    W = [[1, 1, 0], [1, 1, 1], [2, 1, 1]]
    r = _fit_clusters(clusters, W, max_iter=1000)
    assert np.isnan(r.boot[0]).all()
    for row, w in zip(r.boot[1:], W[1:], strict=True):
        ref, _, _ = _ml(_resample_counts(clusters, w), 3, True)
        np.testing.assert_allclose(row, ref, atol=2e-6)
    assert r.n_boot_valid == 2


def test_balanced_wins_and_ties_by_hand():
    # A and B each won once and tied once: e^{β_A - β_B} = w / l = 1 and ν = t / √(w l) = 1
    r = bradley_terry(["A"] * 3, ["B"] * 3, ["a", "b", "tie"], B=0)
    assert r.log_strength == pytest.approx((0.0, 0.0), abs=1e-12)
    assert r.nu == pytest.approx(1.0, abs=1e-9) and r.rank == (1, 2)
    # the defaults: 1,000 resamples with seed 0, and no resampling here: no draws kept
    assert (r.B, r.seed, r.boot, r.n_scenarios) == (0, 0, None, 3)
    d = bradley_terry(["A"] * 3, ["B"] * 3, ["a", "b", "tie"])
    assert (d.B, d.seed, d.ci) == (1000, 0, 0.95)


def test_one_scenario_resamples_to_itself():
    a, b, o = _expand([("A", "B", "a", 3), ("A", "B", "b", 1)])
    r = bradley_terry(a, b, o, clusters=["s"] * 4, B=5)
    assert r.n_scenarios == 1 and r.n_boot_valid == 5
    assert r.low[0] == pytest.approx(math.log(3) / 2) and r.high[0] == pytest.approx(r.low[0])
    assert not any("bootstrap resamples" in n for n in r.notes)


def test_a_fit_that_is_not_estimable_neither_converged_nor_iterated():
    r = bradley_terry(["A", "B"], ["B", "C"], ["tie", "tie"], B=0)
    assert (r.converged, r.iterations, r.log_likelihood) == (False, 0, None)
    assert not any("did not converge" in n for n in r.notes)


def test_bad_input_names_what_is_wrong():
    with pytest.raises(ValueError, match=r"not \['left'\]"):
        bradley_terry(["A"], ["B"], ["left"])
    with pytest.raises(ValueError, match=r"players not listed: \['B'\]"):
        bradley_terry(["A"], ["B"], ["a"], players=["A"])
    with pytest.raises(ValueError, match=r"clusters not in cluster_levels: \['s2'\]"):
        bradley_terry(["A", "A"], ["B", "B"], ["a", "b"], clusters=["s1", "s2"],
                      cluster_levels=["s1"])


def test_players_are_sorted_by_their_names_as_text():
    r = bradley_terry([1, 2], [10, 1], ["a", "b"], B=0)
    assert r.players == (1, 10, 2)


def test_ties_are_counted_for_both_players():
    r = bradley_terry(["A", "A", "B"], ["B", "B", "A"], ["tie", "a", "tie"], B=0)
    assert r.ties == ((0, 2), (2, 0)) and r.wins == ((0, 1), (0, 0))


def test_intervals_count_the_resamples_without_an_estimate_beyond_each_bound():
    """The percentile interval over all B resamples with those lacking an estimate put
    beyond each bound: numpy's linear percentile when none lacks one; with one of 41, the
    extremes of the other 40 (at B = 41 the 2.5% and 97.5% positions are 1 and 39); with two,
    the lower bound is theirs to decide: none."""
    from analysis.bradley_terry import _percentiles

    rng = np.random.default_rng(5)
    full = rng.normal(size=(200, 3))
    low, high, n = _percentiles(full, 0.95, 3)
    np.testing.assert_allclose(low, np.quantile(full, 0.025, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, np.quantile(full, 0.975, axis=0), rtol=0, atol=1e-12)
    assert n == 200
    boot = np.column_stack([np.arange(41.0), -np.arange(41.0)])
    rng.shuffle(boot)
    one = boot.copy()
    one[np.argmax(one[:, 0] == 20)] = np.nan  # a middle resample without an estimate
    low, high, n = _percentiles(one, 0.95, 2)
    assert n == 40
    np.testing.assert_allclose([*low, *high], [0, -40, 40, 0], rtol=0, atol=1e-9)
    two = one.copy()
    two[np.argmax(two[:, 0] == 7)] = np.nan
    low, high, n = _percentiles(two, 0.95, 2)
    assert n == 39 and np.isnan(low).all() and np.isnan(high).all()
    # at 90% the tail position is 2: two resamples beyond each bound still leave a bound
    low, high, _ = _percentiles(two, 0.90, 2)
    np.testing.assert_allclose([*low, *high], [0, -40, 40, 0], rtol=0, atol=1e-9)
