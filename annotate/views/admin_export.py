"""Admin: downloads for R / pandas (ratings long CSV) and items JSONL."""

import streamlit as st

from annotate.resources import engine
from annotate.session import require
from data.importing import export_items, export_ratings_csv

require("admin")
st.title("Export")
st.download_button("Ratings (long CSV)", export_ratings_csv(engine()), "ratings.csv",
                   "text/csv", key="h2h_dl_ratings")
st.caption("One row per item, rater and dimension; empty score = cannot rate; "
           "rater_simulated marks demo raters.")
st.download_button("Items (JSON Lines)", export_items(engine()), "items.jsonl",
                   "application/jsonl", key="h2h_dl_items")
