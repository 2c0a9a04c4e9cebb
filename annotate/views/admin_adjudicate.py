"""Admin: items whose scores spread by two points or more, and their adjudication."""

import streamlit as st

from annotate.resources import cached_rubric, engine
from annotate.services.admin import disagreements, item_of, save_adjudication
from annotate.services.render import (
    caption_html,
    conversation_html,
    md_table,
    md_text,
    response_html,
)
from annotate.session import require
from data.errors import H2HError
from data.quality import set_gold

who = require("admin")
st.title("Adjudication")
queue = disagreements(engine(), min_spread=2)
open_ = [d for d in queue if d.adjudicated is None and not d.note]
st.write(f"{len(queue)} item × dimension pairs with a spread of 2 points or more; "
         f"{len(open_)} not adjudicated yet.")
if not queue:
    st.stop()
dim_label = {x.key: x.label for x in cached_rubric(engine()).dimensions}
labels = [f"{d.item_id} · {dim_label.get(d.dimension, d.dimension)} · spread {d.spread:g}"
          + (" · done" if d.adjudicated is not None or d.note else "") for d in queue]
pick = st.selectbox("Disagreement", range(len(queue)), format_func=labels.__getitem__)
d = queue[pick]
item = item_of(engine(), d.item_id)
left, right = st.columns(2)
with left:
    st.html(caption_html(f"model {item.model} · condition {item.condition or '—'} · "
                         f"task {item.task}"))
    st.html(conversation_html(item.context.get("turns", [])))
    st.html(response_html(item.response))
with right:
    dim = cached_rubric(engine()).dimension(d.dimension)
    names = {lv.value: lv.label for lv in dim.levels}
    # a score reads as on the form, "4 · Good", never as the stored float "4.0000"
    st.table(md_table({"Rater": list(d.scores),
                       "Score": ["cannot rate" if v is None or v != v else
                                 f"{v:g} · {names.get(v, '')}".rstrip(" ·")
                                 for v in d.scores.values()]}))
    with st.form(f"adj-{d.item_id}-{d.dimension}"):
        values = list(dim.values)
        score = st.radio("Adjudicated score", values, horizontal=True,
                         index=values.index(int(d.adjudicated)) if d.adjudicated is not None
                         else None)
        note = st.text_area("Note", value=d.note)
        gold = st.checkbox("Also make it the gold score for training (the note is the "
                           "rationale raters will read)", key="h2h_adj_gold")
        if st.form_submit_button("Save adjudication", type="primary", key="h2h_adj_save"):
            save_adjudication(engine(), who.rater_id, d.item_id, d.dimension, score, note)
            msg = "Saved. The raters' own scores are unchanged."
            if gold:
                try:
                    set_gold(engine(), d.item_id, d.dimension, score, note, who.rater_id)
                except H2HError as exc:
                    st.error(md_text(exc))
                else:
                    msg += " It is now a gold score."
            st.success(msg)
