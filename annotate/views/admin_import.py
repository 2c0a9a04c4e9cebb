"""Admin: import items, ratings or a new rubric version by upload, validated like the CLI."""

import streamlit as st

from annotate.resources import engine, forget_rubric
from annotate.services.render import md_text
from annotate.services.uploads import import_upload
from annotate.session import require
from data.errors import FormatError, H2HError

require("admin")
st.title("Import")
st.write("Files are checked completely first: if any line is wrong, nothing is imported and "
         "every problem is listed with its line. Formats: see docs/formats.md.")
kind = st.radio("What are you importing?", ["Items", "Ratings", "Rubric"], horizontal=True,
                key="h2h_import_kind")
types = {"Items": ["jsonl", "json", "csv"], "Ratings": ["csv"], "Rubric": ["toml"]}[kind]
upload = st.file_uploader(f"{kind} file", type=types, key=f"h2h_upload_{kind}")
update = st.checkbox("Replace items or ratings that changed (--update)", key="h2h_update",
                     disabled=kind == "Rubric")
if st.button("Import", type="primary", disabled=upload is None, key="h2h_do_import"):
    try:
        msg = import_upload(engine(), kind.lower(), upload.name, upload.getvalue(), update)
    except FormatError as exc:
        st.error(f"**{md_text(exc.first.file)} was rejected; nothing was imported.**")
        st.code("\n".join(str(p) for p in exc.problems[:50]), language=None)
    except H2HError as exc:
        st.error(md_text(exc))
    else:
        st.cache_data.clear()
        forget_rubric()
        st.success(md_text(msg))
