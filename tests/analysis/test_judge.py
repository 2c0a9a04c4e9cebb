"""Judge–human metrics on constructed judges whose quality is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.ceiling import human_ceiling
from analysis.judge_agreement import aggregate_samples, judge_metrics
from analysis.layout import Ratings
from analysis.options import AnalysisOptions

VALUES = [1.0, 2.0, 3.0, 4.0, 5.0]
NO_BOOT = AnalysisOptions(B=0)


@pytest.fixture(scope="module")
def study():
    rng = np.random.default_rng(11)
    n, k = 240, 5
    latent = rng.normal(3, 1.1, n)
    m = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.9, (n, k))), 1, 5)
    m[rng.random(m.shape) < 0.2] = np.nan
    humans = Ratings(m, tuple(f"i{i}" for i in range(n)), tuple(f"h{j}" for j in range(k)))
    good = np.clip(np.rint(latent), 1, 5)
    lenient = np.clip(good + 1, 1, 5)
    rand = rng.integers(1, 6, n).astype(float)
    return humans, good, lenient, rand


def test_good_judge_beats_the_ceiling_and_passes(study):
    humans, good, _, _ = study
    jm = judge_metrics(humans, good, "ordinal", VALUES, options=NO_BOOT)
    ceiling = human_ceiling(humans.matrix)
    assert jm.metrics["qwk"] > ceiling["qwk"]
    assert jm.metrics["mae"] < ceiling["mae"]
    assert jm.metrics["alpha_with_judge"] > jm.metrics["alpha_humans"]
    assert jm.alt.passed is True and jm.alt.winning_rate >= 0.8
    assert jm.alt.scoring == "neg_rmse" and jm.alt.humans_tested == 5
    conf = np.array(jm.confusion["matrix"])
    assert np.trace(conf) / conf.sum() > 0.5


def test_lenient_judge_shows_its_bias(study):
    humans, _, lenient, _ = study
    m = judge_metrics(humans, lenient, "ordinal", VALUES, options=NO_BOOT).metrics
    assert 0.6 < m["bias"] < 1.1
    ba = m["bland_altman"]
    assert ba["low"] < m["bias"] < ba["high"]
    assert m["within1"] > m["exact"]


def test_random_judge_fails(study):
    humans, _, _, rand = study
    jm = judge_metrics(humans, rand, "ordinal", VALUES, options=NO_BOOT)
    assert abs(jm.metrics["qwk"]) < 0.2
    assert jm.alt.passed is False
    assert jm.metrics["alpha_with_judge"] < jm.metrics["alpha_humans"]


def test_unscored_items_are_counted_not_dropped_silently(study):
    humans, good, _, _ = study
    j = good.copy()
    j[:7] = np.nan
    jm = judge_metrics(humans, j, "ordinal", VALUES, options=NO_BOOT)
    assert jm.metrics["n_items"] == int(np.sum(~np.isnan(humans.matrix).all(axis=1))) - 7
    assert any("7 human-rated items have no judge score" in n for n in jm.notes)


def test_samples_aggregate_to_lower_median_and_self_consistency():
    df = pd.DataFrame({"item": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
                       "sample": [0, 1, 2, 3] * 3,
                       "score": [2, 3, 3, 5, 1, 1, 1, 1, 4, 5, 4, 5]})
    per_item, samples = aggregate_samples(df, "ordinal", ["a", "b", "c", "d"])
    assert per_item[:3].tolist() == [3.0, 1.0, 4.0] and np.isnan(per_item[3])
    assert samples.shape == (4, 4)
    nominal, _ = aggregate_samples(df, "nominal", ["a", "b", "c"])
    assert nominal.tolist() == [3.0, 1.0, 4.0]  # mode; ties (4 vs 5) go to the smaller


def test_human_ceiling_is_leave_one_out(study):
    humans, _, _, _ = study
    ceiling = human_ceiling(humans.matrix)
    assert ceiling["n_humans"] == 5
    assert abs(ceiling["bias"]) < 0.1
    assert 0 < ceiling["qwk"] < 1
