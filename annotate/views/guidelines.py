"""The rubric in full, in the reader's language: the guidelines and the anchor of every level
of every dimension; a text the rubric lacks in that language is shown in the rubric's own,
tagged. Rubric Markdown is drawn as HTML built by a real parser, without images, raw HTML or
unsafe links (annotate.services.render.rubric_text_html)."""

import streamlit as st

from annotate.i18n import _, language
from annotate.resources import cached_rubric, engine
from annotate.services.render import (
    language_name,
    levels_table_html,
    md_text,
    rubric_text_html,
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
if rubric.guidelines:
    st.html(rubric_text_html(rubric.guidelines, "guidelines" in getattr(rubric, "fallback", ()),
                             base, _))
st.divider()
for d in rubric.dimensions:
    applies = _("all tasks") if d.tasks is None else ", ".join(_(t) for t in d.tasks)
    st.subheader(md_text(d.label) + tag(d, "label"))
    st.caption(md_text(_("Applies to: {tasks}").format(tasks=applies)))
    if d.description:
        st.html(rubric_text_html(d.description, "description" in getattr(d, "fallback", ()),
                                 base, _))
    st.html(levels_table_html(d, (_("Score"), _("What it looks like")), base, _))
shown = [d for d in rubric.dimensions if getattr(d, "fallback", ())
         or any(getattr(lv, "fallback", ()) for lv in d.levels)]
if shown or getattr(rubric, "fallback", ()):
    st.caption(md_text(_("Texts tagged “{language}” are not translated yet; they are shown "
                         "in {language}.").format(language=language_name(base, _))))
st.caption(md_text(_("Rubric “{name}”, version {version}").format(name=rubric.name,
                                                                  version=rubric.version)))
