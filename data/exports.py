"""Ratings for R and pandas, in the three layouts analyses start from (admins only: the files
name the model and condition that raters never see).

* **long** (``h2h export ratings``): one row per (item, rater, dimension) with everything
  needed to analyse it without a join: task, scenario, model, condition, the score and its
  label on the rubric version it was given under, the rater's simulated flag, timestamps.
  It re-imports unchanged (the extra columns are informational).
* **wide** (``--wide``): one row per (item, rater), a column per dimension (the rubric's keys
  in its order), for a mixed model such as ``lmer(empathy ~ condition + (1|rater) + ...)``.
* **matrix** (``h2h export matrix --dimension D``): items x raters, one dimension's scores,
  the layout of ``irr::kripp.alpha`` (transposed: ``t(as.matrix(m[-1]))``),
  ``irr::icc`` and ``krippendorff.alpha(reliability_data=m.T)``.

An empty cell is a missing value (NA in R, NaN in pandas): a "cannot rate" in the long file
(its row is there with an empty score), no score in the wide and matrix files, which do not
tell "cannot rate" from "not rated" (the long file does). Column names are listed in
docs/formats.md.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict

from sqlalchemy.engine import Engine
from sqlmodel import select

from .engine import read_session
from .errors import H2HError
from .migrate import ensure_current
from .models import Item, Rater, Rating, RubricRow
from .ratings import NO_FLAGS_SOURCE, RATING_EXPORT_COLUMNS
from .rubric import Rubric, rubric_from_definition
from .study import current_rubric_in

__all__ = ["export_ratings_csv", "export_wide_csv", "export_matrix_csv", "WIDE_ID_COLUMNS"]

WIDE_ID_COLUMNS = ("item_id", "task", "scenario", "model", "condition", "rater",
                   "rater_simulated", "red_flag", "rubric_version", "updated_at")


def _score(v: float | None) -> str:
    return "" if v is None else f"{v:g}"


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _recorded(rt: Rating) -> bool:
    """Whether the rating's flags are known (not imported from a file without flags)."""
    return rt.source != NO_FLAGS_SOURCE


def _flags(rt: Rating) -> str:
    """The long export's flags cell: ``;``-joined, empty for none raised, ``NA`` (R's and
    pandas' missing value) when they were never recorded."""
    return ";".join(rt.flags or []) if _recorded(rt) else "NA"


def _red_flag(group: list[Rating]) -> str:
    """The wide export's red_flag: true when any rating of the item carries it, false when
    none does, empty (missing) when none of them recorded flags."""
    if any("red_flag" in (rt.flags or []) for rt in group):
        return "true"
    return "false" if any(_recorded(rt) for rt in group) else ""


class _Writer:
    """``csv.writer`` that quotes every cell of a row holding a lone carriage return: the csv
    module leaves it bare when lines end in "\n", and every reader takes it for a line break."""

    def __init__(self, buf: io.StringIO) -> None:
        self._plain = csv.writer(buf, lineterminator="\n")
        self._quoted = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: list | tuple) -> None:
        cr = any("\r" in c for c in row if isinstance(c, str))
        (self._quoted if cr else self._plain).writerow(row)


def _rows(engine: Engine) -> tuple[Rubric, dict[str, Rubric], list]:
    """The current rubric, every stored rubric by version, and every rating with its item
    and rater, in the items' import order, then rater, then the rubric's dimension order."""
    ensure_current(engine)
    with read_session(engine) as s:
        rubric = current_rubric_in(s)
        versions = {r.version: rubric_from_definition(r.definition)
                    for r in s.exec(select(RubricRow)).all()}
        rows = s.exec(select(Rating, Rater, Item)
                      .join(Rater, Rating.rater_id == Rater.id)
                      .join(Item, Item.id == Rating.item_id)).all()
    order = {d.key: i for i, d in enumerate(rubric.dimensions)}
    rows = sorted(rows, key=lambda r: (r[2].position, r[2].id, r[1].name,
                                       order.get(r[0].dimension, len(order)), r[0].dimension))
    return rubric, versions, rows


def _label(versions: dict[str, Rubric], version: str, dim: str, score: float | None) -> str:
    rub = versions.get(version)
    if score is None or rub is None:
        return ""
    try:
        d = rub.dimension(dim)
    except KeyError:
        return ""
    return next((lv.label for lv in d.levels if lv.value == score), "")


def export_ratings_csv(engine: Engine) -> str:
    """Every rating, long (``RATING_EXPORT_COLUMNS``), ready for R or pandas."""
    _, versions, rows = _rows(engine)
    buf = io.StringIO()
    w = _Writer(buf)
    w.writerow(RATING_EXPORT_COLUMNS)
    for rt, rater, it in rows:
        w.writerow([rt.item_id, it.task, it.scenario, it.model, it.condition or "",
                    rater.name, _bool(rater.simulated), rt.dimension, _score(rt.score),
                    _label(versions, rt.rubric_version, rt.dimension, rt.score), rt.comment,
                    _flags(rt), rt.rubric_version, rt.created_at.isoformat(),
                    rt.updated_at.isoformat()])
    return buf.getvalue()


def export_wide_csv(engine: Engine) -> str:
    """One row per (item, rater), a column per dimension: ``WIDE_ID_COLUMNS`` + the rubric's
    dimension keys (then any older dimension that has ratings). ``red_flag`` is true when any
    of the rater's ratings of the item carries it; ``rubric_version`` and ``updated_at`` are
    those of the latest of them."""
    rubric, _, rows = _rows(engine)
    dims = [d.key for d in rubric.dimensions]
    dims += sorted({rt.dimension for rt, _, _ in rows} - set(dims))
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for r in rows:
        groups[(r[2].id, r[1].name)].append(r)
    buf = io.StringIO()
    w = _Writer(buf)
    w.writerow(WIDE_ID_COLUMNS + tuple(dims))
    for group in groups.values():  # insertion order = the items' order, then rater
        _, rater, it = group[0]
        latest = max((rt for rt, _, _ in group), key=lambda rt: rt.updated_at)
        scores = {rt.dimension: rt.score for rt, _, _ in group}
        w.writerow([it.id, it.task, it.scenario, it.model, it.condition or "", rater.name,
                    _bool(rater.simulated),
                    _red_flag([rt for rt, _, _ in group]),
                    latest.rubric_version, latest.updated_at.isoformat()]
                   + [_score(scores.get(d)) for d in dims])
    return buf.getvalue()


def export_matrix_csv(engine: Engine, dimension: str) -> str:
    """Items x raters for one dimension: ``item_id`` then one column per rater (by name), the
    items that have at least one rating on the dimension (a "cannot rate" included)."""
    rubric, _, rows = _rows(engine)
    known = [d.key for d in rubric.dimensions]
    rated = {rt.dimension for rt, _, _ in rows}
    if dimension not in known and dimension not in rated:
        raise H2HError(f"--dimension: '{dimension}' is not a dimension of this study "
                       f"(dimensions: {', '.join(known + sorted(rated - set(known)))})")
    sub = [(rt, rater, it) for rt, rater, it in rows if rt.dimension == dimension]
    raters = sorted({rater.name for _, rater, _ in sub})
    items: dict[str, dict[str, float | None]] = {}
    for rt, rater, it in sub:
        items.setdefault(it.id, {})[rater.name] = rt.score
    buf = io.StringIO()
    w = _Writer(buf)
    w.writerow(["item_id", *raters])
    for item_id, scores in items.items():
        w.writerow([item_id] + [_score(scores.get(r)) for r in raters])
    return buf.getvalue()
