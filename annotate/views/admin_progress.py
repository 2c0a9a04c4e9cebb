"""Admin: progress per rater and per dimension."""

import plotly.express as px
import streamlit as st

from annotate.resources import engine
from annotate.services.admin import dimension_progress, rater_progress
from annotate.session import require

require("admin")
st.title("Progress")
raters = rater_progress(engine())
if raters.empty:
    st.info("No raters yet.")
else:
    long = raters.melt(id_vars="rater", value_vars=["done", "assigned"], var_name="status",
                       value_name="items")
    fig = px.bar(long, x="rater", y="items", color="status", barmode="overlay",
                 title="Items done of assigned, per rater")
    st.plotly_chart(fig, key="h2h_rater_progress")
    st.dataframe(raters, hide_index=True)
dims = dimension_progress(engine())
if not dims.empty:
    fig = px.bar(dims, x="dimension", y=["ratings", "cannot_rate"], barmode="group",
                 title="Ratings per dimension (including simulated)")
    st.plotly_chart(fig, key="h2h_dim_progress")
    st.dataframe(dims, hide_index=True)
