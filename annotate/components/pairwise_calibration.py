"""The Calibration page's part on pairwise judges: each one's position bias and consistency,
its agreement with the humans (κ on a/b/tie beside the humans' own κ, τ-b between the
rankings) and the strengths of the models, humans and judge side by side."""

from __future__ import annotations

import streamlit as st

from analysis.report.sec_pairwise import pairwise_figure
from annotate.components.charts import plotly_chart
from annotate.components.tables import rows_frame, show_table
from annotate.i18n import _
from annotate.resources import engine
from annotate.services import calibration as cal
from annotate.services.render import md_text

__all__ = ["pairwise_section"]


def _share(v: float | None, lo: float | None, hi: float | None) -> str:
    if v is None:
        return _("not estimable")
    return f"{v:.1%}" + ("" if lo is None or hi is None else f" [{lo:.1%}, {hi:.1%}]")


def pairwise_section(labels: dict[str, str], order: list[str], B: int = 500,
                     seed: int = 0) -> None:
    st.subheader(_("Pairwise judges"))
    ps = cal.pairwise_summary(engine(), B=B, seed=seed)
    if ps is None:
        st.info(_("No pairwise judge yet: compare pairs with `h2h judge pairwise` (pairs "
                  "from `h2h pairs make`)."))
        return
    st.caption(_("Each pair judged in both orders; pairs on which the two orders disagree "
                 "count as ties. 95% CIs from a bootstrap over scenarios, B = {B}, seed "
                 "{seed}.").format(B=B, seed=seed))
    for j in ps.judges:
        b = j.bias
        st.markdown("**" + md_text(j.name) + "**")
        st.caption(_("The reply shown first won {share} of {n} decisive answers (50%: no "
                     "position bias); the two orders agreed on {consistency} of {pairs} "
                     "pairs.").format(share=_share(b.first_share, b.first_low, b.first_high),
                                      n=b.n_decisive, pairs=b.n_complete,
                                      consistency=_share(b.consistency, b.consistency_low,
                                                         b.consistency_high)))
        show_table(rows_frame(cal.pairwise_rows(j, labels)), cal.PAIRWISE_COLUMNS,
                   key=f"h2h_pw_table_{j.hash[:8]}")
        fig = pairwise_figure(ps, j, labels, order)
        if fig is not None:
            fig.fig.update_layout(width=None)
            plotly_chart(fig.fig, key=f"h2h_pw_fig_{j.hash[:8]}")
