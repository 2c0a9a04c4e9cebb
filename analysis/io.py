"""Plain long CSVs for `h2h analyze --ratings/--judges`, validated with line numbers.

Scores are read as numbers where they are numbers and kept as text otherwise (category
labels); :func:`check_scores` then checks them against the scales, naming the line.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from data.errors import FormatError, Problem

__all__ = ["read_long_csv", "check_scores", "RATINGS_REQUIRED", "JUDGES_REQUIRED"]

RATINGS_REQUIRED = ("item_id", "rater", "dimension", "score")
JUDGES_REQUIRED = ("item_id", "judge", "dimension", "score")
_NA = {"", "NA", "N/A", "NAN", "CANNOT_RATE", "UNSCORED"}


def read_long_csv(path: str | Path, required: tuple[str, ...],
                  optional: tuple[str, ...] = ()) -> pd.DataFrame:
    """Read a long CSV; reject the whole file on any bad row, naming file, line and field."""
    p = Path(path)
    name = p.name
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise FormatError([Problem(str(p), None, None, "no such file")]) from None
    except UnicodeDecodeError as exc:
        raise FormatError([Problem(name, None, None, f"not valid UTF-8 ({exc.reason}); save "
                                                     "the file as UTF-8")]) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    problems = [Problem(name, 1, c, "required column is missing") for c in required
                if c not in header]
    if problems:
        raise FormatError(problems)
    keep = [c for c in header if c in required or c in optional]
    rows, seen = [], {}
    key_cols = [c for c in keep if c not in ("score", "comment")]
    for row in reader:
        n = reader.line_num
        vals = {c: (row.get(c) or "").strip() for c in keep}
        for c in required:
            if c != "score" and not vals[c]:
                problems.append(Problem(name, n, c, "must not be empty"))
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
            problems.append(Problem(name, n, None, f"duplicate row for {what} (first on line "
                                                   f"{seen[key]})"))
        seen[key] = n
        vals["line"] = n
        rows.append(vals)
    if not rows and not problems:
        problems.append(Problem(name, None, None, "the file has a header but no rows"))
    if problems:
        raise FormatError(problems)
    return pd.DataFrame(rows, columns=[*keep, "line"])


def check_scores(df: pd.DataFrame, scales, file: str) -> None:
    """Reject the file whole when a score is not on its dimension's scale (names the line)."""
    from .scales import encode_scores

    _, off = encode_scores(df, scales)
    if off:
        hint = " (leave it empty for 'cannot rate')"
        raise FormatError([Problem(file, int(df.loc[o.index, "line"]), "score",
                                   f"{o.problem} for {o.dimension}"
                                   + (hint if "not a number" in o.problem else ""))
                           for o in off])
