"""Plotly figures on the app's pages, with every name in them shown literally.

Plotly reads a subset of HTML in every label it draws (tick labels, legend names, hover
text): a rater name or a rubric label such as ``<span style="background-image:url(…)">``
would be styled, and its URL fetched, by every admin's browser. Every page draws its figures
through :func:`plotly_chart`, which escapes them first
(:func:`analysis.report.figures.inert`, the report's figures use the same), and a test keeps
``st.plotly_chart`` out of the pages.
"""

from __future__ import annotations

import streamlit as st

from analysis.report.figures import inert

__all__ = ["plotly_chart"]


def plotly_chart(fig, key: str, **kw) -> None:
    """``st.plotly_chart`` of ``fig`` with every name in it made inert."""
    st.plotly_chart(inert(fig), key=key, **kw)
