"""analysis/ppi.py against the reference implementation ``ppi-python`` (Angelopoulos et al.;
``ppi_py.ppi_mean_pointestimate`` and ``ppi_mean_ci``, a dev-only dependency), against a
hand-worked case, and the active-inference pieces against their definitions."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import ppi_py
import pytest
from scipy.stats import norm

from analysis.ppi import (
    active_mean,
    allocate_budget,
    classical_mean,
    inclusion_probabilities,
    labelled_for_halfwidth,
    labelling_probability,
    ppi_mean,
    systematic_sample,
    tuned_lambda,
)


def _fixed(seed: int, n: int, N: int, bias: float):
    rng = np.random.default_rng(seed)
    q = rng.normal(3, 1, n + N)
    y = np.clip(np.rint(q + rng.normal(0, 0.5, n + N)), 1, 5)
    yhat = np.clip(np.rint(q + bias + rng.normal(0, 0.7, n + N)), 1, 5)
    return y[:n], yhat[:n], yhat[n:]


@pytest.mark.parametrize("seed,n,N,bias", [(1, 40, 160, 0.9), (2, 12, 500, -0.4),
                                           (3, 200, 50, 0.0)])
def test_ppi_plus_plus_equals_ppi_python(seed, n, N, bias):
    y, yh, yu = _fixed(seed, n, N, bias)
    ref_est = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, yh, yu)).ravel()[0])
    # ppi_py's default alpha = 0.1 is a 90% interval
    lo90, hi90 = (float(np.asarray(v).ravel()[0]) for v in ppi_py.ppi_mean_ci(y, yh, yu))
    lo95, hi95 = (float(np.asarray(v).ravel()[0])
                  for v in ppi_py.ppi_mean_ci(y, yh, yu, alpha=0.05))
    r90, r95 = ppi_mean(y, yh, yu, level=0.90), ppi_mean(y, yh, yu)
    assert r95.estimate == pytest.approx(ref_est, abs=1e-9)
    assert (r90.low, r90.high) == pytest.approx((lo90, hi90), abs=1e-9)
    assert (r95.low, r95.high) == pytest.approx((lo95, hi95), abs=1e-9)
    assert r95.method == "ppi++" and 0 < r95.lam < 1


def test_plain_ppi_and_lambda_zero_equal_ppi_python():
    y, yh, yu = _fixed(4, 30, 120, 0.7)
    for lam in (1.0, 0.0, 0.35):
        est = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, yh, yu, lam=lam)).ravel()[0])
        lo, hi = (float(np.asarray(v).ravel()[0])
                  for v in ppi_py.ppi_mean_ci(y, yh, yu, alpha=0.05, lam=lam))
        r = ppi_mean(y, yh, yu, lam=lam)
        assert (r.estimate, r.low, r.high) == pytest.approx((est, lo, hi), abs=1e-9)
    # lambda = 0 is the classical interval of the humans alone (same normal form, ddof 0)
    c = classical_mean(y)
    assert (c.estimate, c.low, c.high) == pytest.approx(
        (ppi_mean(y, yh, yu, lam=0).estimate, ppi_mean(y, yh, yu, lam=0).low,
         ppi_mean(y, yh, yu, lam=0).high), abs=1e-12)


def test_hand_worked_tiny_case():
    # Y = [3, 4, 5], Yhat = [2, 4, 4], Yhat_unlabelled = [3, 5, 4, 4]; n = 3, N = 4.
    # mean Y = 4, mean Yhat = 10/3.
    # Cov(Y, Yhat) over n = (1/3)[(-1)(-4/3) + 0(2/3) + (1)(2/3)] = 2/3.
    # Var(Yhat) over all 7 judge values [2,4,4,3,5,4,4] (mean 26/7), ddof 1:
    #   (144 + 4 + 4 + 25 + 81 + 4 + 4) / 49 / 6 = 266/294 = 19/21.
    # lambda = (2/3) / ((1 + 3/4)(19/21)) = (2/3) / (133/84) = 8/19.
    # theta = 8/19 * 4 + mean(Y - 8/19 Yhat) = 4 + (8/19)(4 - 10/3) = 4 + 16/57 = 244/57.
    # se^2 = lambda^2 Var0(Yhat_u)/N + Var0(Y - lambda Yhat)/n
    #      = (64/361)(1/2)/4 + [(-25)^2 + (-16)^2 + 41^2]/57^2/3/3
    #      = 8/361 + 854/9747 = 216/9747 + 854/9747 = 1070/9747.
    lam = F(2, 3) / ((1 + F(3, 4)) * F(19, 21))
    assert lam == F(8, 19)
    theta, se2 = F(244, 57), F(1070, 9747)
    r = ppi_mean([3, 4, 5], [2, 4, 4], [3, 5, 4, 4])
    assert r.lam == pytest.approx(float(lam), abs=1e-12)
    assert r.estimate == pytest.approx(float(theta), abs=1e-12)
    assert r.se == pytest.approx(float(se2) ** 0.5, abs=1e-12)
    half = 1.959963984540054 * float(se2) ** 0.5
    assert (r.low, r.high) == pytest.approx((float(theta) - half, float(theta) + half),
                                            abs=1e-12)
    assert tuned_lambda([3, 4, 5], [2, 4, 4], [3, 5, 4, 4]) == pytest.approx(8 / 19)
    # plain PPI (lambda = 1) on the same data: 4 + (4 - 10/3) = 14/3, not 244/57
    assert ppi_mean([3, 4, 5], [2, 4, 4], [3, 5, 4, 4], lam=1).estimate == \
        pytest.approx(14 / 3, abs=1e-12)


def test_a_constant_judge_gives_lambda_zero_and_the_human_mean():
    r = ppi_mean([1, 2, 4, 5], [3, 3, 3, 3], [3, 3, 3])
    assert r.lam == 0 and r.constant_judge
    assert r.estimate == pytest.approx(3.0)
    assert r.se == pytest.approx(classical_mean([1, 2, 4, 5]).se)


def test_bad_input_is_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="paired"):
        ppi_mean([1, 2, 3], [1, 2], [1])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([1, 2, np.nan], [1, 2, 3], [1])
    with pytest.raises(ValueError, match="level"):
        ppi_mean([1, 2, 3], [1, 2, 3], [1], level=95)


def test_active_mean_with_uniform_probabilities_is_ppi_over_all_items():
    # the form: lambda * mean(judge on all items) + mean(human - lambda judge) on the
    # rated items, when every item had probability n/M of being rated and n were
    rng = np.random.default_rng(5)
    M, n = 50, 10
    yh = rng.normal(3, 1, M)
    y = yh + rng.normal(0.5, 0.4, M)
    lab = np.zeros(M, bool)
    lab[rng.choice(M, n, replace=False)] = True
    for lam in (1.0, 0.6):
        r = active_mean(yh, np.where(lab, y, np.nan), lab, np.full(M, n / M), lam=lam)
        want = lam * yh.mean() + (y[lab] - lam * yh[lab]).mean()
        assert r.estimate == pytest.approx(want, abs=1e-12)
    # tuned: the offset cancels in the estimate, so any lambda gives this form
    t = active_mean(yh, np.where(lab, y, np.nan), lab, np.full(M, n / M))
    assert t.estimate == pytest.approx(t.lam * yh.mean() + (y[lab] - t.lam * yh[lab]).mean(),
                                       abs=1e-9)
    # lambda = 0 with unequal probabilities is Horvitz–Thompson: sum(y / pi) / M
    p = np.linspace(0.1, 0.9, M)
    h = active_mean(yh, np.where(lab, y, np.nan), lab, p, lam=0)
    assert h.estimate == pytest.approx((y[lab] / p[lab]).sum() / M, abs=1e-12)


def test_active_mean_is_unbiased_under_unequal_probabilities():
    # items whose judge is unsure (here: the weaker replies) are picked more often; the
    # weighted estimate still centres on the truth (mean over 1500 draws within 3 standard
    # errors of the true mean), where the plain mean of the rated items does not
    rng = np.random.default_rng(6)
    M = 200
    unsure = rng.random(M) < 0.3
    q = rng.normal(3, 1, M) - 1.0 * unsure
    yh = q + 0.8 + rng.normal(0, 1, M) * np.where(unsure, 1.5, 0.1)
    y = q + rng.normal(0, 0.3, M)
    p = inclusion_probabilities(np.where(unsure, 3.0, 1.0), 40)
    ests, naive = [], []
    for _ in range(1500):
        lab = np.zeros(M, bool)
        lab[systematic_sample(p, rng)] = True
        ests.append(active_mean(yh, np.where(lab, y, np.nan), lab, p,
                                strata=unsure.astype(int)).estimate)
        naive.append(y[lab].mean())
    ests = np.array(ests)
    assert abs(ests.mean() - y.mean()) < 3 * ests.std() / np.sqrt(ests.size)
    assert np.mean(naive) < y.mean() - 0.15  # unsure (weaker) items over-represented


def test_systematic_sample_has_the_asked_inclusion_probabilities():
    p = np.array([0.9, 0.5, 0.3, 0.3, 0.6, 0.4, 1.0, 0.0])  # sums to 4
    rng = np.random.default_rng(7)
    counts = np.zeros(p.size)
    for _ in range(20000):
        s = systematic_sample(p, rng)
        assert s.size == 4
        counts[s] += 1
    # binomial SE at most 0.0035: 4 SE
    assert np.abs(counts / 20000 - p).max() < 0.014
    assert counts[-1] == 0 and counts[6] == 20000


def _total_se(rated, q, s2, jv, x):
    return sum(float(np.sqrt(1 / (r / qq + xx / ss) + c)) if r / qq + xx / ss > 0 else np.inf
               for r, qq, ss, c, xx in zip(rated, q, s2, jv, x, strict=True))


def test_allocation_minimises_the_sum_of_the_models_standard_errors_not_a_pooled_variance():
    # the goal is every model's CI: min sum_m s_m / sqrt(n_m) subject to sum n_m = 140 gives
    # (Lagrange) n_m proportional to s_m^(2/3): s = 1, 8, 27 -> 1 : 4 : 9 -> 10, 40, 90
    got = allocate_budget([0, 0, 0], [1, 1, 1], [1, 64, 729], [0, 0, 0], [999] * 3, 140)
    assert got.tolist() == [10, 40, 90]
    # Neyman (n proportional to s: 1 : 8 : 27 -> about 4, 31, 105) minimises the variance of
    # the pooled mean instead; it gives a larger sum of standard errors here
    assert _total_se([0] * 3, [1] * 3, [1, 64, 729], [0] * 3, [4, 31, 105]) > \
        _total_se([0] * 3, [1] * 3, [1, 64, 729], [0] * 3, got) + 0.05
    # equal spreads: an equal split
    assert allocate_budget([0] * 3, [1] * 3, [2, 2, 2], [0] * 3, [99] * 3, 30).tolist() == \
        [10, 10, 10]


def test_allocation_is_the_integer_optimum_with_earlier_ratings_judge_part_and_caps():
    rng = np.random.default_rng(3)
    for _ in range(30):
        rated = rng.integers(0, 6, 3)
        q = rng.uniform(0.1, 1.0, 3)
        s2 = q * rng.uniform(0.3, 1.0, 3)
        jv = rng.uniform(0, 0.01, 3)
        caps = rng.integers(2, 12, 3)
        budget = int(rng.integers(1, min(15, caps.sum()) + 1))
        got = allocate_budget(rated, q, s2, jv, caps, budget)
        assert got.sum() == budget and np.all(got <= caps)
        best = min(_total_se(rated, q, s2, jv, (a, b, budget - a - b))
                   for a in range(caps[0] + 1) for b in range(caps[1] + 1)
                   if 0 <= budget - a - b <= caps[2])
        assert _total_se(rated, q, s2, jv, got) == pytest.approx(best, rel=1e-12)
    # items rated before count: the model that has 50 already gets less of the new budget
    a = allocate_budget([50, 0], [1, 1], [1, 1], [0, 0], [999, 999], 60)
    assert a[0] < a[1]
    # a model with nothing left gets nothing; more budget than items: every item
    assert allocate_budget([0, 0], [1, 1], [1, 9], [0, 0], [0, 5], 3).tolist() == [0, 3]
    assert allocate_budget([0, 0], [1, 1], [1, 1], [0, 0], [3, 4], 50).tolist() == [3, 4]


def test_inclusion_probabilities_cap_at_one_and_keep_the_total():
    p = inclusion_probabilities([1, 1, 1, 1, 20], 3)
    assert p.sum() == pytest.approx(3) and p[-1] == 1.0
    assert p[:4] == pytest.approx([0.5] * 4)
    with pytest.raises(ValueError, match="positive"):
        inclusion_probabilities([1, 0], 1)


def test_labelling_probability_combines_rounds():
    # 1 - (1 - 0.1)(1 - 0.5)(1 - 0.2) = 1 - 0.36 = 0.64
    assert labelling_probability(0.1, [np.array([0.5]), np.array([0.2])])[0] == \
        pytest.approx(0.64)


def test_labelled_for_halfwidth_matches_the_variance_formula():
    z = norm.ppf(0.975)
    # a useless judge: n = ceil((z / 0.1)^2 * Var(Y)) = ceil(384.15) = 385
    assert labelled_for_halfwidth(1.0, 1.0, 0.0, 100_000, 0.1) == 385
    # a judge with rho = 0.8 and many judge-only items needs about (1 - rho^2) as many
    n = labelled_for_halfwidth(1.0, 1.0, 0.8, 1_000_000, 0.1)
    assert n == pytest.approx(385 * 0.36, rel=0.01)
    # check the returned n meets the target and n - 1 does not
    def var(n, total=1_000_000, vy=1.0, vh=1.0, c=0.8):
        N = total - n
        lam = min(max(c / ((1 + n / N) * vh), 0), 1)
        return lam ** 2 * vh / N + (vy - 2 * lam * c + lam ** 2 * vh) / n
    assert z * var(n) ** 0.5 <= 0.1 < z * var(n - 1) ** 0.5
    assert labelled_for_halfwidth(1.0, 1.0, 0.0, 200, 0.1) is None  # not even all 200


@pytest.mark.parametrize("var_y,var_yhat,cov,total,halfwidth,level", [
    (1.0, 0.8, 0.6, 3000, 0.05, 0.95),    # lambda inside (0, 1)
    (1.0, 0.5, 0.7, 5000, 0.05, 0.95),    # lambda clipped at 1 while n / N is small
    (1.0, 1.0, -0.3, 2000, 0.08, 0.95),   # a judge against the humans: lambda 0
    (2.0, 1.5, 1.4, 500, 0.15, 0.90),     # another level
    (1.0, 1.0, 0.5, 420, 0.1, 0.95),      # close to needing every item
    (0.3, 0.2, 0.1, 40, 0.2, 0.95),       # small study
    (1.0, 1.0, 0.9, 1000, 2.0, 0.95),     # two items are enough
    (1.0, 1.0, 0.5, 2, 2.0, 0.95),        # two items in all, both rated
    (1.0, 1.0, 0.0, 200, 0.1, 0.95),      # not even every item: None
])
def test_labelled_for_halfwidth_against_a_scan_over_every_n(var_y, var_yhat, cov, total,
                                                             halfwidth, level):
    """The smallest n in 2..total whose PPI++ variance, minimised over lambda in [0, 1] by a
    bounded scalar search (not the closed form), gives z * sd <= halfwidth (Angelopoulos,
    Duchi & Zrnic 2023, PPI++, the mean's variance lambda^2 Var(Yhat)/N + Var(Y - lambda
    Yhat)/n with N = total - n judge-only items); None when no n does."""
    from scipy.optimize import minimize_scalar

    z = norm.ppf(0.5 + level / 2)

    def var(n):
        big_n = total - n
        if big_n == 0:
            return var_y / n
        def f(lam):
            return lam ** 2 * var_yhat / big_n + (var_y - 2 * lam * cov
                                                  + lam ** 2 * var_yhat) / n
        return minimize_scalar(f, bounds=(0.0, 1.0), method="bounded",
                               options={"xatol": 1e-12}).fun

    want = next((n for n in range(2, total + 1) if z * var(n) ** 0.5 <= halfwidth), None)
    assert labelled_for_halfwidth(var_y, var_yhat, cov, total, halfwidth, level=level) == want


def _active_design(seed: int, slopes):
    """Three strata of 200 items, probabilities 0.15-0.85, labels drawn with them; y = slope *
    yhat + noise per stratum; the last stratum's judge value is constant."""
    rng = np.random.default_rng(seed)
    st = np.repeat([0, 1, 2], 200)
    yhat = rng.normal(3, 1, 600)
    yhat[st == 2] = 2.5
    y = np.array([slopes[s] for s in st]) * yhat + rng.normal(0, 0.7, 600) + 0.4 * st
    prob = rng.uniform(0.15, 0.85, 600)
    lab = rng.random(600) < prob
    return yhat, np.where(lab, y, np.nan), lab, prob, st


def _z_var(params, yhat, y, lab, prob, st, keys):
    """The sample variance of Z = Y xi/pi + sum_s (lambda_s Yhat + a_s)(1 - xi/pi) 1[s],
    written out (Zrnic & Candes 2024, the active estimator's summands)."""
    k = len(keys)
    lam, off = params[:k], params[k:]
    xi = lab.astype(float)
    z = np.where(lab, np.nan_to_num(y), 0.0) * xi / prob
    for i, s in enumerate(keys):
        z = z + np.where(st == s, (lam[i] * yhat + off[i]) * (1 - xi / prob), 0.0)
    return float(np.var(z))


def test_active_lambda_minimises_the_summands_variance_by_a_general_optimiser():
    """Interior lambdas: the same lambdas and offsets as L-BFGS-B on the variance written out
    (lambda bounded to [0, 1], offsets free); the constant stratum gets lambda 0. A slope that
    wants lambda above 1 is clipped to exactly 1, and the offsets then minimise the variance
    given the lambdas."""
    from scipy.optimize import minimize

    from analysis.ppi import active_lambda

    yhat, y, lab, prob, st = _active_design(4, (0.6, 0.3, 0.5))
    lam, off = active_lambda(yhat, y, lab, prob, strata=st)
    keys = [0, 1, 2]
    best = minimize(_z_var, np.r_[0.5, 0.5, 0.0, 0.0, 0.0, 0.0],
                    args=(yhat, y, lab, prob, st, keys), method="L-BFGS-B",
                    bounds=[(0, 1)] * 2 + [(0, 0)] + [(None, None)] * 3,
                    options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000})
    assert 0 < lam[0] < 1 and 0 < lam[1] < 1 and lam[2] == 0.0
    assert np.allclose(lam, best.x[:3], atol=1e-5)
    assert _z_var(np.r_[lam, off], yhat, y, lab, prob, st, keys) == pytest.approx(
        best.fun, rel=1e-9)
    # one stratum's lambda clipped at 1: the offsets are the best ones for those lambdas
    yhat, y, lab, prob, st = _active_design(5, (1.8, 0.4, 0.5))
    lam, off = active_lambda(yhat, y, lab, prob, strata=st)
    assert lam[0] == 1.0 and 0 < lam[1] < 1 and lam[2] == 0.0
    given = minimize(lambda a: _z_var(np.r_[lam, a], yhat, y, lab, prob, st, keys),
                     np.zeros(3), method="BFGS", options={"gtol": 1e-12})
    assert np.allclose(off, given.x, atol=1e-5)
    # without strata: one lambda and one offset, the same as a single stratum
    one = active_lambda(yhat, y, lab, prob)
    same = active_lambda(yhat, y, lab, prob, strata=np.full(600, 7))
    assert np.array_equal(one[0], same[0]) and np.array_equal(one[1], same[1])
    assert one[0].shape == (1,)


def test_allocate_budget_of_nothing_and_a_model_without_spread():
    """A budget of 0 is no picks (integers, one per model), not an error; a model whose draw
    has no spread (s2 = 0: its items are all alike) gains nothing from a pick, so the budget
    goes to the other; no active round yet: nothing labelled beyond the first share."""
    none = allocate_budget([3, 4], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [5, 5], 0)
    assert none.tolist() == [0, 0] and none.dtype.kind == "i"
    spread = allocate_budget([5, 5], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [10, 10], 4)
    assert spread.tolist() == [0, 4] and spread.dtype.kind == "i"
    assert labelling_probability(0.3, []).shape == (0,)


@pytest.mark.parametrize("lam,method", [(None, "active ppi++"), (0, "active human"),
                                        (0.5, "active ppi")])
def test_active_mean_field_by_field(lam, method):
    """z_i = g_i + xi_i (y_i - g_i) / pi_i with g = a_s + lambda_s yhat (Zrnic & Candes 2024):
    the estimate is mean(z), its SE sd(z, ddof=1)/sqrt(M), the 90% interval est -/+ z_0.95 SE;
    n and N count the rated and unrated items; lambda is the item-weighted mean over strata."""
    from analysis.ppi import active_lambda

    yhat, y, lab, prob, st = _active_design(6, (0.6, 0.3, 0.5))
    r = active_mean(yhat, y, lab, prob, strata=st, lam=lam, level=0.9)
    if lam is None:
        lams, offs = active_lambda(yhat, y, lab, prob, strata=st)
    else:
        lams, offs = np.full(3, float(lam)), np.zeros(3)
    g = offs[st] + lams[st] * yhat
    z = g + np.where(lab, (np.nan_to_num(y) - g) / prob, 0.0)
    se = np.std(z, ddof=1) / np.sqrt(600)
    assert r.estimate == pytest.approx(z.mean(), abs=1e-12)
    assert r.se == pytest.approx(se, rel=1e-12)
    assert (r.low, r.high) == pytest.approx((z.mean() - norm.ppf(0.95) * se,
                                             z.mean() + norm.ppf(0.95) * se), abs=1e-12)
    assert (r.n, r.N) == (int(lab.sum()), int((~lab).sum())) and r.n != r.N
    assert r.lam == pytest.approx(float(np.mean(lams[st])), abs=1e-15)
    assert r.method == method and r.level == 0.9 and r.constant_judge is False
    flat = active_mean(np.full(600, 3.0), y, lab, prob)
    assert flat.constant_judge is True and flat.lam == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        active_mean(yhat[:4], [1.0, 2.0, 3.0, 4.0], [True, False, False, False], [0.5] * 4)
    assert active_mean(yhat[:2], [1.0, 2.0], [True, True], [1.0, 1.0], lam=0).estimate == 1.5


def test_inclusion_probabilities_for_no_draw_are_zero():
    assert inclusion_probabilities([1.0, 2.0, 3.0], 0).tolist() == [0.0, 0.0, 0.0]
    assert inclusion_probabilities([1.0, 2.0, 3.0], -2).tolist() == [0.0, 0.0, 0.0]
    assert inclusion_probabilities([], 3).shape == (0,)


@pytest.mark.parametrize("call,message", [
    (lambda: ppi_mean([1.0], [1.0], [1.0, 2.0]), "y: needs at least 2 values, got 1"),
    (lambda: ppi_mean([1.0, 2.0], [1.0], [1.0]), "yhat: needs at least 2 values, got 1"),
    (lambda: ppi_mean([1.0, 2.0], [1.0, 2.0], []),
     "yhat_unlabelled: needs at least 1 values, got 0"),
    (lambda: ppi_mean([1.0, 2.0], [1.0, np.nan], [1.0]),
     "yhat: every value must be a finite number"),
    (lambda: tuned_lambda([1.0], [1.0], [1.0, 2.0]), "y: needs at least 2 values, got 1"),
    (lambda: tuned_lambda([1.0, 2.0], [1.0], [1.0]), "yhat: needs at least 2 values, got 1"),
    (lambda: tuned_lambda([1.0, 2.0], [1.0, 2.0], []),
     "yhat_unlabelled: needs at least 1 values, got 0"),
    (lambda: tuned_lambda([np.inf, 2.0], [1.0, 2.0], [1.0]),
     "y: every value must be a finite number"),
    (lambda: classical_mean([3.0]), "values: needs at least 2 values, got 1"),
    (lambda: classical_mean([3.0, np.nan]), "values: every value must be a finite number"),
    (lambda: active_mean([1.0], [1.0], [True], [1.0]), "yhat: needs at least 2 values, got 1"),
])
def test_each_input_check_names_its_argument(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value).startswith(message)


def test_the_records_of_ppi_and_the_classical_mean():
    """n and N as given, the level asked for, the method named by lambda, a judge that varies
    is not constant; the humans-only mean has N = 0 and no lambda."""
    y, yh, yu = [1.0, 2.0, 4.0], [1.5, 2.0, 3.0], [2.0, 3.0, 1.0, 2.5]
    for lam, method in [(1, "ppi"), (0, "human"), (0.5, "ppi (lambda = 0.5)"),
                        (None, "ppi++")]:
        r = ppi_mean(y, yh, yu, lam=lam, level=0.8)
        assert (r.n, r.N, r.method, r.level) == (3, 4, method, 0.8)
        assert r.constant_judge is False
    c = classical_mean([1.0, 2.0, 4.0], level=0.8)
    assert (c.n, c.N, c.lam, c.method, c.level) == (3, 0, None, "human", 0.8)


def test_tuned_lambda_is_clipped_to_zero_and_one():
    """lambda = Cov(Y, Yhat) / ((1 + n/N) Var(Yhat)) (PPI++, Angelopoulos, Duchi & Zrnic
    2023), clipped to [0, 1]: a judge against the humans gets 0, a judge whose values move a
    fifth as much as the humans' gets 1 (unclipped it would be about 5)."""
    yh = [1.0, 2.0, 3.0, 4.0, 5.0, 2.5]
    yu = list(np.linspace(1, 5, 200))
    assert tuned_lambda([-v for v in yh], yh, yu) == 0.0
    assert tuned_lambda([5 * v for v in yh], yh, yu) == 1.0


def test_inclusion_probabilities_cap_in_rounds_and_keep_the_total():
    """Each item's share of n by weight, capped at 1 with the excess passed on until none is
    over (Sarndal, Swensson & Wretman 1992, 3.6): the expected count stays n."""
    assert inclusion_probabilities([2.0], 1).tolist() == [1.0]
    assert inclusion_probabilities([1.0, 3.0], 1).tolist() == [0.25, 0.75]
    assert inclusion_probabilities([1.0, 2.0], 2).tolist() == [1.0, 1.0]
    p = inclusion_probabilities([1.0, 1.0, 1.0, 5.0], 2)  # 5 -> 1.25 at first: capped
    assert p.tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0]) and p.sum() == pytest.approx(2)
    p = inclusion_probabilities([1.0, 1.0, 1.0, 10.0, 40.0], 3)  # two rounds of capping
    assert p.tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0, 1.0])


def test_systematic_sample_refuses_bad_probabilities_and_stays_in_range():
    for bad in ([1.5, 0.5], [-0.1, 0.5]):
        with pytest.raises(ValueError, match="in \\[0, 1\\]"):
            systematic_sample(bad, np.random.default_rng(0))
    for seed in range(30):  # the sum 1.6 rounds to 2: the last point may fall past the end
        picked = systematic_sample([0.8, 0.8], np.random.default_rng(seed))
        assert set(picked.tolist()) <= {0, 1}


def test_probabilities_outside_zero_one_and_a_zero_half_width_are_refused():
    for prob in ([0.0, 0.5, 0.5], [1.5, 0.5, 0.5], [2.5, 0.5, 0.5]):
        with pytest.raises(ValueError, match="probability in \\(0, 1\\]"):
            active_mean([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [True, True, True], prob)
    with pytest.raises(ValueError, match="halfwidth must be positive"):
        labelled_for_halfwidth(1.0, 1.0, 0.5, 100, 0.0)


def test_a_stratum_whose_judge_runs_against_the_humans_gets_lambda_zero():
    # humans 6 - judge on the rated items: the least-squares lambda is negative, clipped to 0;
    # with one stratum and pi = n/M for all, the offset cancels and theta is the rated
    # items' mean, (5 + 3 + 1) / 3 = 3 (a lambda of -1 would give -mean(yhat) + mean(y +
    # yhat) = -3.5 + 6 = 2.5 instead)
    yhat = [1.0, 3.0, 5.0, 5.0, 4.0, 3.0]
    y = [5.0, 3.0, 1.0, np.nan, np.nan, np.nan]
    r = active_mean(yhat, y, [True, True, True, False, False, False], [0.5] * 6)
    assert r.lam == 0.0
    assert r.estimate == pytest.approx(3.0, abs=1e-12)


def test_labelled_for_halfwidth_with_one_item_left_to_the_judge_and_with_a_constant_judge():
    # total 3: two rated leave N = 1 to the judge; vy = vh = 1, cov 0.9: lambda = cov /
    # ((1 + n/N) vh) = 0.3 and Var(2) = 0.3² · 1 / 1 + (1 - 2 · 0.3 · 0.9 + 0.09) / 2 = 0.365,
    # under a target of 0.4 (the humans alone would give 1/2); rating all 3 gives 1/3
    assert labelled_for_halfwidth(1.0, 1.0, 0.9, 3, norm.ppf(0.975) * 0.4 ** 0.5) == 2
    # a judge without variance: the humans alone, z² Var(Y) / h² = 384.1 -> 385
    assert labelled_for_halfwidth(1.0, 0.0, 0.0, 10_000, 0.1) == 385
