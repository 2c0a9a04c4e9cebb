"""Admin: live human agreement per dimension, with bootstrap CIs (analysis package)."""

import pandas as pd
import streamlit as st

from analysis.bands import krippendorff_band
from annotate.resources import engine
from annotate.services.admin import live_agreement
from annotate.session import require

require("admin")
st.title("Agreement")
B = st.select_slider("Bootstrap resamples", [200, 500, 1000, 2000], value=500)
res = live_agreement(engine(), B=B, seed=0)
rows = []
for dim, d in res["dimensions"].items():
    if "alpha" not in d:
        continue
    a = d["alpha"][d["level"]]
    ci = d["alpha_ci"]
    rows.append({"dimension": dim, "items": d["n_items"], "raters": d["n_raters"],
                 f"α ({d['level']})": a, "CI low": ci["low"], "CI high": ci["high"],
                 "reading": krippendorff_band(a), "Cohen κ quad.": d["cohen_kappa"]["quadratic"],
                 "AC1": d["gwet"]["ac1"], "exact": d["percent_exact"]})
if not rows:
    st.info("No ratings yet.")
else:
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(f"95% CIs: unit (item) bootstrap, percentile, B = {B}, seed 0. α ≥ .800 "
               "reliable, ≥ .667 tentative (Krippendorff). Includes simulated raters if any.")
    for dim, d in res["dimensions"].items():
        for n in d.get("notes", []):
            st.caption(f"{dim}: {n}")
