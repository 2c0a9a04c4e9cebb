"""The study page: what this study is and what it holds so far."""

import pandas as pd
import streamlit as st

from annotate.resources import engine
from annotate.services.overview import study_overview
from annotate.services.render import md_text
from annotate.session import require
from data.errors import H2HError

require("admin")

try:
    ov = study_overview(engine())
except H2HError as exc:
    st.error(md_text(exc))
    st.stop()

st.title(md_text(ov.name))
if ov.description:
    st.markdown(md_text(ov.description))
st.caption(md_text(f"Created {ov.created} · rubric “{ov.rubric_name}”, version "
                   f"{ov.rubric_version}"))

cols = st.columns(len(ov.items_by_task) + 1)
cols[0].metric("Scenarios", ov.n_scenarios)
for col, (task, n) in zip(cols[1:], ov.items_by_task.items(), strict=True):
    col.metric(md_text(f"{task.capitalize()} items"), n)

c1, c2 = st.columns(2)
c1.metric("Raters", ov.n_raters,
          help="Simulated raters are counted here and labelled wherever they show.")
c2.metric("Ratings", ov.n_ratings)
if ov.n_simulated_ratings:
    st.info(f"{ov.n_simulated_ratings} of the {ov.n_ratings} ratings come from "
            f"{ov.n_simulated_raters} **simulated** raters (demo data), not from people.")

st.subheader("Rubric dimensions")
# labels come from the rubric file (Markdown cells); keys and tasks are checked identifiers
st.table(pd.DataFrame([{**d, "Dimension": md_text(d["Dimension"])} for d in ov.dimensions])
         .set_index("Dimension"))
