"""Ratings files: long CSV ``item_id, rater, dimension, score[, comment]``.

One row per (item, rater, dimension). An empty score (or ``NA``) means "cannot rate". The
extra columns that ``h2h export ratings`` writes are accepted too, so an export re-imports:
``flags`` (``;``-separated) is kept (no such column, or ``NA`` in it, leaves the flags
unrecorded: new ratings are marked so, ratings already stored keep theirs); the others (task,
scenario, model, condition, ``rater_simulated``, ``score_label``, ``rubric_version``,
``created_at``, ``updated_at``) are informational and ignored on import.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from messages import Msg, message_of

from ._files import Limits, decode, read_csv, read_text, short
from .errors import Problem, reject
from .raters import name_problem
from .rubric import Rubric

__all__ = ["NO_FLAGS_SOURCE", "RatingRecord", "RATING_COLUMNS", "RATING_EXPORT_COLUMNS",
           "parse_ratings", "read_ratings", "parse_rating_bytes"]

RATING_COLUMNS = ("item_id", "rater", "dimension", "score")
# the long export's columns, in its order (data/exports.py; docs/formats.md)
RATING_EXPORT_COLUMNS = ("item_id", "task", "scenario", "model", "condition", "rater",
                         "rater_simulated", "dimension", "score", "score_label", "comment",
                         "flags", "rubric_version", "created_at", "updated_at")
_KNOWN_FLAGS = ("red_flag",)
# Rating.source of a rating imported without its flags (no flags column, or "NA" in it):
# whether a red flag was raised is not known, and the report leaves it out of the shares
NO_FLAGS_SOURCE = "import-no-flags"


@dataclass(frozen=True)
class RatingRecord:
    line: int
    item_id: str
    rater: str
    dimension: str
    score: int | None
    comment: str
    #: None when the file has no flags column: not recorded (not "no flag raised")
    flags: tuple[str, ...] | None


def parse_ratings(text: str, file: str, rubric: Rubric,
                  item_tasks: dict[str, str]) -> list[RatingRecord]:
    """Validate every row against the rubric and the study's items (``id -> task``)."""
    header, rows, problems = read_csv(text, file)
    for h in header:
        if h not in RATING_EXPORT_COLUMNS:
            problems.append(Problem(file, 1, h, Msg("unknown column (allowed: {columns})",
                                                    columns=", ".join(RATING_EXPORT_COLUMNS))))
    missing = [Problem(file, 1, h, Msg("required column is missing (header must have "
                                       "{columns})", columns=", ".join(RATING_COLUMNS)))
               for h in RATING_COLUMNS if h not in header]
    if missing:  # the rows cannot be read without them; a bad row's structure can wait
        reject(problems + missing)
    out: list[RatingRecord] = []
    seen: dict[tuple[str, str, str], int] = {}
    for n, row in rows:
        vals = {k: v.strip() for k, v in row.items()}
        bad = False
        for col in ("item_id", "rater", "dimension"):
            if not vals[col]:
                problems.append(Problem(file, n, col, Msg("must not be empty")))
                bad = True
        if bad:
            continue
        item_id, rater, dim_key = vals["item_id"], vals["rater"], vals["dimension"]
        if item_id not in item_tasks:
            problems.append(Problem(file, n, "item_id", Msg(
                "unknown item {item_id} (import the items first)", item_id=short(item_id))))
            continue
        if (why := name_problem(rater)) is not None:
            problems.append(Problem(file, n, "rater", why))
            continue
        try:
            dim = rubric.dimension(dim_key)
        except KeyError as exc:
            problems.append(Problem(file, n, "dimension", exc.args[0]))
            continue
        task = item_tasks[item_id]
        if not dim.applies_to(task):
            problems.append(Problem(file, n, "dimension", Msg("'{dim_key}' does not apply to "
                                                              "task '{task}' of item '{item_id}'",
                                                              dim_key=dim_key, task=task,
                                                              item_id=item_id)))
            continue
        try:
            score = dim.parse_score(vals["score"])
        except ValueError as exc:
            problems.append(Problem(file, n, "score", message_of(exc)))
            continue
        flags = tuple(f for f in (p.strip() for p in vals.get("flags", "").split(";")) if f) \
            if "flags" in header and vals["flags"] != "NA" else None
        unknown_flags = [f for f in flags or () if f not in _KNOWN_FLAGS]
        if unknown_flags:
            problems.append(Problem(file, n, "flags", Msg("unknown flag '{flag}' (known: "
                                                          "{flags})", flag=unknown_flags[0],
                                                          flags=", ".join(_KNOWN_FLAGS))))
            continue
        key = (item_id, rater, dim_key)
        if key in seen:
            problems.append(Problem(file, n, None, Msg("duplicate rating of item '{item_id}' by "
                                                       "'{rater}' on '{dim_key}' (first on line "
                                                       "{line})", item_id=item_id, rater=rater,
                                                       dim_key=dim_key, line=seen[key])))
            continue
        seen[key] = n
        # the comment as written: it is the rater's words (other cells are keys, stripped)
        out.append(RatingRecord(n, item_id, rater, dim_key, score, row.get("comment", ""),
                                flags))
    if not problems and not out:
        problems.append(Problem(file, None, None, Msg("the file has a header but no rating rows")))
    reject(problems)  # every problem of the file at once, in the order of its lines
    return out


def read_ratings(path: str | Path, rubric: Rubric, item_tasks: dict[str, str],
                 limits: Limits | None = None) -> list[RatingRecord]:
    name, text = read_text(path, what=Msg("ratings"), limits=limits)
    return parse_ratings(text, name, rubric, item_tasks)


def parse_rating_bytes(data: bytes, name: str, rubric: Rubric,
                       item_tasks: dict[str, str]) -> list[RatingRecord]:
    return parse_ratings(decode(data, name, what=Msg("ratings")), name, rubric, item_tasks)
