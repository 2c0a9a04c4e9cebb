"""Admin: progress per rater (items done day by day) and per dimension, and each rater's
quality; a chart leads each section and its table follows."""

import streamlit as st

from annotate.components.charts import plotly_chart
from annotate.components.tables import show_table, translated
from annotate.i18n import _, labelled, language
from annotate.resources import cached_rubric, engine
from annotate.services import charts
from annotate.services.admin import (
    DIMENSION_PROGRESS_COLUMNS,
    RATER_PROGRESS_COLUMNS,
    dimension_progress,
    progress_by_day,
    rater_progress,
)
from annotate.services.i18n import N_
from annotate.services.quality import attention_failures, quality_display, rater_quality
from annotate.services.render import md_table, md_text
from annotate.session import require
from data.quality import get_settings

# the rater quality table's headers (its columns are those of `h2h quality status`)
QUALITY_HEADERS = {"rater": N_("Rater"), "qualification": N_("Qualification"),
                   "gold n": N_("Gold scores"), "gold within-1": N_("Gold within one"),
                   "gold QWK": N_("Gold QWK"), "attention": N_("Attention checks"),
                   "attention pass": N_("Passed"), "median s/item": N_("Median s/item"),
                   "speeders": N_("Speeders"), "retest n": N_("Retest n"),
                   "retest exact": N_("Retest exact"), "drift": N_("Drift"),
                   "flags": N_("Flags")}
FAILURE_HEADERS = {"rater": N_("Rater"), "item": N_("Item"),
                   "answered (UTC)": N_("Answered (UTC)"), "expected": N_("Expected"),
                   "given": N_("Given")}

require("admin")
st.title(_("Progress"))
st.subheader(_("Raters"))
raters = rater_progress(engine())
if raters.empty:
    st.info(_("No raters yet."))
else:
    days, done, assigned = progress_by_day(engine())
    if days:
        plotly_chart(charts.progress_chart(days, done, assigned, _), key="h2h_days_chart")
    else:
        st.caption(_("Nobody has saved an item yet: the chart of items done per day starts "
                     "with the first save."))
    show_table(raters, RATER_PROGRESS_COLUMNS, key="h2h_rater_progress_table")
labels = {d.key: d.label for d in cached_rubric(engine(), language()).dimensions}
dims = dimension_progress(engine())
if not dims.empty:
    st.subheader(_("Ratings per dimension (including simulated)"))
    dims["dimension"] = dims["dimension"].map(lambda k: labels.get(k, k))
    plotly_chart(charts.bars_chart(
        list(dims["dimension"]), {_("Ratings"): list(dims["ratings"] - dims["cannot_rate"]),
                                  _("Cannot rate"): list(dims["cannot_rate"])},
        _("Ratings"), True, _), key="h2h_dim_progress")
    show_table(dims, DIMENSION_PROGRESS_COLUMNS, key="h2h_dim_progress_table")

st.subheader(_("Rater quality"))
quality = rater_quality(engine())
if quality.empty:
    st.info(_("No raters yet."))
else:
    settings = get_settings(engine())
    plotly_chart(charts.qualification_chart(
        list(quality["rater"]), list(quality["gold within-1"]), list(quality["gold QWK"]),
        settings.min_within1, settings.min_qwk, _), key="h2h_quality_chart")
    shown = translated(quality_display(quality)).rename(
        columns=lambda c: _(QUALITY_HEADERS.get(c, c)))
    st.table(md_table(shown.set_index(_("Rater"))))
    st.caption(_("Gold: the latest training round against the experts' scores (within one "
                 "point; weighted κ on each ordinal dimension's full scale). Attention: checks "
                 "passed of answered. Speeders: items saved in less than half their reading "
                 "time (250 words or 500 CJK characters a minute) or under the floor in Rater "
                 "quality settings. Retest: hidden repeats scored exactly as the first time. "
                 "Drift: the rater's leniency (score minus the other raters' mean on the same "
                 "item) in their last window of ratings minus their first."))
    flagged = quality[quality["flags"] != ""]
    for _i, r in flagged.iterrows():
        st.warning(md_text(labelled(r["rater"], r["flags"])))
fails = attention_failures(engine(), labels)
with st.expander(_("Failed attention checks ({n})").format(n=len(fails))):
    if fails.empty:
        st.write(_("No rater has failed an attention check."))
    else:
        shown = translated(fails).rename(columns=lambda c: _(FAILURE_HEADERS.get(c, c)))
        st.table(md_table(shown.set_index(_("Rater"))))
st.html(f'<span data-testid="h2h-progress-ready" data-flags="{len(quality)}"></span>')
