"""Humans against a pairwise judge: combining the judge's two orders, position bias and
consistency, Cohen's κ on a/b/tie beside the humans' own, and Kendall's τ between rankings
refitted on the same scenario resamples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from analysis.arena import (
    arena,
    combine_orders,
    human_comparisons,
    judge_comparisons,
    pairwise_kappas,
    player,
    position_bias,
    ranking_agreement,
    ties_text,
)

MODELS = ["ash", "birch", "cedar", "dogwood"]


def _pairs(n_scen: int = 30) -> list[dict]:
    """Every model pair on every scenario."""
    out, pid = [], 0
    for s in range(n_scen):
        for i in range(4):
            for j in range(i + 1, 4):
                pid += 1
                out.append({"pair_id": pid, "scenario": f"s{s}", "model_a": MODELS[i],
                            "model_b": MODELS[j], "condition_a": "baseline",
                            "condition_b": "baseline"})
    return out


def _answers(pick) -> pd.DataFrame:
    """A judge's answers in both orders; ``pick(first_model, second_model)`` says "first",
    "second" or "tie"."""
    rows = []
    for p in _pairs():
        for order, (x, y) in (("ab", (p["model_a"], p["model_b"])),
                              ("ba", (p["model_b"], p["model_a"]))):
            v = pick(x, y)
            winner = "tie" if v == "tie" else (
                ("a" if v == "first" else "b") if order == "ab" else
                ("b" if v == "first" else "a"))
            rows.append({**p, "dimension": "empathy", "order": order, "sample": 0,
                         "verdict": v, "winner": winner})
    return pd.DataFrame(rows)


def test_a_judge_that_always_picks_the_first_reply_has_bias_one_and_no_consistency():
    ans = _answers(lambda x, y: "first")
    bias = position_bias(ans, B=200, seed=1)
    assert bias.first_share == 1.0 and (bias.first_low, bias.first_high) == (1.0, 1.0)
    assert bias.n_decisive == bias.n_answers == 360
    assert bias.consistency == 0.0 and bias.n_complete == 180
    assert (bias.favour_first, bias.favour_second) == (180, 0)
    verdicts, order = combine_orders(ans, "tie")
    assert (order.complete, order.consistent, order.inconsistent) == (180, 0, 180)
    assert set(verdicts["winner"]) == {"tie"}
    dropped, order = combine_orders(ans, "drop")
    assert dropped.empty and order.inconsistent_as == "drop"


def test_a_consistent_judge_without_bias():
    strength = {m: k for k, m in enumerate(MODELS)}  # dogwood best
    ans = _answers(lambda x, y: "first" if strength[x] > strength[y] else "second")
    bias = position_bias(ans, B=200, seed=1)
    assert bias.consistency == 1.0 and bias.first_share == 0.5
    assert bias.first_low < 0.5 < bias.first_high or bias.first_low == bias.first_high == 0.5
    verdicts, order = combine_orders(ans)
    assert order.consistent == 180 and verdicts["consistent"].all()
    # a verdict is the pair's own winner: the stronger model, whichever was shown first
    assert all((r.winner == "a") == (strength[r.model_a] > strength[r.model_b])
               for r in verdicts.itertuples())


def test_one_scored_order_leaves_the_pair_out():
    ans = _answers(lambda x, y: "first")
    ans.loc[(ans["pair_id"] == 1) & (ans["order"] == "ba"), ["verdict", "winner"]] = None
    verdicts, order = combine_orders(ans)
    assert order.incomplete == 1 and order.complete == 179
    assert 1 not in set(verdicts["pair_id"])


def test_kappas_equal_cohen_on_the_pooled_pairings():
    rng = np.random.default_rng(4)
    pairs = _pairs(10)
    humans, judge = [], []
    for p in pairs:
        truth = rng.choice(["a", "b", "tie"], p=[0.45, 0.4, 0.15])
        for r in ("r1", "r2", "r3"):
            w = truth if rng.random() < 0.7 else rng.choice(["a", "b", "tie"])
            humans.append({**p, "dimension": "empathy", "rater": r, "winner": w})
        judge.append({"pair_id": p["pair_id"], "dimension": "empathy",
                      "winner": truth if rng.random() < 0.6 else rng.choice(["a", "b"])})
    hum, jud = pd.DataFrame(humans), pd.DataFrame(judge)
    (k,) = pairwise_kappas(hum, jud, B=100, seed=2)
    # the reference: every (judge, human) pairing on the pairs, and every ordered pair of
    # distinct humans, as two label lists for scikit-learn's Cohen's kappa
    jv = dict(zip(jud["pair_id"], jud["winner"], strict=True))
    jx, hy, h1, h2 = [], [], [], []
    for pid, g in hum.groupby("pair_id"):
        ws = list(g["winner"])
        jx += [jv[pid]] * len(ws)
        hy += ws
        for x in range(len(ws)):
            for y in range(len(ws)):
                if x != y:
                    h1.append(ws[x])
                    h2.append(ws[y])
    assert k.judge_kappa == pytest.approx(cohen_kappa_score(jx, hy), abs=1e-12)
    assert k.human_kappa == pytest.approx(cohen_kappa_score(h1, h2), abs=1e-12)
    assert (k.n_pairs, k.judge_n, k.human_n) == (60, 180, 360)
    assert k.judge_low < k.judge_kappa < k.judge_high
    assert k.human_low < k.human_kappa < k.human_high


def test_kappa_needs_two_humans_on_a_pair():
    hum = pd.DataFrame([{**_pairs(1)[0], "dimension": "empathy", "rater": "r1",
                         "winner": "a"}])
    (k,) = pairwise_kappas(hum, pd.DataFrame(columns=["pair_id", "dimension", "winner"]))
    assert k.judge_kappa is None and k.human_kappa is None and "two or more humans" in k.reason


def _comps(pick, n_scen=30) -> pd.DataFrame:
    rows = []
    for p in _pairs(n_scen):
        rows.append({**p, "dimension": "empathy", "rater": "r1",
                     "winner": pick(p["model_a"], p["model_b"])})
    return human_comparisons(pd.DataFrame(rows))


def test_tau_is_one_for_the_same_data_on_every_shared_resample():
    rng = np.random.default_rng(3)
    strength = {m: k for k, m in enumerate(MODELS)}

    def pick(x, y):
        p = 1 / (1 + np.exp(-(strength[x] - strength[y]) * 0.7))
        return "a" if rng.random() < p else "b"

    comps = _comps(pick)
    (t,) = ranking_agreement(comps, comps.copy(), B=200, seed=5)
    # the same comparisons refitted on the same resamples rank alike in every one of them;
    # independent resamples would put τ below 1 in some
    assert t.tau == 1.0 and (t.low, t.high) == (1.0, 1.0) and t.n_boot == 200
    assert t.models == tuple(MODELS)


def test_tau_of_a_reversed_ranking_is_minus_one():
    strength = {m: k for k, m in enumerate(MODELS)}
    up = _comps(lambda x, y: "a" if strength[x] > strength[y] else "b")
    # a perfect order has no finite strengths (every model lost only upwards): add noise
    up.loc[up.index % 7 == 0, "outcome"] = "tie"
    down = up.copy()
    down["outcome"] = down["outcome"].map({"a": "b", "b": "a", "tie": "tie"})
    (t,) = ranking_agreement(up, down, B=50, seed=1)
    assert t.tau == -1.0


def test_tau_is_not_given_when_a_ranking_falls_into_groups():
    strength = {m: k for k, m in enumerate(MODELS)}
    clean = _comps(lambda x, y: "a" if strength[x] > strength[y] else "b")
    (t,) = ranking_agreement(clean, clean, B=10, seed=1)
    assert t.tau is None and "not on one scale" in t.reason


def test_arena_fits_each_dimension_and_says_how_ties_were_treated():
    outcomes = iter(["a", "b", "tie", "b", "a", "b"] * 30)
    comps = _comps(lambda x, y: next(outcomes))
    fits = arena(comps, B=20, seed=0)
    assert list(fits) == ["empathy"] and fits["empathy"].nu is not None
    text = ties_text(fits)
    assert text.startswith("Davidson (1970)") and "empathy: 30 of 180, ν = " in text


def test_players_by_condition():
    assert player("ash", "sap", "model") == "ash"
    assert player("ash", "sap", "condition") == "sap"
    assert player("ash", None, "model+condition") == "ash / none"
    v = pd.DataFrame([{"pair_id": 1, "scenario": "s", "dimension": "d", "model_a": "m",
                       "model_b": "m", "condition_a": "sap", "condition_b": "baseline",
                       "winner": "a"}])
    c = judge_comparisons(v, "condition")
    assert (c.loc[0, "player_a"], c.loc[0, "player_b"]) == ("sap", "baseline")
