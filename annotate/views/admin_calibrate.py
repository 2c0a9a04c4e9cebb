"""Admin: compare judge configurations against the humans, read their largest
disagreements, and try a new prompt version on the calibration set."""

from pathlib import Path

import streamlit as st

from analysis.options import AnalysisOptions
from analysis.report.figures import calibration_figure
from annotate import computed, state
from annotate.components.charts import plotly_chart
from annotate.components.heldout_calibration import held_out_section
from annotate.components.pairwise_calibration import pairwise_section
from annotate.components.tables import rows_frame, show_table
from annotate.i18n import _, labelled, language, tr
from annotate.resources import cached_rubric, engine
from annotate.services import calibration as cal
from annotate.services.admin import scores_table
from annotate.services.render import md_text, plain_html, stored_item_html
from annotate.session import require
from data.errors import H2HError
from messages import with_params

require("admin")
st.title(_("Judge calibration"))


def _score(v) -> str:
    return _("cannot rate") if v is None or v != v else f"{v:g}"


names = cal.config_names(engine(), candidates=False)
rubric_dims = cached_rubric(engine(), language()).dimensions
if not names:
    st.info(_("No judge configurations yet: run one with `h2h judge run`."))
    pairwise_section({d.key: d.label for d in rubric_dims}, [d.key for d in rubric_dims])
    st.stop()
c = st.columns([3, 1, 1, 1, 1])
chosen = c[0].multiselect(_("Configurations"), names, default=names[:4], key="h2h_cal_configs",
                          placeholder=_("Choose configurations"))
sample = c[1].number_input(_("Sample (0 = all)"), 0, 100_000, 0, key="h2h_cal_sample",
                           help=_("How many human-rated items to compare on; 0 takes all."))
seed = c[2].number_input(_("Seed"), 0, 2**31 - 1, 0, key="h2h_cal_seed")
B = c[3].select_slider("B", [200, 500, 1000, 2000], value=500, key="h2h_cal_B",
                       help=_("Bootstrap resamples"))
margin = c[4].number_input(_("Margin (QWK)"), 0.0, 0.5, 0.05, 0.01, key="h2h_cal_margin",
                           help=_("The non-inferiority margin: how much lower than the human "
                                  "ceiling a judge's QWK may be and still replace a rater."))
labels = {d.key: d.label for d in cached_rubric(engine(), language()).dimensions}
if chosen:
    try:
        items = cal.calibration_items(engine(), int(sample) or None, int(seed))
        res = computed.calibration(engine(), chosen, items=items,
                                   options=AnalysisOptions(B=B, seed=int(seed),
                                                           margin=float(margin)))
    except H2HError as exc:
        st.error(md_text(tr(exc)))
        st.stop()
    st.caption(_("{n} human-rated items · paired item bootstrap, B = {B}, seed {seed}; QWK of "
                 "each configuration and of the human ceiling against the same leave-one-out "
                 "consensus, pooled over (human, item) pairs; non-inferiority margin "
                 "{margin:g}; p-values Holm-corrected across dimensions.")
               .format(n=len(items), B=B, seed=seed, margin=margin))
    for dim_key, r in res.items():
        label = labels.get(dim_key, dim_key)  # the rubric's label, as in the table below
        st.markdown(f"**{md_text(tr(with_params(r.verdict.text, dim=label)))}**")
        for n, x in r.configs.items():
            if n != r.verdict.best:
                st.caption(md_text(labelled(n, x.verdict.text)))
        for cav in r.verdict.caveats:
            st.caption(md_text(tr(with_params(cav, dim=label))))
    show_table(rows_frame(cal.verdict_rows(res, labels)), cal.VERDICT_COLUMNS,
               key="h2h_cal_table")
    fig = calibration_figure(res, labels)
    if fig is not None:
        fig.update_xaxes(title=_("Quadratic-weighted κ (paired bootstrap 95% CI)"))
        plotly_chart(fig, key="h2h_cal_fig")

held_out_section()

st.subheader(_("Largest disagreements"))
c = st.columns(2)
cfg = c[0].selectbox(_("Configuration"), names, key="h2h_dis_cfg")
dims = list(res) if chosen else []
dim = c[1].selectbox(_("Dimension"), dims, key="h2h_dis_dim",
                     format_func=lambda k: labels.get(k, k)) if dims else None
if cfg and dim:
    rows = cal.largest_disagreements(engine(), cfg, dim, n=20)
    if rows:
        shown = [_("{item} · judge {judge:g} vs humans {humans}").format(
            item=r.item_id, judge=r.judge_score,
            humans=", ".join(f"{v:g}" for v in r.human_scores.values())) for r in rows]
        pick = st.selectbox(_("Item"), range(len(rows)), key="h2h_dis_item",
                            format_func=shown.__getitem__)
        d = rows[pick]
        item = cal.item_of(engine(), d.item_id)
        left, right = st.columns(2, gap="large")
        with left:  # what the raters (and the judge) saw: persona, memories, schedule too
            st.html(stored_item_html(item, _=_))
        with right:
            st.table(scores_table(d.human_scores,
                                  cached_rubric(engine(), language()).dimension(dim), _))
            st.metric(md_text(_("{name}'s score").format(name=cfg)), _score(d.judge_score))
            st.markdown("**" + _("The judge's reasoning") + "**")
            st.html(plain_html(d.reasoning or d.raw_reply))
    else:
        st.info(_("No scored judgments of this configuration on this dimension."))

st.subheader(_("Try a new prompt version"))
base_name = st.selectbox(_("Start from"), names, key="h2h_new_base")
base, tmpl = cal.template_of(engine(), base_name)
with st.form("h2h_new_prompt"):
    new_name = st.text_input(_("Name of the new version"), value=f"{base_name}-v2")
    system = st.text_area(_("System text"), tmpl.get("system", ""), height=200)
    user = st.text_area(_("User template (one dimension per call)"), tmpl.get("user", ""),
                        height=260)
    user_all = st.text_area(_("User template (all dimensions in one call)"),
                            tmpl.get("user_all", ""), height=160)
    base_url = st.text_input(_("Provider server URL (optional)"), "")
    go = st.form_submit_button(_("Save and run on the calibration set"), type="primary",
                               key="h2h_new_prompt_go")
if go:
    try:
        folder = Path.cwd() / "prompts"
        path = cal.write_template(folder, new_name, f"from {base_name}", system, user, user_all)
        items = cal.calibration_items(engine(), int(sample) or None, int(seed))
        proc = cal.start_prompt_version(engine(), base, new_name, path, items,
                                        folder / f"{new_name}.log", base_url or None)
    except H2HError as exc:
        st.error(md_text(tr(exc)))
    else:
        st.session_state[state.PROMPT_RUN] = (new_name, proc.pid, len(items), str(path))
        st.success(md_text(_("Saved {file}; judging {n} items in the background.").format(
            file=path.name, n=len(items))))
if run := st.session_state.get(state.PROMPT_RUN):
    name, pid, n, path = run
    done = cal.judgments_stored(engine(), name)
    st.progress(min(1.0, done / max(n, 1)),
                text=md_text(_("{name}: {done} judgments stored (template {file})").format(
                    name=name, done=done, file=Path(path).name)))
    st.button(_("Refresh"), key="h2h_new_refresh")

pairwise_section({d.key: d.label for d in rubric_dims}, [d.key for d in rubric_dims])
