"""What the admin pages show and do: progress, live agreement, disagreements, adjudication."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from analysis.analyze import analyze, scales_from_rubric
from analysis.options import AnalysisOptions
from analysis.results import StudyAnalysis
from annotate.services.i18n import N_
from data.engine import read_session, write_session
from data.errors import H2HError
from data.models import Adjudication, Assignment, Item, Rater, Rating, utcnow
from data.study import current_rubric
from messages import Msg

__all__ = ["item_of", "rater_progress", "progress_by_day", "dimension_progress", "live_agreement",
           "AgreementInputs", "agreement_inputs", "agreement_of",
           "Disagreement", "RATER_PROGRESS_COLUMNS", "DIMENSION_PROGRESS_COLUMNS",
           "disagreements", "save_adjudication", "ratings_frame", "scores_table"]

# column -> (header, kind) for annotate.components.tables.show_table
RATER_PROGRESS_COLUMNS = {"rater": (N_("Rater"), "text"), "active": (N_("Active"), "bool"),
                          "assigned": (N_("Assigned"), "count"), "done": (N_("Done"), "count"),
                          "share_done": (N_("Done (%)"), "share")}
DIMENSION_PROGRESS_COLUMNS = {"dimension": (N_("Dimension"), "text"),
                              "ratings": (N_("Ratings"), "count"),
                              "cannot_rate": (N_("Cannot rate"), "count"),
                              "items_2plus": (N_("Items rated by ≥ 2"), "count")}


def item_of(engine: Engine, item_id: str) -> Item | None:
    """One item with everything about it (admins only: model and condition included)."""
    with read_session(engine) as s:
        return s.get(Item, item_id)


def rater_progress(engine: Engine) -> pd.DataFrame:
    """Per rater: assigned, done (saved), and the share done."""
    with read_session(engine) as s:
        rows = s.exec(select(Rater.name, Rater.active, func.count(Assignment.id),
                             func.count(Assignment.completed_at))
                      .join(Assignment, Assignment.rater_id == Rater.id, isouter=True)
                      .where(Rater.role == "rater", Rater.simulated == False)  # noqa: E712
                      .group_by(Rater.id, Rater.name, Rater.active).order_by(Rater.name)).all()
    df = pd.DataFrame(rows, columns=["rater", "active", "assigned", "done"])
    df["share_done"] = (df["done"] / df["assigned"].where(df["assigned"] > 0)).fillna(0.0)
    return df


def progress_by_day(engine: Engine) -> tuple[list[str], dict[str, list[int]], dict[str, int]]:
    """Items done per (non-simulated) rater, cumulative, on each day (UTC) from the first
    save to the last: (days, {rater: counts}, {rater: items assigned}). Raters who saved
    nothing yet are left out of the counts (their assignment is still given)."""
    with read_session(engine) as s:
        rows = s.exec(select(Rater.name, Assignment.completed_at)
                      .join(Assignment, Assignment.rater_id == Rater.id)
                      .where(Rater.role == "rater", Rater.simulated == False)  # noqa: E712
                      ).all()
    assigned: dict[str, int] = {}
    done: dict[str, dict[str, int]] = {}
    for name, at in rows:
        assigned[name] = assigned.get(name, 0) + 1
        if at is not None:
            day = at.strftime("%Y-%m-%d")
            done.setdefault(name, {})[day] = done.setdefault(name, {}).get(day, 0) + 1
    days = sorted({d for per in done.values() for d in per})
    if days:  # every day between the first and the last, quiet days included
        first, last = (pd.Timestamp(days[0]), pd.Timestamp(days[-1]))
        days = [d.strftime("%Y-%m-%d") for d in pd.date_range(first, last, freq="D")]
    cumulative = {}
    for name, per in done.items():
        total, counts = 0, []
        for d in days:
            total += per.get(d, 0)
            counts.append(total)
        cumulative[name] = counts
    return days, cumulative, assigned


def dimension_progress(engine: Engine) -> pd.DataFrame:
    """Per dimension: ratings stored, "cannot rate" count, items with at least 2 ratings."""
    with read_session(engine) as s:
        rows = s.exec(select(Rating.dimension, Rating.item_id, Rating.score)).all()
    df = pd.DataFrame(rows, columns=["dimension", "item_id", "score"])
    if df.empty:
        return pd.DataFrame(columns=["dimension", "ratings", "cannot_rate", "items_2plus"])
    g = df.groupby("dimension")
    per_item = df.groupby(["dimension", "item_id"]).size()
    return pd.DataFrame({
        "ratings": g.size(), "cannot_rate": g["score"].apply(lambda x: int(x.isna().sum())),
        "items_2plus": (per_item >= 2).groupby(level=0).sum()}).reset_index()


def ratings_frame(engine: Engine) -> pd.DataFrame:
    with read_session(engine) as s:
        rows = s.exec(select(Rating.item_id, Rater.name, Rating.dimension, Rating.score)
                      .join(Rater, Rater.id == Rating.rater_id)).all()
    return pd.DataFrame(rows, columns=["item_id", "rater", "dimension", "score"])


@dataclass(frozen=True, eq=False)
class AgreementInputs:
    """What the live agreement is computed from: every rating (long), the rubric's scales,
    and the stored judges' scores (None without judges)."""
    ratings: pd.DataFrame
    scales: dict
    judges: pd.DataFrame | None


def agreement_inputs(engine: Engine, judges: bool = False) -> AgreementInputs | None:
    """The study's ratings and scales (with ``judges``, its stored LLM judges too); None
    without ratings. Cheap reads: :func:`agreement_of` is the costly part."""
    df = ratings_frame(engine)
    if df.empty:
        return None
    scales = scales_from_rubric(current_rubric(engine).dimensions)
    jdf = None
    if judges:
        from analysis.study import study_judges

        jdf = study_judges(engine)
        jdf = None if jdf is None or jdf.empty else jdf
    return AgreementInputs(df, scales, jdf)


def agreement_of(inputs: AgreementInputs, B: int = 500, seed: int = 0) -> StudyAnalysis:
    """The analysis package's human agreement (and each judge against the human ceiling)."""
    return analyze(inputs.ratings, inputs.scales, judges=inputs.judges,
                   options=AnalysisOptions(B=B, seed=seed))


def live_agreement(engine: Engine, B: int = 500, seed: int = 0,
                   judges: bool = False) -> StudyAnalysis | None:
    """The analysis package's human agreement on the current ratings; with ``judges``, the
    study's stored LLM judges too (each against the human ceiling); None without ratings."""
    inputs = agreement_inputs(engine, judges=judges)
    return None if inputs is None else agreement_of(inputs, B=B, seed=seed)


@dataclass(frozen=True)
class Disagreement:
    item_id: str
    dimension: str
    spread: float
    scores: dict[str, float | None]
    adjudicated: float | None
    note: str


def scores_table(scores: dict[str, float | None], dim, _=str) -> pd.DataFrame:
    """Each rater's score as the form shows it ("4 · Good", never the stored "4.0000"), by
    rater (the index: no 0/1/2 column), every text inert (:func:`render.md_table`)."""
    from annotate.services.render import md_table

    names = {lv.value: lv.label for lv in dim.levels}
    shown = [_("cannot rate") if v is None or v != v else
             f"{v:g} · {names.get(v, '')}".rstrip(" ·") for v in scores.values()]
    table = pd.DataFrame({_("Score"): shown}, index=pd.Index(list(scores), name=_("Rater")))
    return md_table(table)


def disagreements(engine: Engine, min_spread: float = 2.0) -> list[Disagreement]:
    """Items whose scores on a dimension differ by ``min_spread`` points or more."""
    df = ratings_frame(engine).dropna(subset=["score"])
    if df.empty:
        return []
    g = df.groupby(["item_id", "dimension"])["score"]
    spread = (g.max() - g.min())
    hits = spread[spread >= min_spread].sort_values(ascending=False)
    with read_session(engine) as s:
        adj = {(a.item_id, a.dimension): a for a in s.exec(select(Adjudication)).all()}
    out = []
    for (item, dim), sp in hits.items():
        sub = df[(df["item_id"] == item) & (df["dimension"] == dim)]
        a = adj.get((item, dim))
        out.append(Disagreement(item, dim, float(sp), dict(zip(sub["rater"], sub["score"],
                                                               strict=True)),
                                a.score if a else None, a.note if a else ""))
    return out


def save_adjudication(engine: Engine, admin_id: int, item_id: str, dimension: str,
                      score: int | None, note: str) -> None:
    """Store (or replace) the adjudicated score; the raters' own ratings are never touched."""
    if "\x00" in note:
        raise H2HError(Msg("the note contains a NUL character (\\u0000); remove it and save "
                           "again"))
    rubric = current_rubric(engine)
    dim = rubric.dimension(dimension)
    if score is not None:
        score = dim.parse_score(score)
    with write_session(engine) as s:
        if s.get(Item, item_id) is None:
            raise H2HError(Msg("no item '{item_id}'", item_id=item_id))
        row = s.exec(select(Adjudication).where(Adjudication.item_id == item_id,
                                                Adjudication.dimension == dimension)
                     .with_for_update()).first()
        now = utcnow()
        if row is None:
            row = Adjudication(item_id=item_id, dimension=dimension, created_at=now)
        row.score, row.note, row.admin_id, row.updated_at = score, note.strip(), admin_id, now
        s.add(row)
