"""The rubric in full, in the reader's language: the guidelines and the anchor of every level
of every dimension; a text the rubric lacks in that language is shown in the rubric's own,
tagged."""

import streamlit as st

from annotate.i18n import _, language
from annotate.resources import cached_rubric, engine
from annotate.services.render import (
    language_name,
    md_formatting,
    md_text,
    untranslated_html,
    untranslated_md,
)
from annotate.session import identity

if identity() is None:
    st.stop()
rubric = cached_rubric(engine(), language())
base = rubric.language  # the language of any text shown untranslated


def tag(obj, fld: str) -> str:
    return untranslated_md(base, _) if fld in getattr(obj, "fallback", ()) else ""


st.title(_("Guidelines"))
if "guidelines" in getattr(rubric, "fallback", ()):
    st.html(f"<p>{untranslated_html(base, _)}</p>")
st.markdown(md_formatting(rubric.guidelines))
st.divider()
for d in rubric.dimensions:
    applies = _("all tasks") if d.tasks is None else ", ".join(_(t) for t in d.tasks)
    st.subheader(md_text(d.label) + tag(d, "label"))
    st.caption(md_text(_("Applies to: {tasks}").format(tasks=applies)))
    if d.description:
        st.markdown(md_formatting(d.description) + tag(d, "description"))
    st.table({_("Score"): [md_text(f"{lv.value} · {lv.label}") + tag(lv, "label")
                           for lv in d.levels],
              _("What it looks like"): [md_formatting(lv.anchor) + tag(lv, "anchor")
                                        for lv in d.levels]})
shown = [d for d in rubric.dimensions if getattr(d, "fallback", ())
         or any(getattr(lv, "fallback", ()) for lv in d.levels)]
if shown or getattr(rubric, "fallback", ()):
    st.caption(md_text(_("Texts tagged “{language}” are not translated yet; they are shown "
                         "in {language}.").format(language=language_name(base, _))))
st.caption(md_text(_("Rubric “{name}”, version {version}").format(name=rubric.name,
                                                                  version=rubric.version)))
