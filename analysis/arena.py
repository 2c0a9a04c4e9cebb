"""Pairwise comparisons, from preferences to rankings, and humans against a pairwise judge.

* :func:`arena` fits Bradley–Terry (Davidson's ties) per dimension to long comparisons with a
  scenario bootstrap (:mod:`analysis.bradley_terry`).
* :func:`combine_orders` turns a pairwise judge's two answers per pair (shown A-then-B and
  B-then-A) into one verdict: the answers agree, or they disagree and the pair counts as a
  tie (``inconsistent="tie"``, the default) or is left out (``"drop"``).
* :func:`position_bias`: the share of a judge's decisive answers won by the reply shown first
  (0.5 without bias; Zheng et al. 2023 call its departure position bias), and the share of
  pairs whose two orders agree (consistency), each with a scenario-bootstrap interval.
* :func:`pairwise_kappas`: Cohen's κ on a / b / tie of the judge against each human, beside
  the humans against each other, on the same pairs (those with two or more humans): single
  raters against single raters, pooled over the pairs (one 3 × 3 table each, every
  (judge, human) or (human, human) pairing a count), with scenario-bootstrap intervals.
* :func:`ranking_agreement`: Kendall's τ_b between the humans' and the judge's log-strengths,
  with an interval from the two rankings refitted on the same scenario resamples.

Pure: DataFrames in, frozen dataclasses out; the study adapter is :mod:`analysis.arena_study`.

References
----------
Bradley & Terry (1952); Davidson (1970): see :mod:`analysis.bradley_terry`.
Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena. NeurIPS.
Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and
Psychological Measurement, 20(1), 37-46.
Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika, 33(3), 239-251.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from messages import Msg

from .bradley_terry import BTResult, bradley_terry, kendall_tau_b
from .resample import item_weights
from .serialize import finite

__all__ = ["By", "BY", "Inconsistent", "INCONSISTENT", "player", "human_comparisons",
           "judge_comparisons", "combine_orders", "OrderStats", "arena", "ties_text",
           "PositionBias", "position_bias", "PairKappa", "pairwise_kappas",
           "RankingAgreement", "ranking_agreement", "WINNERS"]

By = Literal["model", "condition", "model+condition"]
BY: tuple[str, ...] = ("model", "condition", "model+condition")
Inconsistent = Literal["tie", "drop"]
INCONSISTENT: tuple[str, ...] = ("tie", "drop")
WINNERS = ("a", "b", "tie")
_COMPARISON_COLUMNS = ["pair_id", "scenario", "dimension", "player_a", "player_b", "outcome"]


def player(model: str, condition: str | None, by: By) -> str:
    """What a reply stands for in the ranking: its model, its condition, or both."""
    cond = condition or "none"
    return model if by == "model" else cond if by == "condition" else f"{model} / {cond}"


def _players(df: pd.DataFrame, by: By) -> tuple[list[str], list[str]]:
    return ([player(m, c, by) for m, c in zip(df["model_a"], df["condition_a"], strict=True)],
            [player(m, c, by) for m, c in zip(df["model_b"], df["condition_b"], strict=True)])


def human_comparisons(prefs: pd.DataFrame, by: By = "model") -> pd.DataFrame:
    """One comparison per human preference (a "cannot compare" is left out).

    ``prefs``: pair_id, scenario, dimension, rater, winner, model_a, model_b, condition_a,
    condition_b. Returns pair_id, scenario, dimension, player_a, player_b, outcome, rater.
    """
    df = prefs[prefs["winner"].isin(WINNERS)]
    pa, pb = _players(df, by)
    return pd.DataFrame({"pair_id": df["pair_id"].to_numpy(),
                         "scenario": df["scenario"].astype(str).to_numpy(),
                         "dimension": df["dimension"].to_numpy(), "player_a": pa,
                         "player_b": pb, "outcome": df["winner"].to_numpy(),
                         "rater": df["rater"].to_numpy()})


@dataclass(frozen=True)
class OrderStats:
    """How a judge's two orders combined: pairs (× dimension × sample) with both orders
    scored, how many agreed, how many disagreed (and were tied or dropped), and how many had
    only one scored order (left out)."""

    complete: int
    consistent: int
    inconsistent: int
    incomplete: int
    inconsistent_as: Inconsistent


def combine_orders(answers: pd.DataFrame, inconsistent: Inconsistent = "tie"
                   ) -> tuple[pd.DataFrame, OrderStats]:
    """A judge's verdict per (pair, dimension, sample) from its two orders.

    ``answers``: pair_id, scenario, dimension, order ("ab"/"ba"), sample, winner ("a", "b",
    "tie" in the pair's own order; None when unscored), model_a, model_b, condition_a,
    condition_b. Both orders must be scored; when they disagree the pair is a tie or is
    dropped (``inconsistent``). Returns the verdicts (the columns above without order, with
    ``winner`` combined and ``consistent``) and the counts.
    """
    if inconsistent not in INCONSISTENT:
        raise ValueError(f"inconsistent must be 'tie' or 'drop', not {inconsistent!r}")
    keys = ["pair_id", "dimension", "sample"]
    scored = answers[answers["winner"].isin(WINNERS)]
    ab = scored[scored["order"] == "ab"].set_index(keys)
    ba = scored[scored["order"] == "ba"].set_index(keys)
    both = ab.join(ba[["winner"]].add_suffix("_ba"), how="inner")
    all_units = answers.drop_duplicates(keys).set_index(keys).index
    incomplete = len(all_units) - len(both)
    agree = both["winner"] == both["winner_ba"]
    out = both.copy()
    out["consistent"] = agree
    if inconsistent == "tie":
        out.loc[~agree, "winner"] = "tie"
    else:
        out = out[agree]
    out = out.drop(columns=["winner_ba", "order"]).reset_index()
    return out, OrderStats(len(both), int(agree.sum()), int((~agree).sum()), incomplete,
                           inconsistent)


def judge_comparisons(verdicts: pd.DataFrame, by: By = "model") -> pd.DataFrame:
    """One comparison per combined verdict (the output of :func:`combine_orders`)."""
    pa, pb = _players(verdicts, by)
    return pd.DataFrame({"pair_id": verdicts["pair_id"].to_numpy(),
                         "scenario": verdicts["scenario"].astype(str).to_numpy(),
                         "dimension": verdicts["dimension"].to_numpy(), "player_a": pa,
                         "player_b": pb, "outcome": verdicts["winner"].to_numpy()})


def arena(comparisons: pd.DataFrame, *, dimensions: Sequence[str] | None = None,
          players: Sequence[str] | None = None, B: int = 1000, seed: int = 0,
          ci: float = 0.95) -> dict[str, BTResult]:
    """Bradley–Terry per dimension (``comparisons``: scenario, dimension, player_a,
    player_b, outcome), each with a bootstrap over scenarios. ``players``: every player to
    report (default: those compared on any dimension)."""
    dims = list(dimensions) if dimensions is not None else \
        list(dict.fromkeys(comparisons["dimension"]))
    everyone = list(players) if players is not None else sorted(
        set(comparisons["player_a"]) | set(comparisons["player_b"]))
    out = {}
    for d in dims:
        sub = comparisons[comparisons["dimension"] == d]
        out[d] = bradley_terry(sub["player_a"].tolist(), sub["player_b"].tolist(),
                               sub["outcome"].tolist(), players=everyone,
                               clusters=sub["scenario"].tolist(), B=B, seed=seed, ci=ci)
    return out


def ties_text(results: dict[str, BTResult], order: OrderStats | None = None) -> str:
    """How ties were treated, in words (the ``ties`` field of ``h2h arena --json``)."""
    parts = []
    for d, r in results.items():
        if r.n_ties:
            nu = f", ν = {r.nu:.3f}" if r.nu is not None else ""
            parts.append(f"{d}: {r.n_ties} of {r.n}{nu}")
        else:
            parts.append(f"{d}: none")
    text = ("Davidson (1970): a tie is a third outcome with its own parameter ν, "
            "P(tie) ∝ ν·√(π_i π_j) (" + "; ".join(parts) + "); without ties the model is "
            "plain Bradley–Terry")
    if order is not None:
        if order.inconsistent_as == "tie":
            text += (f". The judge's two orders disagreed on {order.inconsistent} of "
                     f"{order.complete} pairs: counted as ties (--inconsistent tie)")
        else:
            text += (f". The judge's two orders disagreed on {order.inconsistent} of "
                     f"{order.complete} pairs: left out (--inconsistent drop)")
    return text


def _boot_ratio(num: np.ndarray, den: np.ndarray, clusters: np.ndarray, B: int, seed: int,
                ci: float) -> tuple[float | None, float | None]:
    """Percentile interval of Σnum / Σden over scenario resamples (per-scenario sums)."""
    levels, idx = np.unique(clusters, return_inverse=True)
    if B < 1 or len(levels) < 2:
        return None, None
    sn = np.bincount(idx, weights=num, minlength=len(levels))
    sd = np.bincount(idx, weights=den, minlength=len(levels))
    W = item_weights(len(levels), B, seed)
    tot = W @ sd
    ok = tot > 0
    if ok.sum() < 2:
        return None, None
    vals = (W @ sn)[ok] / tot[ok]
    lo, hi = np.quantile(vals, [(1 - ci) / 2, 1 - (1 - ci) / 2])
    return float(lo), float(hi)


@dataclass(frozen=True)
class PositionBias:
    """A pairwise judge's position bias and consistency.

    ``first_share``: of the decisive answers (not ties; ``n_decisive`` of ``n_answers``
    scored answers), the share that chose the reply shown first, with its interval (0.5: no
    bias). ``consistency``: of the pairs × dimensions × samples with both orders scored
    (``n_complete``), the share whose two answers agree. ``favour_first`` /
    ``favour_second``: inconsistent ones whose two answers both chose the first / second
    shown reply. Intervals: percentile, scenario bootstrap (B, seed).
    """

    n_answers: int
    n_decisive: int
    first_share: float | None
    first_low: float | None
    first_high: float | None
    n_complete: int
    consistency: float | None
    consistency_low: float | None
    consistency_high: float | None
    favour_first: int
    favour_second: int
    B: int
    seed: int


def position_bias(answers: pd.DataFrame, *, B: int = 1000, seed: int = 0,
                  ci: float = 0.95) -> PositionBias:
    """Position bias and consistency from every scored answer (``answers``: pair_id,
    scenario, dimension, order, sample, verdict "first"/"second"/"tie", winner)."""
    sc = answers[answers["verdict"].isin(("first", "second", "tie"))]
    dec = sc[sc["verdict"] != "tie"]
    first = (dec["verdict"] == "first").to_numpy(float)
    share = float(first.mean()) if len(dec) else None
    lo, hi = _boot_ratio(first, np.ones(len(dec)), dec["scenario"].astype(str).to_numpy(), B,
                         seed, ci) if len(dec) else (None, None)
    keys = ["pair_id", "dimension", "sample"]
    ab = sc[sc["order"] == "ab"].set_index(keys)
    ba = sc[sc["order"] == "ba"].set_index(keys)
    both = ab.join(ba[["winner", "verdict"]].add_suffix("_ba"), how="inner")
    agree = (both["winner"] == both["winner_ba"]).to_numpy(float)
    cons = float(agree.mean()) if len(both) else None
    clo, chi = _boot_ratio(agree, np.ones(len(both)), both["scenario"].astype(str).to_numpy(),
                           B, seed + 1, ci) if len(both) else (None, None)
    dis = both[agree == 0]
    return PositionBias(len(sc), len(dec), share, lo, hi, len(both), cons, clo, chi,
                        int(((dis["verdict"] == "first") & (dis["verdict_ba"] == "first")).sum()),
                        int(((dis["verdict"] == "second") & (dis["verdict_ba"] == "second")
                             ).sum()), B, seed)


@dataclass(frozen=True)
class PairKappa:
    """Cohen's κ on a / b / tie for one dimension: the judge against each human and the
    humans against each other, on the same ``n_pairs`` pairs (two or more humans each).
    ``judge_n`` / ``human_n`` count the (judge, human) and (human, human) pairings pooled;
    ``*_agreement`` the raw share of matches. ``reason`` says why a κ is missing."""

    dimension: str
    n_pairs: int
    judge_kappa: float | None
    judge_low: float | None
    judge_high: float | None
    judge_agreement: float | None
    judge_n: int
    human_kappa: float | None
    human_low: float | None
    human_high: float | None
    human_agreement: float | None
    human_n: int
    reason: str | None = None


def _kappa_rows(tables: np.ndarray) -> np.ndarray:
    """Cohen's κ of each 3 × 3 table (rows, 9): (p_o − p_e) / (1 − p_e)."""
    t = tables.reshape(-1, 3, 3)
    n = t.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(t, axis1=1, axis2=2) / n
        pe = (t.sum(axis=2) * t.sum(axis=1)).sum(axis=1) / n ** 2
        k = (po - pe) / (1 - pe)
    return np.where((n > 0) & (pe < 1), k, np.nan)


def _interval(S: np.ndarray, B: int, seed: int, ci: float) -> tuple[float | None, float | None]:
    """Percentile interval of κ over scenario resamples of per-scenario tables ``S``."""
    if B < 1 or len(S) < 2:
        return None, None
    k = _kappa_rows(item_weights(len(S), B, seed) @ S)
    k = k[np.isfinite(k)]
    if len(k) < 2:
        return None, None
    lo, hi = np.quantile(k, [(1 - ci) / 2, 1 - (1 - ci) / 2])
    return float(lo), float(hi)


def _kappa_for(d: str, units: list[tuple[str, np.ndarray, np.ndarray]], B: int, seed: int,
               ci: float) -> PairKappa:
    """κ of one dimension from its units (scenario, human-human table, judge-human table)."""
    scen = np.array([u[0] for u in units])
    HH = np.array([u[1] for u in units])
    JH = np.array([u[2] for u in units])
    levels, idx = np.unique(scen, return_inverse=True)
    SH = np.zeros((len(levels), 9))
    SJ = np.zeros((len(levels), 9))
    np.add.at(SH, idx, HH)
    np.add.at(SJ, idx, JH)
    hk, jk = _kappa_rows(SH.sum(axis=0)[None])[0], _kappa_rows(SJ.sum(axis=0)[None])[0]
    hn, jn = int(HH.sum()), int(JH.sum())
    reason = None
    if jn == 0:
        reason = Msg("the judge has no verdict on these pairs")
    elif not np.isfinite(jk) or not np.isfinite(hk):
        reason = Msg("every answer fell in one category: κ is undefined")
    hl, hh = _interval(SH, B, seed, ci)
    jl, jh = _interval(SJ, B, seed, ci) if jn else (None, None)
    return PairKappa(
        d, len(units), finite(jk) if jn else None, jl, jh,
        float(np.trace(JH.sum(axis=0).reshape(3, 3)) / jn) if jn else None, jn,
        finite(hk), hl, hh, float(np.trace(HH.sum(axis=0).reshape(3, 3)) / hn), hn, reason)


def pairwise_kappas(humans: pd.DataFrame, judge: pd.DataFrame, *, B: int = 1000,
                    seed: int = 0, ci: float = 0.95) -> list[PairKappa]:
    """κ per dimension (see :class:`PairKappa`). ``humans``: pair_id, scenario, dimension,
    rater, winner; ``judge``: pair_id, dimension, winner (one verdict per pair; with several
    samples the most common). "Cannot compare" and unscored verdicts are left out."""
    code = {w: k for k, w in enumerate(WINNERS)}
    hum = humans[humans["winner"].isin(WINNERS)]
    jv = (judge[judge["winner"].isin(WINNERS)].groupby(["pair_id", "dimension"])["winner"]
          .agg(lambda s: s.value_counts().index[0]))
    out = []
    for d in dict.fromkeys(hum["dimension"]):
        sub = hum[hum["dimension"] == d]
        units = []
        for (pid, scen), g in sub.groupby(["pair_id", "scenario"], sort=True):
            if len(g) < 2:
                continue
            codes = np.array([code[w] for w in g["winner"]])
            hh = np.zeros(9)
            for x in range(len(codes)):
                for y in range(len(codes)):
                    if x != y:
                        hh[codes[x] * 3 + codes[y]] += 1
            jh = np.zeros(9)
            j = jv.get((pid, d))
            if j is not None:
                for c in codes:
                    jh[code[j] * 3 + c] += 1
            units.append((str(scen), hh, jh))
        if not units:
            out.append(PairKappa(d, 0, None, None, None, None, 0, None, None, None, None, 0,
                                 Msg("no pair was compared by two or more humans")))
            continue
        out.append(_kappa_for(d, units, B, seed, ci))
    return out


@dataclass(frozen=True)
class RankingAgreement:
    """Kendall's τ_b between two rankings of one dimension, over the ``models`` both rank,
    with a percentile interval from refits on the same scenario resamples (``n_boot`` of
    them valid for both); ``reason`` says why there is none."""

    dimension: str
    tau: float | None
    low: float | None
    high: float | None
    models: tuple[str, ...]
    n_boot: int
    reason: str | None = None


def _fit_on(df: pd.DataFrame, everyone: list[str], levels: list[str], W: np.ndarray | None,
            seed: int) -> BTResult:
    return bradley_terry(df["player_a"].tolist(), df["player_b"].tolist(),
                         df["outcome"].tolist(), players=everyone,
                         clusters=df["scenario"].astype(str).tolist(), cluster_levels=levels,
                         weights=W, B=0 if W is None else len(W), seed=seed)


def ranking_agreement(human: pd.DataFrame, judge: pd.DataFrame, *, B: int = 1000,
                      seed: int = 0, ci: float = 0.95) -> list[RankingAgreement]:
    """τ_b per dimension between the humans' and the judge's Bradley–Terry log-strengths
    (both frames: scenario, dimension, player_a, player_b, outcome). Both are refitted on
    the same B scenario resamples (one weight per scenario of either data set)."""
    out = []
    for d in dict.fromkeys(human["dimension"]):
        h = human[human["dimension"] == d]
        j = judge[judge["dimension"] == d]
        if j.empty:
            out.append(RankingAgreement(d, None, None, None, (), 0,
                                        Msg("the judge compared no pair on this dimension")))
            continue
        everyone = sorted(set(h["player_a"]) | set(h["player_b"]) | set(j["player_a"])
                          | set(j["player_b"]))
        levels = sorted(set(h["scenario"].astype(str)) | set(j["scenario"].astype(str)))
        W = item_weights(len(levels), B, seed) if B > 0 else None
        rh, rj = (_fit_on(x, everyone, levels, W, seed) for x in (h, j))
        if not rh.connected or not rj.connected:
            out.append(RankingAgreement(d, None, None, None, (), 0, Msg(
                "a ranking is not on one scale (some models cannot be ranked against others): "
                "no τ")))
            continue
        common = [k for k, p in enumerate(everyone)
                  if rh.log_strength[k] is not None and rj.log_strength[k] is not None]
        if len(common) < 3:
            out.append(RankingAgreement(d, None, None, None,
                                        tuple(everyone[k] for k in common), 0,
                                        Msg("fewer than 3 models ranked by both: no τ")))
            continue
        tau = float(kendall_tau_b(np.array([rh.log_strength])[:, common].astype(float),
                                  np.array([rj.log_strength])[:, common].astype(float))[0])
        lo = hi = None
        n_boot = 0
        if rh.boot is not None and rj.boot is not None:
            bh, bj = rh.boot[:, common], rj.boot[:, common]
            ok = np.isfinite(bh).all(axis=1) & np.isfinite(bj).all(axis=1)
            taus = kendall_tau_b(bh[ok], bj[ok])
            taus = taus[np.isfinite(taus)]
            n_boot = len(taus)
            if n_boot >= 2:
                lo, hi = (float(x) for x in np.quantile(taus, [(1 - ci) / 2,
                                                                1 - (1 - ci) / 2]))
        out.append(RankingAgreement(d, tau if np.isfinite(tau) else None, lo, hi,
                                    tuple(everyone[k] for k in common), n_boot))
    return out
