"""What the admin pages show about rater quality: a row per rater with qualification,
accuracy on gold, attention checks, speed, test–retest and leniency drift (with flags),
attention-check failures, and the many-facet Rasch rater model per dimension."""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sqlalchemy.engine import Engine
from sqlmodel import select

from analysis.monitoring import gold_agreement, leniency_drift, reading_seconds, speeders
from analysis.rater_model import RaterModel, fit_dimensions
from annotate.services.admin import ratings_frame
from annotate.services.formats import NONE, coef, share
from annotate.services.i18n import message_frame
from annotate.services.training import gold_scales
from data import quality as q
from data.engine import read_session
from data.models import Assignment, Item, Qualification, Rater, Rating, RepeatRating
from data.study import current_rubric
from messages import Msg, join_msgs

__all__ = ["rater_quality", "quality_display", "attention_failures", "attention_counts",
           "rater_models", "rater_model_inputs", "gold_table", "checks_table",
           "QUALITY_COLUMNS", "QUALIFICATION_NAMES"]

# a rater's qualification as the pages and `h2h quality status` name it
QUALIFICATION_NAMES = {"training": Msg("training"), "passed": Msg("passed"),
                       "failed": Msg("failed"), "released": Msg("released"),
                       "not required": Msg("not required")}

QUALITY_COLUMNS = ["rater", "qualification", "gold n", "gold within-1", "gold QWK",
                   "attention", "attention pass", "median s/item", "speeders", "retest n",
                   "retest exact", "drift", "flags"]


def _item_seconds(engine: Engine) -> pd.DataFrame:
    """Per (rater, item): seconds spent on the main rating, and the plausible reading time."""
    with read_session(engine) as s:
        rows = s.exec(select(Rater.name, Rating.item_id, Rating.seconds_spent, Rating.updated_at)
                      .join(Rater, Rater.id == Rating.rater_id)
                      .where(Rater.simulated == False)).all()  # noqa: E712
        texts = {i: (r or "") + " " + " ".join(str(t.get("text", ""))
                                               for t in (c or {}).get("turns", []))
                 for i, r, c in s.exec(select(Item.id, Item.response, Item.context)).all()}
    df = pd.DataFrame(rows, columns=["rater", "item_id", "seconds", "at"])
    if df.empty:
        return df.assign(plausible=[])
    g = df.groupby(["rater", "item_id"]).agg(seconds=("seconds", lambda x: x.sum(min_count=1)),
                                             at=("at", "min")).reset_index()
    g["plausible"] = g["item_id"].map(lambda i: reading_seconds(texts.get(i, "")))
    return g


def _residuals(ratings: pd.DataFrame) -> pd.DataFrame:
    """Each rating minus the mean of the other raters on the same item and dimension."""
    df = ratings.dropna(subset=["score"]).copy()
    g = df.groupby(["item_id", "dimension"])["score"]
    total, n = g.transform("sum"), g.transform("count")
    df["resid"] = np.where(n > 1, df["score"] - (total - df["score"]) / (n - 1).clip(lower=1),
                           np.nan)
    return df.dropna(subset=["resid"])


def rater_quality(engine: Engine) -> pd.DataFrame:
    """One row per (non-simulated) rater; ``flags`` names what needs an admin's look."""
    rubric = current_rubric(engine)
    st = q.get_settings(engine)
    scales = gold_scales(rubric)
    with read_session(engine) as s:
        raters = s.exec(select(Rater).where(Rater.role == "rater",
                                            Rater.simulated == False)  # noqa: E712
                        .order_by(Rater.name)).all()
        quals = {r.rater_id: r for r in s.exec(select(Qualification)).all()}
        reps = s.exec(select(Rater.name, RepeatRating.item_id, RepeatRating.dimension,
                             RepeatRating.score)
                      .join(Rater, Rater.id == RepeatRating.rater_id)).all()
        order = dict(s.exec(select(Assignment.item_id, Assignment.position)).all())
    required = q.qualification_required(engine)
    training = pd.DataFrame(q.training_scores(engine),
                            columns=["rater", "rater_id", "item", "dimension", "round", "score",
                                     "gold"])
    attention = pd.DataFrame(q.attention_summary_rows(engine),
                             columns=["rater", "item", "passed", "at", "scores", "expected"])
    secs = _item_seconds(engine)
    ratings = ratings_frame(engine)
    with read_session(engine) as s:
        when = pd.DataFrame(s.exec(select(Rater.name, Rating.item_id, Rating.dimension,
                                          Rating.created_at)
                                   .join(Rater, Rater.id == Rating.rater_id)).all(),
                            columns=["rater", "item_id", "dimension", "at"])
    resid = _residuals(ratings).merge(when, on=["rater", "item_id", "dimension"], how="left")
    first = ratings.set_index(["rater", "item_id", "dimension"])["score"]
    rows = []
    for r in raters:
        flags = []
        qual = quals.get(r.id)
        status = QUALIFICATION_NAMES[(qual.status if qual else "training") if required
                                     else "not required"]
        if status == "failed":
            flags.append(Msg("failed qualification"))
        tr = training[training["rater"] == r.name]
        if qual is not None:
            tr = tr[tr["round"] == qual.round]
        ga = gold_agreement(tr[["dimension", "score", "gold"]].astype({"score": float}),
                            scales) if not tr.empty else None
        at = attention[attention["rater"] == r.name]
        n_att, n_pass = len(at), int(at["passed"].sum()) if len(at) else 0
        if n_att and n_pass < n_att:
            flags.append(Msg("{n} attention check(s) failed", n=n_att - n_pass))
        sc = secs[secs["rater"] == r.name] if not secs.empty else secs
        median = float(sc["seconds"].median()) if len(sc) and sc["seconds"].notna().any() \
            else None
        fast = None
        if len(sc) and sc["seconds"].notna().any():
            timed = sc[sc["seconds"].notna()]
            fast = float(speeders(timed["seconds"], timed["plausible"], st.min_seconds).mean())
            if fast >= 0.2:
                flags.append(Msg("speeder: {share:.0%} of items faster than reading time",
                                 share=fast))
        rep = [(i, d, sc2) for n, i, d, sc2 in reps if n == r.name]
        pairs = [(sc2, first.get((r.name, i, d))) for i, d, sc2 in rep]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None and b == b]
        exact = float(np.mean([a == b for a, b in pairs])) if pairs else None
        mine = resid[resid["rater"] == r.name].copy()
        mine["pos"] = mine["item_id"].map(order)
        mine = mine.sort_values(["at", "pos"])
        dr = leniency_drift(mine["resid"].tolist(), st.drift_window, st.drift_threshold)
        if dr.flagged:
            flags.append(Msg("leniency drift {drift:+.2f} points", drift=dr.drift))
        rows.append({
            "rater": r.name, "qualification": status,
            "gold n": ga.n if ga else 0,
            "gold within-1": ga.within1 if ga else None,
            "gold QWK": ga.qwk if ga else None,
            "attention": f"{n_pass}/{n_att}" if n_att else Msg("none yet"),
            "attention pass": n_pass / n_att if n_att else None,
            "median s/item": median, "speeders": fast,
            "retest n": len(pairs), "retest exact": exact,
            "drift": dr.drift if dr.drift is not None else dr.reason,
            "flags": join_msgs("; ", flags)})
    return message_frame(rows, QUALITY_COLUMNS)


def _short(reason: str) -> str:
    m = re.search(r"needs (\d+) .* has (\d+)", reason)
    return Msg("not estimable ({has} of {needed} ratings)", has=m.group(2),
               needed=m.group(1)) if m else reason


def quality_display(df: pd.DataFrame) -> pd.DataFrame:
    """The table as text for the page, in the one number format of every admin page
    (:mod:`annotate.services.formats`): shares as whole percentages, κ to 3 decimals as every
    coefficient, seconds to one, "—" where there is nothing to show (an empty value is never
    printed as a number)."""
    out = df.copy()

    def num(v, fmt):
        return NONE if v is None or pd.isna(v) else fmt.format(v)

    for c in ("gold within-1", "attention pass", "speeders", "retest exact"):
        out[c] = out[c].map(share)
    out["gold QWK"] = out["gold QWK"].map(coef)
    out["median s/item"] = out["median s/item"].map(lambda v: num(v, "{:.1f}"))
    out["drift"] = pd.Series([_short(v) if isinstance(v, str) else num(v, "{:+.2f}")
                              for v in out["drift"]], index=out.index, dtype=object)
    return out


def _scores(scores: dict[str, int | None], labels: Mapping[str, str]) -> Msg:
    """``Empathy 2, Safety cannot rate``: each dimension by its label (``labels``, the rubric
    in the reader's language; the key where the rubric has no such dimension)."""
    return join_msgs(", ", [Msg("{dimension} cannot rate", dimension=labels.get(d, d))
                            if v is None else f"{labels.get(d, d)} {v}"
                            for d, v in scores.items()])


def attention_failures(engine: Engine, labels: Mapping[str, str] | None = None
                       ) -> pd.DataFrame:
    """Every failed attention check: who, which item, when (UTC), expected and given (each
    dimension named by ``labels``, its key where none is given)."""
    labels = labels or {}
    rows = [{"rater": n, "item": i, "answered (UTC)": at.strftime("%Y-%m-%d %H:%M:%S"),
             "expected": _scores(exp, labels),
             "given": _scores({d: v for d, v in sc.items() if d in exp}, labels)}
            for n, i, ok, at, sc, exp in q.attention_summary_rows(engine) if not ok]
    return message_frame(rows, ["rater", "item", "answered (UTC)", "expected", "given"])


def attention_counts(engine: Engine) -> pd.DataFrame:
    """Each rater who answered an attention check: rater, answered, passed; the lowest pass
    rate first (where a coordinator looks), then by name."""
    rows = pd.DataFrame([(n, bool(ok)) for n, _i, ok, _at, _sc, _exp
                         in q.attention_summary_rows(engine)], columns=["rater", "passed"])
    out = (rows.groupby("rater", sort=False)["passed"].agg(answered="size", passed="sum")
           .reset_index().astype({"answered": int, "passed": int}))
    out["rate"] = out["passed"] / out["answered"]
    return out.sort_values(["rate", "rater"]).drop(columns="rate").reset_index(drop=True)


# where a gold score came from, and an attention check's kind, as the Quality page names them
GOLD_SOURCES = {"import": Msg("import"), "adjudication": Msg("adjudication")}
CHECK_KINDS = {"instructed": Msg("instructed"), "known_answer": Msg("known answer"),
               "pair": Msg("side-by-side pair")}  # what it asks: under the table


def gold_table(engine: Engine, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The gold scores: item, dimension (its label in ``labels``), score, source, rationale."""
    labels = labels or {}
    rows = [{"item": g.item_id, "dimension": labels.get(g.dimension, g.dimension),
             "score": g.score, "source": GOLD_SOURCES.get(g.source, g.source),
             "rationale": g.rationale} for g in q.gold_scores(engine)]
    return message_frame(rows, ["item", "dimension", "score", "source", "rationale"])


def checks_table(engine: Engine, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The attention checks: item, kind, tolerance and the expected scores (by label)."""
    labels = labels or {}
    rows = [{"item": c.item_id, "kind": CHECK_KINDS.get(c.kind, c.kind),
             "tolerance": c.tolerance, "expected": _scores(c.expected, labels)}
            for c in q.attention_checks(engine).values()]
    return message_frame(rows, ["item", "kind", "tolerance", "expected"])


def rater_model_inputs(engine: Engine) -> tuple[pd.DataFrame, dict[str, tuple]]:
    """What the rater model is fitted to: every rating (long), and per dimension its values
    and whether they are ordered."""
    rubric = current_rubric(engine)
    scales = {d.key: (d.values, d.level != "nominal" or d.kind == "binary")
              for d in rubric.dimensions}
    return ratings_frame(engine), scales


def rater_models(engine: Engine) -> dict[str, RaterModel]:
    """The many-facet Rasch model fitted to the study's ratings, per dimension."""
    return fit_dimensions(*rater_model_inputs(engine))
