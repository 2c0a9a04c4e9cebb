"""The study page: what this study is and what it holds so far."""

import streamlit as st

from annotate.components.charts import plotly_chart
from annotate.components.tables import rows_frame
from annotate.i18n import _, language, ngettext, tr
from annotate.resources import engine
from annotate.services import charts
from annotate.services.overview import TASK_NAMES, study_overview
from annotate.services.render import md_text, untranslated_md
from annotate.session import require
from data.errors import H2HError

require("admin")

try:
    ov = study_overview(engine(), language())
except H2HError as exc:
    st.error(md_text(tr(exc)))
    st.stop()

st.title(md_text(ov.name))
if ov.waiting:  # a rater who failed training waits until an admin decides
    st.warning(ngettext(
        "{n} rater failed the training round and is waiting for your decision (another "
        "round, or release anyway): {names}.",
        "{n} raters failed the training round and are waiting for your decision (another "
        "round, or release anyway): {names}.", len(ov.waiting)).format(
        n=len(ov.waiting), names=", ".join(md_text(n) for n in ov.waiting)))
    st.page_link("views/admin_quality.py", label=_("Decide on the Rater quality page"),
                 icon=":material/verified:")
if ov.description:
    st.markdown(md_text(ov.description))


def tagged(text: str, what: str) -> str:
    """A rubric text (Markdown-escaped), tagged when shown in the rubric's own language."""
    tag = untranslated_md(ov.rubric_language, _) if what in ov.untranslated else ""
    return md_text(text) + tag


# the sentence escaped whole, then the rubric's name (escaped, maybe tagged) put in its place
line = _("Created {created} · rubric “{name}”, version {version}").format(
    created=ov.created, name="\0", version=ov.rubric_version)
st.caption(md_text(line).replace("\0", tagged(ov.rubric_name, "name")))

st.subheader(_("Items"))
if ov.coverage and any(sum(v) for v in ov.coverage.values()):
    tasks = list(ov.coverage)
    names = [tr(TASK_NAMES[t]) if t in TASK_NAMES else t for t in tasks]
    plotly_chart(charts.bars_chart(
        [n[:1].upper() + n[1:] for n in names],
        {_("rated by 2 or more"): [ov.coverage[t][2] for t in tasks],
         _("rated by 1"): [ov.coverage[t][1] for t in tasks],
         _("not rated yet"): [ov.coverage[t][0] for t in tasks]},
        _("Items (agreement needs 2 or more raters)"), True, _), key="h2h_coverage_chart")
cols = st.columns(len(ov.items_by_task) + 1)
cols[0].metric(_("Scenarios"), ov.n_scenarios)
for col, (task, n) in zip(cols[1:], ov.items_by_task.items(), strict=True):
    name = tr(TASK_NAMES[task]) if task in TASK_NAMES else task
    col.metric(md_text(_("{task} items").format(task=name[:1].upper() + name[1:])), n)

if ov.n_checks:
    st.caption(ngettext("Items and scenarios are the study's own; the {n} attention-check item "
                        "mixed into raters' queues is not counted.",
                        "Items and scenarios are the study's own; the {n} attention-check "
                        "items mixed into raters' queues are not counted.", ov.n_checks)
               .format(n=ov.n_checks))
c1, c2 = st.columns(2)
c1.metric(_("Raters"), ov.n_raters,
          help=_("Simulated raters are counted here and labelled wherever they show."))
c2.metric(_("Ratings"), ov.n_ratings)
if ov.n_simulated_ratings:
    st.info(ngettext("{n} of the {total} ratings come from {raters} **simulated** rater (demo "
                     "data), not from people.",
                     "{n} of the {total} ratings come from {raters} **simulated** raters "
                     "(demo data), not from people.", ov.n_simulated_raters).format(
        n=ov.n_simulated_ratings, total=ov.n_ratings, raters=ov.n_simulated_raters))

st.subheader(_("Rubric dimensions"))
# labels come from the rubric file (Markdown cells); keys are checked identifiers, shown as
# code: the name a file writes, in every language
dims = rows_frame([{**d, "Dimension": tagged(d["Dimension"], d["Key"]), "Key": f"`{d['Key']}`"}
                   for d in ov.dimensions])
st.table(dims.rename(columns=_).set_index(_("Dimension")))
