"""The rubric in full: the guidelines and the anchor of every level of every dimension."""

import streamlit as st

from annotate.i18n import _
from annotate.resources import cached_rubric, engine
from annotate.services.render import md_formatting, md_text
from annotate.session import identity

if identity() is None:
    st.stop()
rubric = cached_rubric(engine())
st.title(_("Guidelines"))
st.markdown(md_formatting(rubric.guidelines))
st.divider()
for d in rubric.dimensions:
    applies = _("all tasks") if d.tasks is None else ", ".join(_(t) for t in d.tasks)
    st.subheader(md_text(d.label))
    st.caption(md_text(_("Applies to: {tasks}").format(tasks=applies)))
    if d.description:
        st.markdown(md_formatting(d.description))
    st.table({_("Score"): [md_text(f"{lv.value} · {lv.label}") for lv in d.levels],
              _("What it looks like"): [md_formatting(lv.anchor) for lv in d.levels]})
st.caption(md_text(_("Rubric “{name}”, version {version}").format(name=rubric.name,
                                                                  version=rubric.version)))
