"""Admin: companion models ranked with the humans' validity at the judge's scale (PPI++),
and which items the psychologists should rate next (active labelling)."""

import streamlit as st

from annotate import computed
from annotate.components.charts import plotly_chart
from annotate.components.tables import rows_frame, show_table
from annotate.i18n import _, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services import ranking
from annotate.services.calibration import config_names
from annotate.services.render import md_text
from annotate.session import require
from data.errors import H2HError

require("admin")
st.title(_("Model ranking"))
names = config_names(engine())
if not names:
    st.info(_("No judge configurations yet: run one with `h2h judge run` or import scores "
              "with `h2h judge import`."))
    st.stop()
c = st.columns([3, 2, 1, 1])
judge = c[0].selectbox(_("Judge"), names, key="h2h_rank_judge")
estimator = c[1].selectbox(_("Combined estimate"), ["ppi++", "ppi", "human", "judge"],
                           key="h2h_rank_estimator")
B = c[2].select_slider("B", [200, 500, 1000, 2000], value=500, key="h2h_rank_B")
seed = int(c[3].number_input(_("Seed"), 0, 2**31 - 1, 0, key="h2h_rank_seed"))
labels = {d.key: d.label for d in cached_rubric(engine(), language()).dimensions}
try:
    res = computed.board(engine(), judge, estimator=estimator, B=B, seed=seed)
except H2HError as exc:
    st.error(md_text(tr(exc)))
    st.stop()
st.caption(md_text(res["meta"]["method_sentence"]))
show_table(rows_frame(ranking.table_rows(res, labels)), ranking.COLUMNS, key="h2h_rank_table")
if (fig := ranking.forest(res, labels)) is not None:
    plotly_chart(fig, key="h2h_rank_fig")
for line in ranking.grouped_notes(res, labels):
    st.caption(md_text(line))
st.subheader(_("Which items to rate next"))
budget = int(st.number_input(_("Budget (items)"), 1, 100_000, 50, key="h2h_rank_budget"))
try:
    st.text(ranking.suggestion(engine(), judge, budget=budget, seed=seed))
except H2HError as exc:
    st.info(md_text(tr(exc)))
    st.stop()
if st.button(_("Deal these items to the raters"), key="h2h_rank_deal"):
    st.success(md_text(ranking.deal(engine(), judge, budget=budget, seed=seed)))
