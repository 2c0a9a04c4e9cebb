"""Admin: downloads for R / pandas (ratings long or wide, one dimension as an items x raters
matrix), items JSONL, and a study backup. Admins only: the files name each reply's model and
condition."""

from datetime import UTC, datetime

import streamlit as st

from annotate.i18n import _, language
from annotate.resources import cached_rubric, engine
from annotate.services.render import md_text
from annotate.session import require
from data.backup import snapshot_bytes
from data.exports import export_matrix_csv, export_ratings_csv, export_wide_csv
from data.importing import export_items

require("admin")
st.title(_("Export"))
st.caption(_("The files are written in English (column names, labels), as R, pandas and the "
             "command line read them."))
st.download_button(_("Ratings (long CSV)"), export_ratings_csv(engine()), "ratings.csv",
                   "text/csv", key="h2h_dl_ratings")
st.caption(_("One row per item, rater and dimension, with task, scenario, model, condition, "
             "the score and its label, the rubric version, timestamps (UTC); empty score = "
             "cannot rate; `rater_simulated` marks demo raters. Re-imports unchanged."))
st.download_button(_("Ratings (wide CSV)"), export_wide_csv(engine()), "ratings_wide.csv",
                   "text/csv", key="h2h_dl_wide")
st.caption(_("One row per item and rater, a column per dimension."))
dims = {d.label: d.key for d in cached_rubric(engine(), language()).dimensions}
label = st.selectbox(_("Dimension for the items × raters matrix"), list(dims), key="h2h_mx_dim")
if label:
    st.download_button(md_text(_("{dimension}: items × raters (CSV)").format(dimension=label)),
                       export_matrix_csv(engine(), dims[label]), f"{dims[label]}_matrix.csv",
                       "text/csv", key="h2h_dl_matrix")
    st.caption(_("The layout of `irr::icc`; `irr::kripp.alpha` and `krippendorff.alpha` want "
                 "it transposed (raters × items). Empty = no score."))
st.download_button(_("Items (JSON Lines)"), export_items(engine()), "items.jsonl",
                   "application/jsonl", key="h2h_dl_items")
st.caption(_("Every item as imported; the attention-check copies made here are left out (in "
             "another study they would be a model's replies): make them again there."))

st.subheader(_("Backup"))
stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
# Made only when clicked (a callable), with connections of its own, while raters keep saving.
st.download_button(_("Study snapshot (SQLite file)"), lambda: snapshot_bytes(engine()),
                   f"h2h-study-{stamp}.db", "application/vnd.sqlite3", key="h2h_dl_backup",
                   on_click="ignore")
st.caption(_("A consistent copy of the whole study as one SQLite file, taken while raters keep "
             "working: every rating saved before you click is in it. Keep it somewhere safe; "
             "`h2h restore FILE --db STUDY` brings it back (into a file, or into an empty "
             "PostgreSQL database). For scheduled backups use `h2h backup` (`docs/app.md`)."))
