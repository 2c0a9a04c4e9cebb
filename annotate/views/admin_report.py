"""Admin: the paper-ready report (the same files as `h2h report`), as one download."""

import streamlit as st

from annotate import state
from annotate.resources import engine
from annotate.services.render import md_text
from annotate.services.reporting import report_zip
from annotate.session import require

require("admin")
st.title("Report")
st.write("HTML (self-contained), Markdown, LaTeX tables (booktabs), a CSV per table, every "
         "figure as PNG and SVG, and a manifest for reproducibility. The numbers are those of "
         "`h2h analyze --json` with the same settings.")
c = st.columns(3)
B = c[0].select_slider("Bootstrap resamples (B)", [200, 500, 1000, 2000, 5000], value=1000)
seed = c[1].number_input("Seed", 0, 2**31 - 1, 0)
figures = c[2].toggle("Export figures as PNG/SVG", value=True)
if st.button("Build report", type="primary", key="h2h_build_report"):
    with st.spinner("Computing statistics and drawing figures…"):
        data, bundle = report_zip(engine(), B=B, seed=int(seed), figures=figures)
    st.session_state[state.REPORT_ZIP] = data
    st.session_state[state.REPORT_VERDICTS] = [r["verdict"]["text"]
                                               for r in bundle["calibration"].values()]
if state.REPORT_ZIP in st.session_state:
    st.download_button("Download report (zip)", st.session_state[state.REPORT_ZIP],
                       "h2h-report.zip", "application/zip", key="h2h_dl_report")
    for v in st.session_state.get(state.REPORT_VERDICTS, []):
        st.info(md_text(v))
