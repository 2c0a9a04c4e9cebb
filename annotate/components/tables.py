"""Admin tables that read like the report: readable headers, one rounding rule (3 decimals for
coefficients, 2 for scale points, shares as percentages, scores as whole numbers), rubric
labels for dimensions. The cells stay numbers, so the columns still sort; only their display
is formatted (``st.column_config``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import pandas as pd
import streamlit as st

__all__ = ["Kind", "column_config", "show_table"]

Kind = Literal["coef", "points", "share", "count", "score", "text", "bool"]

_FORMAT = {"coef": "%.3f", "points": "%.2f", "share": "percent", "count": "%d",
           "score": "%g"}


def column_config(columns: Mapping[str, tuple[str, Kind]]) -> dict:
    """``{column: (header, kind)}`` -> Streamlit column configs."""
    out = {}
    for col, (head, kind) in columns.items():
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
    st.dataframe(df[[c for c in columns if c in df.columns]], hide_index=True, key=key,
                 column_config=column_config(columns))
