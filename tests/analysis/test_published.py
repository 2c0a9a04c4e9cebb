"""Every coefficient against values published with their data (source in each comment)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from analysis.alpha import alpha_from_matrix
from analysis.chance import cohen_kappa, multi_rater
from analysis.icc import icc_from_matrix
from analysis.layout import counts_matrix

nan = np.nan

# Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability, section C: 4 observers
# (rows) × 12 units (columns), values 1-5, nan = missing. Published: nominal .743, ordinal
# .815, interval .849, ratio .797.
K2011 = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                  [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]])


@pytest.mark.parametrize("level,published", [("nominal", 0.743), ("ordinal", 0.815),
                                             ("interval", 0.849), ("ratio", 0.797)])
def test_krippendorff_2011(level, published):
    ours = alpha_from_matrix(K2011.T, level)  # ours takes units × raters
    assert round(ours, 3) == published
    assert ours == pytest.approx(krippendorff.alpha(K2011, level_of_measurement=level),
                                 abs=1e-12)


def test_shrout_fleiss_1979_six_iccs():
    # Shrout & Fleiss (1979), Table 2 (6 targets × 4 judges) and Table 4 (the six ICCs).
    x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                  [6, 2, 4, 7]], float)
    got = {k: round(v.value, 2) for k, v in icc_from_matrix(x).items()}
    assert got == {"ICC1": 0.17, "ICC2": 0.29, "ICC3": 0.71, "ICC1k": 0.44, "ICC2k": 0.62,
                   "ICC3k": 0.91}
    ci = icc_from_matrix(x)
    # F-based 95% CIs on the same data as printed by R psych::ICC and pingouin's docs.
    assert (round(ci["ICC3"].low, 2), round(ci["ICC3"].high, 2)) == (0.34, 0.95)
    assert (round(ci["ICC2"].low, 2), round(ci["ICC2"].high, 2)) == (0.02, 0.76)
    assert (round(ci["ICC1"].low, 2), round(ci["ICC1"].high, 2)) == (-0.13, 0.72)


# Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological
# Bulletin 76(5), Table 1: 30 patients, 6 psychiatrists, 5 diagnoses (depression, personality
# disorder, schizophrenia, neurosis, other), as counts per patient. Published kappa = .430.
FLEISS_1971 = np.array([
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
    [0, 0, 5, 0, 1], [3, 0, 0, 1, 2], [5, 1, 0, 0, 0], [0, 2, 0, 4, 0], [1, 0, 2, 0, 3],
    [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0], [1, 0, 0, 4, 1],
    [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0], [1, 0, 5, 0, 0], [0, 0, 0, 0, 6]],
    float)


def test_fleiss_1971_kappa():
    assert FLEISS_1971.sum(axis=1).tolist() == [6] * 30
    assert round(multi_rater(FLEISS_1971).fleiss_kappa, 3) == 0.430


def test_fleiss_first_15_patients_irrcac():
    # Gwet's irrCAC package, dataset distrib.6raters (Fleiss 1971, patients 1-15); its README
    # prints Fleiss .4139265, AC1 .4448007, Brennan-Prediger .4388889, percent agreement
    # .5511111; with quadratic weights AC2 .4837438 and BP .4177778.
    c = FLEISS_1971[:15]
    un, quad = multi_rater(c), multi_rater(c, "quadratic")
    assert round(un.fleiss_kappa, 4) == 0.4139
    assert round(un.gwet, 4) == 0.4448
    assert round(un.brennan_prediger, 4) == 0.4389
    assert round(un.percent_agreement, 4) == 0.5511
    assert round(quad.gwet, 4) == 0.4837
    assert round(quad.brennan_prediger, 4) == 0.4178


# Gwet (2014), Handbook of Inter-Rater Reliability 4th ed., p. 120: 12 units × 4 raters on a
# 1-5 scale (irrCAC dataset cac.raw4raters). Printed by irrCAC: percent agreement .8181818,
# AC1 .77544, Fleiss .76117, Brennan-Prediger .77273; quadratic: AC2 .914, BP .90152,
# Fleiss .86494, Krippendorff alpha (quadratic = interval) .84911, unweighted alpha .74342.
RAW4 = np.array([[1, 1, nan, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
                 [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [nan, 5, 5, 5],
                 [nan, nan, 1, 1], [nan, nan, 3, nan]])


def test_gwet_handbook_raw4raters():
    counts = counts_matrix(RAW4, [1, 2, 3, 4, 5])
    un, quad = multi_rater(counts), multi_rater(counts, "quadratic")
    assert round(un.percent_agreement, 4) == 0.8182
    assert round(un.gwet, 4) == 0.7754
    assert round(un.fleiss_kappa, 4) == 0.7612
    assert round(un.brennan_prediger, 4) == 0.7727
    assert round(quad.gwet, 3) == 0.914
    assert round(quad.brennan_prediger, 4) == 0.9015
    assert round(quad.fleiss_kappa, 4) == 0.8649
    assert round(alpha_from_matrix(RAW4, "interval"), 4) == 0.8491
    assert round(alpha_from_matrix(RAW4, "nominal"), 4) == 0.7434


def test_cohen_weighted_gwet_abstractors():
    # Gwet (2014) / irrCAC cont3x3abstractors, 100 items, 3 categories: Cohen's kappa
    # .7964094 unweighted and .8921569 with quadratic weights; AC1 .8493305, AC2 (quadratic)
    # .9402369 (two-rater AC1 = the multi-rater formula with 2 raters).
    t = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
    a = np.repeat(np.arange(3).repeat(3), t.ravel()).astype(float)
    b = np.repeat(np.tile(np.arange(3), 3), t.ravel()).astype(float)
    assert round(cohen_kappa(a, b, [0, 1, 2]), 4) == 0.7964
    assert round(cohen_kappa(a, b, [0, 1, 2], "quadratic"), 4) == 0.8922
    counts = counts_matrix(np.column_stack([a, b]), [0, 1, 2])
    assert round(multi_rater(counts).gwet, 4) == 0.8493
    assert round(multi_rater(counts, "quadratic").gwet, 4) == 0.9402


def test_cohen_weighted_irr_anxiety():
    # R package irr, dataset anxiety, raters 2 and 3 (20 subjects); kappa2() prints
    # unweighted -0.00629, "equal" (linear) 0.146, "squared" (quadratic) 0.252. irr weights by
    # the position among the levels present (1, 2, 3, 4, 6), which is what our positional
    # weights do when that scale is passed.
    r2 = [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4]
    r3 = [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2]
    scale = [1, 2, 3, 4, 6]
    assert round(cohen_kappa(r2, r3, scale), 3) == -0.006
    assert round(cohen_kappa(r2, r3, scale, "linear"), 3) == 0.146
    assert round(cohen_kappa(r2, r3, scale, "quadratic"), 3) == 0.252
