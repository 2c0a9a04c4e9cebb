"""The Calibration page's part on `h2h calibrate auto`: the study's frozen split by scenario,
and each configuration improved from the study's ratings against its base on the test part,
with the items that served as its exemplars."""

from __future__ import annotations

import streamlit as st

from annotate.components.tables import rows_frame, show_table
from annotate.i18n import _
from annotate.resources import engine
from annotate.services import calibration as cal
from annotate.services.render import md_text

__all__ = ["held_out_section"]


def held_out_section() -> None:
    st.subheader(_("Calibrated on held-out items"))
    view = cal.held_out_view(engine())
    if view is None:
        st.info(_("No held-out calibration yet: `h2h calibrate auto --base NAME` improves a "
                  "configuration from these ratings and tests it on items it never saw."))
        return
    p = view.parts
    st.caption(_("The study's split by scenario (seed {seed}, made once): train {train} "
                 "items (exemplars come from here), dev {dev} (the choice is made here), test "
                 "{test} (looked at once, for the result). Mean QWK over the dimensions "
                 "against the leave-one-out consensus, paired item bootstrap.").format(
        seed=view.seed, train=p.get("train", 0), dev=p.get("dev", 0), test=p.get("test", 0)))
    if not view.rows:
        return
    show_table(rows_frame(view.rows), cal.HELD_OUT_COLUMNS, key="h2h_heldout_table")
    for name, ids in view.exemplars.items():
        with st.expander(_("Exemplar items of {name}").format(name=name)):
            st.caption(_("Left out of every comparison of this configuration with the "
                         "humans: their human scores are in its prompt."))
            st.markdown(md_text(", ".join(ids) or _("none")))
