"""Admin: gold scores, the training round and qualification thresholds, attention checks, and
each rater's qualification (send back to training, or release anyway)."""

import pandas as pd
import streamlit as st

from annotate import state
from annotate.components.tables import show_table
from annotate.resources import engine
from annotate.services.quality import rater_quality
from annotate.services.render import md_text
from annotate.session import require
from data import quality as q
from data.errors import FormatError, H2HError

who = require("admin")
st.title("Rater quality")
if msg := st.session_state.pop(state.ADMIN_FLASH, None):
    st.success(md_text(msg))
cur = q.get_settings(engine())
with st.expander("Training, qualification and attention-check settings"):
    with st.form("h2h_quality_settings"):
        c = st.columns(4)
        count = c[0].number_input("Gold items per training round", 1, 200, cur.training_count)
        order = c[1].selectbox("Order", ["fixed", "random"],
                               index=["fixed", "random"].index(cur.training_order))
        w1 = c[2].number_input("Needed: within one point", 0.0, 1.0, cur.min_within1, 0.05)
        qwk = c[3].number_input("Needed: weighted κ (QWK)", -1.0, 1.0, cur.min_qwk, 0.05)
        c = st.columns(4)
        rate = c[0].number_input("Attention checks (share of items)", 0.0, 0.5,
                                 cur.attention_rate, 0.01)
        secs = c[1].number_input("Speeder floor (seconds)", 0.0, 600.0, cur.min_seconds)
        win = c[2].number_input("Drift window (ratings)", 2, 1000, cur.drift_window)
        thr = c[3].number_input("Drift flag at (points)", 0.05, 10.0, cur.drift_threshold)
        if st.form_submit_button("Save settings", type="primary", key="h2h_quality_save"):
            try:
                q.save_settings(engine(), training_count=int(count), training_order=order,
                                min_within1=w1, min_qwk=qwk, attention_rate=rate,
                                min_seconds=secs, drift_window=int(win), drift_threshold=thr)
            except H2HError as exc:
                st.error(str(exc))
            else:
                st.session_state[state.ADMIN_FLASH] = "Settings saved."
                st.rerun()

st.subheader("Qualification")
table = rater_quality(engine())
show_table(table, {"rater": ("Rater", "text"), "qualification": ("Qualification", "text"),
                   "gold n": ("Gold scores", "count"), "gold within-1": ("Within one", "share"),
                   "gold QWK": ("Gold QWK", "coef"), "flags": ("Flags", "text")},
           key="h2h_qual_table")
with st.form("h2h_qual_decide"):
    c = st.columns([2, 3, 1, 1])
    name = c[0].selectbox("Rater", table["rater"].tolist(), index=None, key="h2h_qual_rater")
    note = c[1].text_input("Note (optional)")
    retrain = c[2].form_submit_button("Another training round", key="h2h_qual_retrain")
    release = c[3].form_submit_button("Release anyway", key="h2h_qual_release")
if (retrain or release) and name:
    (q.retrain if retrain else q.release)(engine(), name, who.rater_id, note)
    st.session_state[state.ADMIN_FLASH] = (f"{name} goes through another training round."
                                           if retrain else f"{name} may rate real items now.")
    st.rerun()

st.subheader("Gold items")
gold = q.gold_scores(engine())
st.write(f"{len({g.item_id for g in gold})} gold items, {len(gold)} expert scores. Upload a "
         "gold CSV (item_id, dimension, score, rationale), or promote an adjudicated score on "
         "the Adjudication page.")
if gold:
    show_table(pd.DataFrame([{"item": g.item_id, "dimension": g.dimension, "score": g.score,
                              "source": g.source, "rationale": g.rationale} for g in gold]),
               {"item": ("Item", "text"), "dimension": ("Dimension", "text"),
                "score": ("Score", "score"), "source": ("Source", "text"),
                "rationale": ("Rationale", "text")}, key="h2h_gold_table")
up = st.file_uploader("Gold CSV", type=["csv"], key="h2h_gold_upload")
if st.button("Import gold scores", disabled=up is None, key="h2h_gold_import"):
    try:
        recs = q.parse_gold_bytes(engine(), up.getvalue(), up.name)
        n = q.import_gold(engine(), recs, who.rater_id)
    except FormatError as exc:
        st.error(f"**{md_text(exc.first.file)} was rejected; nothing was imported.**")
        st.code("\n".join(str(p) for p in exc.problems[:50]), language=None)
    else:
        st.session_state[state.ADMIN_FLASH] = f"{n} gold scores stored."
        st.rerun()

st.subheader("Attention checks")
checks = q.attention_checks(engine())
st.write(f"{len(checks)} attention-check items. `h2h assign` mixes them in at the rate set "
         "above; raters cannot tell them from other items, and their answers are kept out of "
         "the analysis.")
if checks:
    st.dataframe(pd.DataFrame([{"item": c.item_id, "kind": c.kind, "tolerance": c.tolerance,
                                "expected": ", ".join(f"{d} {v}" for d, v in c.expected.items())}
                               for c in checks.values()]), hide_index=True, key="h2h_attn")
with st.form("h2h_make_checks"):
    c = st.columns(3)
    n = c[0].number_input("Instructed-response checks to create", 1, 100, 5)
    score = c[1].number_input("Score they ask for", 0, 10, 2)
    if st.form_submit_button("Create", key="h2h_make_checks_go"):
        try:
            made = q.add_instructed_checks(engine(), int(n), int(score))
        except H2HError as exc:
            st.error(str(exc))
        else:
            st.session_state[state.ADMIN_FLASH] = f"{len(made)} attention checks created."
            st.rerun()
