"""Plain long CSVs for `h2h analyze --ratings/--judges`, validated with line numbers.

Scores are read as numbers where they are numbers and kept as text otherwise (category
labels); :func:`score_problems` then checks them against the scales, naming the line.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from data._files import read_csv, read_text
from data.errors import Problem, reject
from messages import Msg

__all__ = ["read_long_csv", "score_problems", "RATINGS_REQUIRED", "JUDGES_REQUIRED"]

RATINGS_REQUIRED = ("item_id", "rater", "dimension", "score")
JUDGES_REQUIRED = ("item_id", "judge", "dimension", "score")
_NA = {"", "NA", "N/A", "NAN", "CANNOT_RATE", "UNSCORED"}


def read_long_csv(path: str | Path, required: tuple[str, ...],
                  optional: tuple[str, ...] = (),
                  problems: list[Problem] | None = None) -> pd.DataFrame:
    """Read a long CSV; reject the whole file on any bad row, naming file, line and field.

    The file is read by the imports' reader (:func:`data._files.read_csv`): a short row or a
    stray quote is one problem on its line and the rows after it are still checked, so every
    problem of the file is reported at once. With ``problems`` given, the rows' problems are
    added to it and the good rows returned, for the caller to add its own (scores against
    their scales) and reject the file once (:func:`data.errors.reject`); a header without a
    required column is rejected at once either way.
    """
    name, text = read_text(path, what=Msg("rows"))
    header, found, own = read_csv(text, name)
    missing = [Problem(name, 1, c, Msg("required column is missing")) for c in required
               if c not in header]
    if missing:
        reject(own + missing)
    keep = [c for c in header if c in required or c in optional]
    rows, seen = [], {}
    key_cols = [c for c in keep if c not in ("score", "comment")]
    for n, row in found:
        vals = {c: row[c].strip() for c in keep}
        for c in required:
            if c != "score" and not vals[c]:
                own.append(Problem(name, n, c, Msg("must not be empty")))
        raw = vals["score"]
        if raw.upper() in _NA:
            vals["score"] = float("nan")
        else:
            try:
                vals["score"] = float(raw)
            except ValueError:
                vals["score"] = raw  # a category label; checked against the scale later
        key = tuple(vals[c] for c in key_cols)
        if key in seen:
            what = ", ".join(f"{c}={v}" for c, v in zip(key_cols, key, strict=True))
            own.append(Problem(name, n, None, f"duplicate row for {what} (first on line "
                                              f"{seen[key]})"))
        seen[key] = n
        vals["line"] = n
        rows.append(vals)
    if not rows and not own:
        own.append(Problem(name, None, None, Msg("the file has a header but no rows")))
    if problems is None:
        reject(own)
    else:
        problems.extend(own)
    return pd.DataFrame(rows, columns=[*keep, "line"])


def score_problems(df: pd.DataFrame, scales, file: str) -> list[Problem]:
    """A problem for each score that is not on its dimension's scale (naming the line)."""
    from .scales import encode_scores

    _, off = encode_scores(df, scales)
    hint = " (leave it empty for 'cannot rate')"
    return [Problem(file, int(df.loc[o.index, "line"]), "score",
                    f"{o.problem} for {o.dimension}" + (hint if "not a number" in o.problem
                                                        else ""))
            for o in off]

