"""Admin: live human agreement per dimension, with bootstrap CIs (analysis package)."""

import streamlit as st

from annotate.components.tables import rows_frame, show_table
from annotate.i18n import _, labelled, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services.admin import AGREEMENT_COLUMNS, agreement_rows, live_agreement
from annotate.services.i18n import N_
from annotate.services.quality import rater_models
from annotate.services.render import md_text
from annotate.session import require

SEVERITY_COLUMNS = {"rater": (N_("Rater"), "text"),
                    "severity": (N_("Severity (logits)"), "points"),
                    "se": ("SE", "points"), "n": (N_("Ratings"), "count"),
                    "infit": (N_("Infit MnSq"), "points"), "outfit": (N_("Outfit MnSq"), "points"),
                    "flag": (N_("Flag"), "text")}

require("admin")
st.title(_("Agreement"))
B = st.select_slider(_("Bootstrap resamples"), [200, 500, 1000, 2000], value=500,
                     help=_("More resamples give steadier confidence intervals and take longer."))
res = live_agreement(engine(), B=B, seed=0)
labels = {d.key: d.label for d in cached_rubric(engine(), language()).dimensions}
rows = agreement_rows(res, labels)
if not rows:
    st.info(_("No ratings yet."))
else:
    show_table(rows_frame(rows), AGREEMENT_COLUMNS, key="h2h_agreement_table")
    st.caption(_("95% CIs: unit (item) bootstrap, percentile, B = {B}, seed 0. α ≥ .800 "
                 "reliable, ≥ .667 tentative (Krippendorff). Cohen's κ: mean over rater pairs "
                 "weighted by the items they share (pairs sharing fewer than 10 left out). "
                 "Human ceiling: each rater against the mean of the others on the same item, "
                 "pooled (raters with fewer than 10 shared items left out). Empty cells are "
                 "not estimable; the notes say why. Includes simulated raters if any.")
               .format(B=B))
    for dim, d in res.dimensions.items():
        for n in d.notes:
            st.caption(md_text(labelled(labels.get(dim, dim), n)))

st.subheader(_("Rater severity (many-facet Rasch model)"))
st.caption(_("Per dimension: each rater's severity in logits (positive = harsher than the "
             "average rater) with its standard error, and infit/outfit mean squares (1 = as the "
             "model expects; outside 0.5–1.5 is flagged when n ≥ 10). Fitted by conditional "
             "maximum likelihood; see `docs/analysis.md`."))
for dim, m in rater_models(engine()).items():
    if not m.estimable:
        st.caption(md_text(labelled(labels.get(dim, dim), m.reason)))
        continue
    st.markdown(f"**{md_text(labels.get(dim, dim))}** · "
                + _("{n} ratings").format(n=m.n_ratings))
    show_table(m.raters, SEVERITY_COLUMNS, key=f"h2h_rm_{dim}")
    misfit = int((m.items["flag"] != "").sum())
    st.caption(md_text(" ".join([_("{items} items; {misfit} flagged for misfit.").format(
        items=len(m.items), misfit=misfit)] + [tr(n) for n in m.notes])))
