"""The plausible bugs of issue 17 that the rest of the suite let through, each pinned on a tiny
case worked by hand and by a reference implementation (the krippendorff package), tightly
enough that the wrong variant fails.

Of the thirteen bugs, one form of one slipped past: `h2h analyze`'s test–retest block computing
alpha at the nominal level whatever the dimension's level (the call in
``analysis.analyze._retest_block``). ``retest_agreement`` itself is pinned at the ordinal
level in test_rater_diagnostics.py; the block of the analysis was only checked for an alpha
that is not None.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest

from analysis.analyze import AnalysisOptions, analyze
from analysis.scales import Scale

THREE = (1.0, 2.0, 3.0)

# --- test–retest alpha at the dimension's level, through analyze() ---------------------------

# Rater x rated items a-d (1, 2, 3, 3) and, as hidden repeats, again (1, 3, 3, 1); rater y rated
# them once. The two occasions are two coders of the four (rater, item) units: pairs (1, 1),
# (2, 3), (3, 3), (3, 1). Coincidences (each unit of two values adds both ordered pairs, weight
# 1 / (2 - 1)): o_11 = 2, o_23 = o_32 = 1, o_33 = 2, o_13 = o_31 = 1; n_1 = 3, n_2 = 1, n_3 = 4,
# n = 8, and alpha = 1 - (n - 1) sum o_ck d_ck / sum n_c n_k d_ck:
#   nominal  d = [c != k]:            D_o = 4,   D_e = 2 (3*1 + 3*4 + 1*4) = 38
#            alpha = 1 - 7 * 4 / 38 = 5 / 19 = 0.2632
#   ordinal  d_12 = ((3 + 1) / 2)^2 = 4, d_23 = ((1 + 4) / 2)^2 = 6.25,
#            d_13 = (3 + 1 + 4 - (3 + 4) / 2)^2 = 20.25:
#            D_o = 2 * 6.25 + 2 * 20.25 = 53,  D_e = 2 (3*1*4 + 3*4*20.25 + 1*4*6.25) = 560
#            alpha = 1 - 7 * 53 / 560 = 189 / 560 = 0.3375
#   interval d = (c - k)^2:           D_o = 2 * 1 + 2 * 4 = 10,  D_e = 2 (3 + 48 + 4) = 110
#            alpha = 1 - 7 * 10 / 110 = 4 / 11 = 0.3636
# (the levels are 0.07 and more apart, so alpha at the wrong level fails by far)
FIRST, SECOND = [1.0, 2.0, 3.0, 3.0], [1.0, 3.0, 3.0, 1.0]
RETEST_ALPHA = {"nominal": 5 / 19, "ordinal": 189 / 560, "interval": 4 / 11}


def _retest_frames() -> tuple[pd.DataFrame, tuple[pd.DataFrame, pd.DataFrame]]:
    rows = [(i, "x", "empathy", s) for i, s in zip("abcd", FIRST, strict=True)]
    rows += [(i, "y", "empathy", s) for i, s in zip("abcd", [2.0, 2.0, 3.0, 1.0], strict=True)]
    ratings = pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])
    first = ratings[ratings["rater"] == "x"]
    return ratings, (first, first.assign(score=SECOND))


@pytest.mark.parametrize("level", ["ordinal", "interval", "nominal"])
def test_analyze_retest_alpha_is_at_the_dimensions_level(level):
    ratings, repeats = _retest_frames()
    res = analyze(ratings, {"empathy": Scale(level, THREE)}, options=AnalysisOptions(B=0),
                  repeats=repeats).to_dict()
    rt = res["dimensions"]["empathy"]["retest"]
    assert rt["n_pairs"] == 4
    assert rt["alpha"] == pytest.approx(RETEST_ALPHA[level], abs=1e-12)
    # the krippendorff package wants coders × units
    assert rt["alpha"] == pytest.approx(
        krippendorff.alpha(np.array([FIRST, SECOND]), level_of_measurement=level,
                           value_domain=list(THREE)), abs=1e-12)

