"""A judge is not held against items whose human scores it was shown.

A configuration made by `h2h calibrate auto` shows human-scored exemplars in its prompt. On
those items its agreement with the humans says nothing about the judge (the answer was in the
prompt), so every judge-vs-human statistic of that configuration leaves them out and says how
many. The judgments frame marks such rows in an ``exemplar`` column (the study adapter sets it
from the configuration's stored exemplars); a frame without the column has none.
"""

from __future__ import annotations

import pandas as pd

from messages import nMsg

__all__ = ["held_against", "exemplar_note"]


def held_against(judges: pd.DataFrame | None
                 ) -> tuple[pd.DataFrame | None, dict[tuple[str, str], int]]:
    """``judges`` without the rows about a judge's own exemplar items, and per (judge,
    dimension) how many items were left out.

    >>> df = pd.DataFrame({"item_id": ["a", "b", "a"], "judge": ["j", "j", "k"],
    ...                    "dimension": "e", "score": 3.0, "exemplar": [True, False, False]})
    >>> kept, left = held_against(df)
    >>> kept["item_id"].tolist(), left
    (['b', 'a'], {('j', 'e'): 1})
    """
    if judges is None or "exemplar" not in judges.columns:
        return judges, {}
    mask = judges["exemplar"].fillna(False).astype(bool)
    gone = judges[mask]
    left = {(str(j), str(d)): int(g["item_id"].nunique())
            for (j, d), g in gone.groupby(["judge", "dimension"])}
    return judges[~mask].drop(columns="exemplar").reset_index(drop=True), left


def exemplar_note(n: int) -> str:
    """What a judge's block says when its exemplar items were left out."""
    return nMsg("{n} item left out: it was an exemplar in this judge's prompt (its human "
                "scores were shown to the judge)",
                "{n} items left out: they were exemplars in this judge's prompt (their human "
                "scores were shown to the judge)", n)
