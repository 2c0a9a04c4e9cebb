"""Admin: live agreement — each section a chart first, then its table and its notes in words:
humans per dimension (α, κ and the human ceiling against the .667 / .800 bands), judges
against the ceiling, and rater severity (many-facet Rasch model)."""

import streamlit as st

from annotate import computed
from annotate.components.charts import plotly_chart
from annotate.i18n import _, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services import charts
from annotate.services.agreement_view import agreement_view, judge_view, severity_view
from annotate.services.render import md_table, md_text
from annotate.session import require


def show(table, notes) -> None:
    """A table in the reader's language (headers, messages in cells), then its notes."""
    shown = table.map(tr).rename(columns=_).rename_axis(_(table.index.name or ""))
    st.table(md_table(shown))
    for note in notes:
        st.caption(md_text(note.say(tr)))


require("admin")
st.title(_("Agreement"))
B = st.select_slider(_("Bootstrap resamples"), [200, 500, 1000, 2000], value=500,
                     help=_("More resamples give steadier confidence intervals and take longer."))
labels = {d.key: d.label for d in cached_rubric(engine(), language()).dimensions}
res = computed.agreement(engine(), B=B, seed=0, judges=True)
view = agreement_view(res, labels)
st.subheader(_("Humans, per dimension"))
if not view.keys:
    st.info(_("No ratings yet."))
else:
    plotly_chart(charts.agreement_chart(view.labels, {
        _("Krippendorff's α"): view.alpha, _("Cohen's κ (quadratic)"): view.kappa,
        _("Human ceiling QWK"): view.ceiling}, _), key="h2h_agreement_chart")
    show(view.table, view.notes)
    st.caption(_("95% CIs: unit (item) bootstrap, percentile, B = {B}, seed 0. Human ceiling: "
                 "each rater against the mean of the others on the same item, pooled (raters "
                 "with fewer than 10 shared items left out). Includes simulated raters if any.")
               .format(B=B))

judges = judge_view(res, labels)
if judges is not None:
    st.subheader(_("Judges against the human ceiling"))
    plotly_chart(charts.judges_chart(judges.labels, judges.ceiling, judges.judges, _),
                    key="h2h_judges_chart")
    show(judges.table.set_index(judges.table.columns[0]), [])  # by judge
    with st.expander(_("Notes on the judges ({n})").format(n=len(judges.notes))):
        for note in judges.notes:
            st.caption(md_text(note.say(tr)))

st.subheader(_("Rater severity (many-facet Rasch model)"))
sev = severity_view(computed.rater_models(engine()), labels)
if sev.points:
    plotly_chart(charts.severity_chart(sev.points, sev.dimensions, _), key="h2h_sev_chart")
st.caption(_("Severity in logits (positive = harsher than the average rater) with its standard "
             "error; infit/outfit mean squares (1 = as the model expects). Fitted by "
             "conditional maximum likelihood; see `docs/analysis.md`."))
for tab, (_label, n, table) in zip(st.tabs([md_text(t[0]) for t in sev.tables] or [" "]),
                                  sev.tables, strict=False):
    with tab:
        st.caption(_("{n} ratings").format(n=n))
        show(table, [])
for note in sev.notes:
    st.caption(md_text(note.say(tr)))
