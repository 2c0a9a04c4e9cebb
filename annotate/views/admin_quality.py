"""Admin: gold scores, the training round and qualification thresholds, attention checks, and
each rater's qualification (send back to training, or release anyway)."""

import streamlit as st

from annotate import state
from annotate.components.charts import plotly_chart
from annotate.components.tables import show_table, translated
from annotate.components.uploader import file_uploader
from annotate.i18n import _, language, option_labels, problems_of, tr
from annotate.resources import cached_rubric, engine
from annotate.services import charts
from annotate.services.i18n import N_
from annotate.services.quality import (
    attention_counts,
    checks_table,
    gold_table,
    rater_quality,
)
from annotate.services.render import md_table, md_text
from annotate.session import require
from data import quality as q
from data.errors import FormatError, H2HError
from messages import Msg, nMsg

ORDERS = {"fixed": N_("fixed"), "random": N_("random")}
GOLD_HEADERS = {"item": N_("Item"), "dimension": N_("Dimension"), "score": N_("Score"),
                "source": N_("Source"), "rationale": N_("Rationale")}

who = require("admin")
st.title(_("Rater quality"))
if msg := st.session_state.pop(state.ADMIN_FLASH, None):
    st.success(md_text(tr(msg)))
cur = q.get_settings(engine())
with st.expander(_("Training, qualification and attention-check settings")):
    with st.form("h2h_quality_settings"):
        c = st.columns(4)
        count = c[0].number_input(_("Gold items per training round"), 1, 200,
                                  cur.training_count)
        order = c[1].selectbox(_("Order"), list(ORDERS), format_func=option_labels(ORDERS),
                               index=list(ORDERS).index(cur.training_order))
        w1 = c[2].number_input(_("Needed: within one point"), 0.0, 1.0, cur.min_within1, 0.05)
        qwk = c[3].number_input(_("Needed: weighted κ (QWK)"), -1.0, 1.0, cur.min_qwk, 0.05)
        c = st.columns(4)
        rate = c[0].number_input(_("Attention checks (share of items)"), 0.0, 0.5,
                                 cur.attention_rate, 0.01)
        secs = c[1].number_input(_("Speeder floor (seconds)"), 0.0, 600.0, cur.min_seconds)
        win = c[2].number_input(_("Drift window (ratings)"), 2, 1000, cur.drift_window)
        thr = c[3].number_input(_("Drift flag at (points)"), 0.05, 10.0, cur.drift_threshold)
        if st.form_submit_button(_("Save settings"), type="primary", key="h2h_quality_save"):
            try:
                q.save_settings(engine(), training_count=int(count), training_order=order,
                                min_within1=w1, min_qwk=qwk, attention_rate=rate,
                                min_seconds=secs, drift_window=int(win), drift_threshold=thr)
            except H2HError as exc:
                st.error(md_text(tr(exc)))
            else:
                st.session_state[state.ADMIN_FLASH] = Msg("Settings saved.")
                st.rerun()

st.subheader(_("Qualification"))
table = rater_quality(engine())
if table[["gold within-1", "gold QWK"]].notna().to_numpy().any():  # someone finished a round
    plotly_chart(charts.qualification_chart(
        list(table["rater"]), list(table["gold within-1"]), list(table["gold QWK"]),
        cur.min_within1, cur.min_qwk, _), key="h2h_qual_chart")
show_table(table, {"rater": (N_("Rater"), "text"),
                   "qualification": (N_("Qualification"), "text"),
                   "gold n": (N_("Gold scores"), "count"),
                   "gold within-1": (N_("Within one"), "share"),
                   "gold QWK": (N_("Gold QWK"), "coef"), "flags": (N_("Flags"), "text")},
           key="h2h_qual_table")
with st.form("h2h_qual_decide"):
    c = st.columns([2, 3, 2, 2], vertical_alignment="bottom")
    name = c[0].selectbox(_("Rater"), table["rater"].tolist(), index=None,
                          placeholder=_("Choose a rater"), key="h2h_qual_rater")
    note = c[1].text_input(_("Note (optional)"))
    retrain = c[2].form_submit_button(_("Another training round"), key="h2h_qual_retrain")
    release = c[3].form_submit_button(_("Release anyway"), key="h2h_qual_release")
if (retrain or release) and name:
    try:
        (q.retrain if retrain else q.release)(engine(), name, who.rater_id, note)
    except H2HError as exc:
        st.error(md_text(tr(exc)))
    else:
        st.session_state[state.ADMIN_FLASH] = (
            Msg("{name} goes through another training round.", name=name) if retrain
            else Msg("{name} may rate real items now.", name=name))
        st.rerun()

st.subheader(_("Gold items"))
labels = {d.key: d.label for d in cached_rubric(engine(), language()).dimensions}
gold = gold_table(engine(), labels)
st.write(_("{items} gold items, {scores} expert scores. Upload a gold CSV (`item_id`, "
           "`dimension`, `score`, `rationale`), or promote an adjudicated score on the "
           "Adjudication page.")
         .format(items=gold["item"].nunique(), scores=len(gold)))
if not gold.empty:  # does the gold set span each scale? (a set of only 5s trains nothing)
    levels = sorted({int(v) for v in gold["score"]})
    dims = list(dict.fromkeys(gold["dimension"]))
    plotly_chart(charts.bars_chart(dims, {str(v): [int(((gold["dimension"] == d)
                                                         & (gold["score"] == v)).sum())
                                                     for d in dims] for v in levels},
                                      _("Expert scores (by level)"), True, _, ordered=True),
                    key="h2h_gold_chart")
    # the rationales whole (a table that wraps: nothing cut at the page's edge)
    # a score is a level of its scale: 5, not 5.0000 (a user trial)
    st.table(md_table(translated(gold).assign(score=[f"{v:g}" for v in gold["score"]])
                      .rename(columns=lambda c: _(GOLD_HEADERS[c])).set_index(_("Item"))))
up = file_uploader(_("Gold CSV"), ["csv"], key="h2h_gold_upload",
                   help=_("Drag a file onto the box or press its button to choose one."))
if st.button(_("Import gold scores"), disabled=up is None, key="h2h_gold_import"):
    try:
        recs = q.parse_gold_bytes(engine(), up.getvalue(), up.name)
        n = q.import_gold(engine(), recs, who.rater_id)
    except FormatError as exc:
        st.error(f"**{md_text(tr(exc.head))}**")
        st.code(problems_of(exc), language=None)
    except H2HError as exc:
        st.error(md_text(tr(exc)))
    else:
        st.session_state[state.ADMIN_FLASH] = nMsg("{n} gold score stored.",
                                                   "{n} gold scores stored.", n)
        st.rerun()

st.subheader(_("Attention checks"))
answers = attention_counts(engine())
if answers.empty:
    st.caption(_("Nobody has answered an attention check yet: the chart of checks passed per "
                 "rater starts with the first answer."))
else:
    plotly_chart(charts.attention_chart(list(answers["rater"]), list(answers["passed"]),
                                        list(answers["answered"]), _), key="h2h_attn_chart")
checks = checks_table(engine(), labels)
st.write(_("{n} attention-check items. `h2h assign` mixes them in at the rate set above; raters "
           "cannot tell them from other items, and their answers are kept out of the analysis.")
         .format(n=len(checks)))
if not checks.empty:
    show_table(checks,
               {"item": (N_("Item"), "text"), "kind": (N_("Kind"), "text"),
                "tolerance": (N_("Tolerance (points)"), "score"),
                "expected": (N_("Expected"), "text")}, key="h2h_attn")
    if any(c.kind == "pair" for c in q.attention_checks(engine()).values()):
        # the kind's cell held this too, and was cut at 1366 px (a user trial)
        st.caption(_("A side-by-side pair check: the reply copied with an instruction is to "
                     "be chosen as much better on every dimension (\"chosen\")."))
with st.form("h2h_make_checks"):
    c = st.columns(3)
    n = c[0].number_input(_("Instructed-response checks to create"), 1, 100, 5)
    score = c[1].number_input(_("Score they ask for"), 0, 10, 2)
    if st.form_submit_button(_("Create"), key="h2h_make_checks_go"):
        try:
            made = q.add_instructed_checks(engine(), int(n), int(score))
        except H2HError as exc:
            st.error(md_text(tr(exc)))
        else:
            st.session_state[state.ADMIN_FLASH] = nMsg("{n} attention check created.",
                                                       "{n} attention checks created.",
                                                       len(made))
            st.rerun()
