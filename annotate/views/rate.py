"""The rating page: your next item, or any item of your own queue (``?item=ID``)."""

import streamlit as st

from annotate import state
from annotate.components.pair_form import pair_form, queue_kind
from annotate.components.rating_form import rating_form
from annotate.components.training_form import needs_training_page, training_form
from annotate.i18n import _
from annotate.resources import engine
from annotate.services import queue
from annotate.session import require

who = require("rater")
if needs_training_page(who.rater_id):  # studies with gold items: train and qualify first
    training_form(who)
    st.stop()
if "item" in st.query_params:  # a link to one of the rater's single items
    st.session_state[state.QUEUE_KIND] = "items"
if queue_kind(who) == "pairs":  # side-by-side comparisons (h2h assign --pairs)
    pair_form(who)
    st.stop()
item = st.query_params.get("item")
if item is not None:
    pos = queue.position_of_item(engine(), who.rater_id, item)
    del st.query_params["item"]
    if pos is None:
        st.error(_("That item is not in your queue."))
        st.stop()
    st.session_state[state.RATE_POS] = pos
rating_form(who)
