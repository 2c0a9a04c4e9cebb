"""What the study page shows: name, rubric, items per task family, raters and ratings, and
who waits for an admin's decision.

Items and scenarios are the study's own: the attention-check copies mixed into raters'
queues are counted apart (``n_checks``), as a coordinator counts them.

The rubric is shown in the admin's language, as raters see it: its name and dimension labels
translated where the rubric has a translation, else in the rubric's own language (named in
``untranslated`` so the page can tag them)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from annotate.services.i18n import N_
from data.engine import read_session
from data.models import AttentionCheck, Item, Rater, Rating
from data.quality import awaiting_decision
from data.study import current_rubric, get_study
from messages import Msg, join_msgs

__all__ = ["StudyOverview", "study_overview", "TASK_NAMES"]

# the built-in task families, translated where shown (a rubric's own tasks show as written)
TASK_NAMES = {t: Msg(t) for t in (N_("dialogue"), N_("recollection"), N_("itinerary"))}
_KINDS = {"binary": Msg("binary"), "categorical": Msg("categorical")}


@dataclass(frozen=True)
class StudyOverview:
    name: str
    description: str
    created: str
    rubric_name: str
    rubric_version: str
    dimensions: list[dict]
    """A row per dimension: ``Dimension`` (label), ``Key``, ``Scale``, ``Applies to``."""
    items_by_task: dict[str, int]
    n_scenarios: int
    n_raters: int
    n_simulated_raters: int
    n_ratings: int
    n_simulated_ratings: int
    rubric_language: str = "en"
    """The rubric's own language: the one of any text shown untranslated."""
    untranslated: frozenset[str] = frozenset()
    """What is shown in ``rubric_language`` for want of a translation: ``"name"`` and the
    keys of dimensions whose label is."""
    n_checks: int = 0
    """Attention-check items (not in ``items_by_task`` nor ``n_scenarios``)."""
    waiting: tuple[str, ...] = ()
    """Raters who failed training and wait for a decision (Rater quality page)."""
    coverage: dict[str, tuple[int, int, int]] | None = None
    """Per task family: the study's items rated by nobody yet, by one rater, by two or more
    (what agreement can be computed on)."""


def _coverage(rows, tasks) -> dict[str, tuple[int, int, int]]:
    out = {t: [0, 0, 0] for t in tasks}
    for task, n in rows:
        out.setdefault(task, [0, 0, 0])[0 if not n else 1 if n == 1 else 2] += 1
    return {t: tuple(v) for t, v in out.items()}


def study_overview(engine: Engine, language: str | None = None) -> StudyOverview:
    """The study at a glance, its rubric in ``language`` (its own language when ``None``)."""
    study = get_study(engine)
    rubric = current_rubric(engine)
    if language is not None:
        rubric = rubric.in_language(language)
    with read_session(engine) as s:
        checks = select(AttentionCheck.item_id)
        own = Item.id.not_in(checks)
        by_task = dict(s.exec(select(Item.task, func.count()).where(own)
                              .group_by(Item.task)).all())
        n_scen = s.exec(select(func.count(func.distinct(Item.scenario))).where(own)).one()
        n_checks = s.exec(select(func.count()).select_from(AttentionCheck)).one()
        per_item = (select(Rating.item_id, func.count(func.distinct(Rating.rater_id))
                           .label("n")).group_by(Rating.item_id).subquery())
        raters_per = s.exec(select(Item.task, per_item.c.n)
                            .join(per_item, per_item.c.item_id == Item.id, isouter=True)
                            .where(own)).all()
        n_raters = s.exec(select(func.count()).select_from(Rater)
                          .where(Rater.role == "rater")).one()
        n_sim = s.exec(select(func.count()).select_from(Rater)
                       .where(Rater.simulated == True)).one()  # noqa: E712
        n_ratings = s.exec(select(func.count()).select_from(Rating)).one()
        n_sim_r = s.exec(select(func.count()).select_from(Rating).join(Rater)
                         .where(Rater.simulated == True)).one()  # noqa: E712
    # the column names are the table's headers (translated on the page)
    dims = [{N_("Dimension"): d.label, N_("Key"): d.key,
             N_("Scale"): f"{d.min}–{d.max}" if d.kind == "ordinal" else
             _KINDS.get(d.kind, d.kind),
             N_("Applies to"): join_msgs(", ", [TASK_NAMES.get(t, t) for t in d.tasks])
             if d.tasks else Msg("all tasks")}
            for d in rubric.dimensions]
    return StudyOverview(
        name=study.name, description=study.description,
        created=study.created_at.strftime("%Y-%m-%d %H:%M UTC"),
        rubric_name=rubric.name, rubric_version=rubric.version, dimensions=dims,
        items_by_task={t: by_task.get(t, 0) for t in rubric.tasks},
        n_scenarios=n_scen, n_raters=n_raters, n_simulated_raters=n_sim,
        n_ratings=n_ratings, n_simulated_ratings=n_sim_r, rubric_language=rubric.language,
        n_checks=n_checks, waiting=tuple(awaiting_decision(engine)),
        coverage=_coverage(raters_per, rubric.tasks),
        untranslated=frozenset({"name"} & getattr(rubric, "fallback", frozenset())
                               | {d.key for d in rubric.dimensions
                                  if "label" in getattr(d, "fallback", ())}))
