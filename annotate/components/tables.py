"""Admin tables that read like the report: readable headers, one rounding rule (3 decimals for
coefficients, 2 for scale points, shares as whole percentages, scores as whole numbers — the
same as :mod:`annotate.services.formats` for tables of text), rubric labels for dimensions.
The cells stay numbers, so the columns still sort; only their display is formatted
(``st.column_config``), and a missing value shows as "—" (never "None"). Headers (marked
``N_``) and text cells that are messages (``Msg``: statuses, readings, verdicts, flags) show in
the tab's language; other text (names, ids, rubric labels) as it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import pandas as pd
import streamlit as st

from annotate.i18n import _, tr
from annotate.services.formats import NONE

__all__ = ["Kind", "column_config", "show_table", "translated", "rows_frame"]

Kind = Literal["coef", "points", "share", "count", "score", "text", "bool"]

_FORMAT = {"coef": "%.3f", "points": "%.2f", "share": "%.0f%%", "count": "%d",
           "score": "%g"}


def column_config(columns: Mapping[str, tuple[str, Kind]]) -> dict:
    """``{column: (header, kind)}`` -> Streamlit column configs."""
    out = {}
    for col, (head, kind) in columns.items():
        head = _(head)
        if kind in _FORMAT:
            out[col] = st.column_config.NumberColumn(head, format=_FORMAT[kind])
        elif kind == "bool":
            out[col] = st.column_config.CheckboxColumn(head)
        else:
            out[col] = st.column_config.TextColumn(head)
    return out


def show_table(df: pd.DataFrame, columns: Mapping[str, tuple[str, Kind]], *,
               key: str | None = None) -> None:
    """``df`` with only ``columns`` shown, in that order, headed and formatted as given."""
    shown = translated(df[[c for c in columns if c in df.columns]])
    for c, (_head, kind) in columns.items():
        if kind == "share" and c in shown.columns:  # shown as a whole percentage
            shown[c] = pd.to_numeric(shown[c], errors="coerce") * 100
    # a missing value shows as "—", as on every page (Streamlit prints "None" by default)
    st.dataframe(shown, hide_index=True, key=key, column_config=column_config(columns),
                 placeholder=NONE)


def rows_frame(rows: list[dict]) -> pd.DataFrame:
    """A DataFrame of ``rows`` (dicts) with their message keys and cells in the tab's
    language (translated before pandas stores them as plain text)."""
    return pd.DataFrame([{tr(k): tr(v) for k, v in r.items()} for r in rows])


def translated(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its message cells (``Msg``) in the tab's language; numbers, names and
    other text unchanged."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object:
            out[c] = out[c].map(tr)
    return out.rename(columns=tr, index=tr)  # labels too ("Rater A")
