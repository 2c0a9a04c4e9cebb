"""Admin: downloads for R / pandas (ratings long CSV), items JSONL, and a study backup."""

from datetime import UTC, datetime

import streamlit as st

from annotate.resources import engine
from annotate.session import require
from data.backup import snapshot_bytes
from data.importing import export_items, export_ratings_csv

require("admin")
st.title("Export")
st.download_button("Ratings (long CSV)", export_ratings_csv(engine()), "ratings.csv",
                   "text/csv", key="h2h_dl_ratings")
st.caption("One row per item, rater and dimension; empty score = cannot rate; "
           "rater_simulated marks demo raters.")
st.download_button("Items (JSON Lines)", export_items(engine()), "items.jsonl",
                   "application/jsonl", key="h2h_dl_items")

st.subheader("Backup")
stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
# Made only when clicked (a callable), with connections of its own, while raters keep saving.
st.download_button("Study snapshot (SQLite file)", lambda: snapshot_bytes(engine()),
                   f"h2h-study-{stamp}.db", "application/vnd.sqlite3", key="h2h_dl_backup",
                   on_click="ignore")
st.caption("A consistent copy of the whole study as one SQLite file, taken while raters keep "
           "working: every rating saved before you click is in it. Keep it somewhere safe; "
           "`h2h restore FILE --db STUDY` brings it back (into a file, or into an empty "
           "PostgreSQL database). For scheduled backups use `h2h backup` (docs/app.md).")
