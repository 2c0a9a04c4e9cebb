"""Admin: the paper-ready report (the same files as `h2h report`), as one download."""

import streamlit as st

from annotate import state
from annotate.components.tables import rows_frame
from annotate.i18n import _, language
from annotate.resources import cached_rubric, engine
from annotate.services.render import md_table
from annotate.services.reporting import report_zip
from annotate.session import require

require("admin")
st.title(_("Report"))
st.write(_("A self-contained HTML report that opens with the findings, the same summary in "
           "Markdown, LaTeX tables for an ACL column or page (`\\input{tables/agreement.tex}`, "
           "with `preamble.tex`), a CSV per table, every figure as PDF, SVG and PNG, and a "
           "manifest for reproducibility. The numbers are those of `h2h analyze --json` with "
           "the same settings. The report itself is written in English, for the paper."))
c = st.columns(3)
B = c[0].select_slider(_("Bootstrap resamples (B)"), [200, 500, 1000, 2000, 5000], value=1000)
seed = c[1].number_input(_("Seed"), 0, 2**31 - 1, 0)
figures = c[2].toggle(_("Export figures (PDF, SVG, PNG)"), value=True)
if st.button(_("Build report"), type="primary", key="h2h_build_report"):
    with st.spinner(_("Computing statistics and drawing figures…")):
        data, bundle, summary = report_zip(engine(), B=B, seed=int(seed), figures=figures)
    st.session_state[state.REPORT_ZIP] = data
    st.session_state[state.REPORT_VERDICTS] = summary
if state.REPORT_ZIP in st.session_state:
    st.download_button(_("Download report (zip)"), st.session_state[state.REPORT_ZIP],
                       "h2h-report.zip", "application/zip", key="h2h_dl_report")
    summary = st.session_state.get(state.REPORT_VERDICTS) or []
    if summary:
        st.subheader(_("Findings"))
        # each dimension by its label in the admin's language (the report's own is English)
        labels = {d.key: d.label for d in cached_rubric(engine(), language()).dimensions}
        table = rows_frame([{**{k: v for k, v in r.items() if k != "key"},
                             "Dimension": labels.get(r["key"], r["Dimension"])}
                            for r in summary]).rename(columns={"Dimension": _("Dimension")})
        st.table(md_table(table.set_index(_("Dimension"))))
        st.caption(_("Estimates with 95% CIs in brackets (bootstrap B = {B}, seed {seed}). "
                     "The report explains each verdict and lists the caveats.")
                   .format(B=B, seed=seed))
