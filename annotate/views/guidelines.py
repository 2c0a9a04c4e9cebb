"""The rubric in full: the guidelines and the anchor of every level of every dimension."""

import streamlit as st

from annotate.resources import cached_rubric, engine
from annotate.session import identity

if identity() is None:
    st.stop()
rubric = cached_rubric(engine())
st.title("Guidelines")
st.markdown(rubric.guidelines)
st.divider()
for d in rubric.dimensions:
    applies = "all tasks" if d.tasks is None else ", ".join(d.tasks)
    st.subheader(d.label)
    st.caption(f"Applies to: {applies}")
    if d.description:
        st.write(d.description)
    st.table({"Score": [f"{lv.value} · {lv.label}" for lv in d.levels],
              "What it looks like": [lv.anchor for lv in d.levels]})
st.caption(f"Rubric “{rubric.name}”, version {rubric.version}")
