"""Admin: progress per rater and per dimension."""

import plotly.express as px
import streamlit as st

from annotate.components.tables import show_table
from annotate.resources import cached_rubric, engine
from annotate.services.admin import (
    DIMENSION_PROGRESS_COLUMNS,
    RATER_PROGRESS_COLUMNS,
    dimension_progress,
    rater_progress,
)
from annotate.services.quality import attention_failures, quality_display, rater_quality
from annotate.services.render import md_table, md_text
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
                 title="Items done of assigned, per rater",
                 labels={"rater": "Rater", "items": "Items", "status": ""})
    st.plotly_chart(fig, key="h2h_rater_progress")
    show_table(raters, RATER_PROGRESS_COLUMNS, key="h2h_rater_progress_table")
dims = dimension_progress(engine())
if not dims.empty:
    labels = {d.key: d.label for d in cached_rubric(engine()).dimensions}
    dims["dimension"] = dims["dimension"].map(lambda k: labels.get(k, k))
    fig = px.bar(dims, x="dimension", y=["ratings", "cannot_rate"], barmode="group",
                 title="Ratings per dimension (including simulated)",
                 labels={"dimension": "Dimension", "value": "Ratings", "variable": ""})
    fig.for_each_trace(lambda t: t.update(name={"ratings": "Ratings",
                                                "cannot_rate": "Cannot rate"}[t.name]))
    st.plotly_chart(fig, key="h2h_dim_progress")
    show_table(dims, DIMENSION_PROGRESS_COLUMNS, key="h2h_dim_progress_table")

st.subheader("Rater quality")
quality = rater_quality(engine())
if quality.empty:
    st.info("No raters yet.")
else:
    st.table(md_table(quality_display(quality).set_index("rater")))
    st.caption("Gold: the latest training round against the experts' scores (within one point; "
               "weighted κ on each ordinal dimension's full scale). Attention: checks passed of "
               "answered. Speeders: items saved in less than half their reading time (250 words "
               "or 500 CJK characters a minute) or under the floor in Rater quality settings. "
               "Retest: hidden repeats scored exactly as the first time. Drift: the rater's "
               "leniency (score minus the other raters' mean on the same item) in their last "
               "window of ratings minus their first.")
    flagged = quality[quality["flags"] != ""]
    for _, r in flagged.iterrows():
        st.warning(md_text(f"{r['rater']}: {r['flags']}"))
fails = attention_failures(engine())
with st.expander(f"Failed attention checks ({len(fails)})"):
    if fails.empty:
        st.write("None.")
    else:
        st.table(md_table(fails.set_index("rater")))
st.html(f'<span data-testid="h2h-progress-ready" data-flags="{len(quality)}"></span>')
