"""Admin: import items, ratings or a new rubric version by upload, validated like the CLI."""

import streamlit as st

from annotate.components.uploader import file_uploader
from annotate.i18n import _, option_labels, problems_of, tr
from annotate.resources import engine, forget_rubric
from annotate.services.i18n import N_
from annotate.services.render import md_text
from annotate.services.uploads import import_upload
from annotate.session import require
from data.errors import FormatError, H2HError

KINDS = {N_("Items"): ["jsonl", "json", "csv"], N_("Ratings"): ["csv"], N_("Rubric"): ["toml"]}
UPLOAD_LABELS = {"Items": N_("Items file"), "Ratings": N_("Ratings file"),
                 "Rubric": N_("Rubric file")}

require("admin")
st.title(_("Import"))
st.write(_("Files are checked completely first: if any line is wrong, nothing is imported and "
           "every problem is listed with its line. Formats: see `docs/formats.md`."))
kind = st.radio(_("What are you importing?"), list(KINDS), horizontal=True,
                format_func=option_labels(), key="h2h_import_kind")
upload = file_uploader(_(UPLOAD_LABELS[kind]), KINDS[kind], key=f"h2h_upload_{kind}",
                       help=_("Drag a file onto the box or press its button to choose one."))
update = st.checkbox(_("Replace items or ratings that changed (--update)"), key="h2h_update",
                     disabled=kind == "Rubric")
add_raters = st.checkbox(_("Create raters the study does not have yet (--add-raters); "
                           "otherwise an unknown name is an error"), key="h2h_add_raters",
                         disabled=kind != "Ratings")
if st.button(_("Import"), type="primary", disabled=upload is None, key="h2h_do_import"):
    try:
        msg = import_upload(engine(), kind.lower(), upload.name, upload.getvalue(), update,
                            add_raters)
    except FormatError as exc:
        st.error(f"**{md_text(tr(exc.head))}**")
        st.code(problems_of(exc), language=None)
    except H2HError as exc:
        st.error(md_text(tr(exc)))
    else:
        st.cache_data.clear()
        forget_rubric()
        st.success(md_text(tr(msg)))
