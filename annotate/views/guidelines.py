"""The rubric in full: the guidelines and the anchor of every level of every dimension."""

import streamlit as st

from annotate.resources import cached_rubric, engine
from annotate.services.render import md_formatting, md_text
from annotate.session import identity

if identity() is None:
    st.stop()
rubric = cached_rubric(engine())
st.title("Guidelines")
st.markdown(md_formatting(rubric.guidelines))
st.divider()
for d in rubric.dimensions:
    applies = "all tasks" if d.tasks is None else ", ".join(d.tasks)
    st.subheader(md_text(d.label))
    st.caption(md_text(f"Applies to: {applies}"))
    if d.description:
        st.markdown(md_formatting(d.description))
    st.table({"Score": [md_text(f"{lv.value} · {lv.label}") for lv in d.levels],
              "What it looks like": [md_formatting(lv.anchor) for lv in d.levels]})
st.caption(md_text(f"Rubric “{rubric.name}”, version {rubric.version}"))
