"""A file uploader that speaks the tab's language: Streamlit's own texts in the box (the
button, the size and type limits, the text shown while a file is dragged over it) are
replaced by the catalog's (:func:`annotate.services.render.uploader_css`); in English,
Streamlit's own are shown."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from annotate.i18n import _, language, tr
from annotate.services.i18n import DEFAULT
from annotate.services.render import UPLOADER_TEXTS, uploader_css
from messages import join_msgs

__all__ = ["file_uploader"]


def file_uploader(label: str, types: list[str], key: str, help: str | None = None
                  ) -> UploadedFile | None:
    """``st.file_uploader`` for one file of ``types``, its box's texts in the tab's language."""
    if language() != DEFAULT:
        size = f"{st.get_option('server.maxUploadSize')}MB"
        names = tr(join_msgs(", ", [t.upper() for t in types]))
        st.html(uploader_css(key, _(UPLOADER_TEXTS["button"]),
                             _(UPLOADER_TEXTS["limits"]).format(size=size, types=names),
                             _(UPLOADER_TEXTS["dragging"])))
    return st.file_uploader(label, type=types, key=key, help=help)
