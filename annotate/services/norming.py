"""Norming sessions for the pages: the revealed score table and α before / after discussion.

α "before" uses every participant's blind scores; α "after" uses each participant's re-score
where they gave one and their blind score otherwise (not re-scoring means keeping the score).
Krippendorff's α at the dimension's level on its full scale, per dimension; fewer than two
items with two scores is "not estimable" (said, not printed as a number).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine

from analysis.alpha import alpha
from analysis.layout import as_ratings
from data import norming as nm
from data.rubric import Rubric
from messages import Msg

__all__ = ["AlphaRow", "norming_alpha", "revealed_table", "my_scores", "saved_counts"]


@dataclass(frozen=True)
class AlphaRow:
    dimension: str
    before: float | None
    after: float | None
    n_items: int
    n_raters: int
    note: str = ""


def _frame(engine: Engine, session_id: int) -> pd.DataFrame:
    return pd.DataFrame(nm.norming_scores(engine, session_id),
                        columns=["rater", "rater_id", "item", "dimension", "phase", "score"])


def _final(df: pd.DataFrame) -> pd.DataFrame:
    before = df[df["phase"] == "before"].set_index(["rater", "item", "dimension"])["score"]
    after = df[df["phase"] == "after"].set_index(["rater", "item", "dimension"])["score"]
    return after.combine_first(before).rename("score").reset_index()


def _alpha(sub: pd.DataFrame, level: str, values) -> float | None:
    sub = sub.dropna(subset=["score"])
    if sub.empty:
        return None
    r = as_ratings(sub)
    pairable = np.sum(np.sum(~np.isnan(r.matrix), axis=1) >= 2)
    if pairable < 2:
        return None
    a = alpha(r, level, values)
    return float(a) if np.isfinite(a) else None


def norming_alpha(engine: Engine, session_id: int, rubric: Rubric) -> list[AlphaRow]:
    df = _frame(engine, session_id)
    out = []
    if df.empty:
        return out
    final = _final(df)
    for d in rubric.dimensions:
        b = df[(df["phase"] == "before") & (df["dimension"] == d.key)]
        if b.empty:
            continue
        a_b = _alpha(b[["item", "rater", "score"]], d.level, d.values)
        f = final[final["dimension"] == d.key]
        a_f = _alpha(f[["item", "rater", "score"]], d.level, d.values)
        note = "" if a_b is not None else Msg("not estimable: needs two items with two scores "
                                              "and some variation")
        out.append(AlphaRow(d.label, a_b, a_f, int(b["item"].nunique()),
                            int(b["rater"].nunique()), note))
    return out


def _fmt(v) -> str:
    return Msg("cannot rate") if pd.isna(v) else f"{v:g}"


def revealed_table(engine: Engine, session_id: int, item_id: str, named: bool,
                   rubric: Rubric) -> pd.DataFrame:
    """Everyone's scores on one item, one column per participant (their names, or Rater A,
    B, … in a fixed order when anonymised), one row per dimension; "→" marks a re-score."""
    info = nm.session_info(engine, session_id)
    df = _frame(engine, session_id)
    df = df[df["item"] == item_id]
    labels = {rid: (name if named else Msg("Rater {letter}", letter=chr(65 + i)))
              for i, (rid, name) in enumerate(sorted(info.participants.items()))}
    dims = [d for d in rubric.dimensions if d.key in set(df["dimension"])]
    table = {}
    for rid, label in labels.items():
        col = []
        for d in dims:
            mine = df[(df["rater_id"] == rid) & (df["dimension"] == d.key)]
            b = mine[mine["phase"] == "before"]["score"]
            a = mine[mine["phase"] == "after"]["score"]
            text = _fmt(b.iloc[0]) if len(b) else "—"
            if len(a) and (not len(b) or a.iloc[0] != b.iloc[0]):
                text = Msg("{before} → {after}", before=text, after=_fmt(a.iloc[0]))
            col.append(text)
        table[label] = col
    # object columns and labels: the cells and the "Rater A" labels stay messages
    return pd.DataFrame(table, index=pd.Index([d.label for d in dims], dtype=object),
                        columns=pd.Index(list(table), dtype=object), dtype=object)


def my_scores(engine: Engine, session_id: int, rater_id: int, item_id: str
              ) -> dict[str, float | None]:
    """The participant's current scores for an item (re-score if given, else blind)."""
    df = _frame(engine, session_id)
    df = df[(df["rater_id"] == rater_id) & (df["item"] == item_id)]
    out: dict[str, float | None] = {}
    for phase in ("before", "after"):
        for _, r in df[df["phase"] == phase].iterrows():
            out[r["dimension"]] = None if pd.isna(r["score"]) else r["score"]
    return out


def saved_counts(engine: Engine, session_id: int, rater_id: int) -> tuple[int, int]:
    """How many of the session's items this participant scored blind, and re-scored."""
    df = _frame(engine, session_id)
    df = df[df["rater_id"] == rater_id]
    return (int(df[df["phase"] == "before"]["item"].nunique()),
            int(df[df["phase"] == "after"]["item"].nunique()))
