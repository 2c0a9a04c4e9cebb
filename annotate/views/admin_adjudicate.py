"""Admin: items whose scores spread by two points or more, and their adjudication — with the
context the raters saw (persona, memories, schedule, conversation, reply) and every level's
anchor."""

import streamlit as st

from annotate.components.rating_form import anchored_radio
from annotate.i18n import _, language, ngettext, tr
from annotate.resources import cached_rubric, engine
from annotate.services.admin import disagreements, item_of, save_adjudication, scores_table
from annotate.services.overview import TASK_NAMES
from annotate.services.render import caption_html, md_text, stored_item_html
from annotate.session import require
from data.errors import H2HError
from data.quality import set_gold

who = require("admin")
st.title(_("Adjudication"))
queue = disagreements(engine(), min_spread=2)
open_ = [d for d in queue if d.adjudicated is None and not d.note]
st.write(ngettext("{n} item × dimension pair with a spread of 2 points or more; {open} not "
                  "adjudicated yet.",
                  "{n} item × dimension pairs with a spread of 2 points or more; {open} not "
                  "adjudicated yet.", len(queue)).format(n=len(queue), open=len(open_)))
if not queue:
    st.stop()
rubric = cached_rubric(engine(), language())
dim_label = {x.key: x.label for x in rubric.dimensions}
labels = [" · ".join([d.item_id, dim_label.get(d.dimension, d.dimension),
                      _("spread {spread:g}").format(spread=d.spread)]
                     + ([_("done")] if d.adjudicated is not None or d.note else []))
          for d in queue]
pick = st.selectbox(_("Disagreement"), range(len(queue)), format_func=labels.__getitem__)
d = queue[pick]
item = item_of(engine(), d.item_id)
dim = rubric.dimension(d.dimension)
left, right = st.columns(2, gap="large")
with left:  # what the raters saw, in the same layout as the rating page
    task = tr(TASK_NAMES[item.task]) if item.task in TASK_NAMES else item.task
    st.html(caption_html(_("model {model} · condition {condition} · task {task}").format(
        model=item.model, condition=item.condition or "—", task=task)))
    st.html(stored_item_html(item, _=_))
with right:
    st.table(scores_table(d.scores, dim, _))
    with st.form(f"adj-{d.item_id}-{d.dimension}"):
        score = anchored_radio(dim, _("Adjudicated score: {dimension}").format(
            dimension=md_text(dim.label)), key=f"h2h_adj_score_{d.item_id}_{d.dimension}",
            index=list(dim.values).index(int(d.adjudicated)) if d.adjudicated is not None
            else None)
        note = st.text_area(_("Note"), value=d.note)
        gold = st.checkbox(_("Also make it the gold score for training (the note is the "
                             "rationale raters will read)"), key="h2h_adj_gold")
        if st.form_submit_button(_("Save adjudication"), type="primary", key="h2h_adj_save"):
            try:
                save_adjudication(engine(), who.rater_id, d.item_id, d.dimension, score, note)
                msg = _("Saved. The raters' own scores are unchanged.")
                if gold:
                    set_gold(engine(), d.item_id, d.dimension, score, note, who.rater_id)
                    msg += " " + _("It is now a gold score.")
            except H2HError as exc:
                st.error(md_text(tr(exc)))
            else:
                st.success(msg)
