"""Uploaded files go through exactly the CLI's validation and all-or-nothing import."""

from __future__ import annotations

import io

from sqlalchemy.engine import Engine

from data._files import decode
from data.importing import import_item_stream, import_rating_records, item_tasks, study_tasks
from data.items import iter_item_file
from data.ratings import parse_rating_bytes
from data.rubric import parse_rubric
from data.study import current_rubric, set_rubric
from messages import Msg

__all__ = ["import_upload"]


def import_upload(engine: Engine, kind: str, name: str, data: bytes, update: bool,
                  add_raters: bool = False) -> Msg:
    """Validate and import one uploaded file; returns a one-line summary (a message). A
    ratings file's unknown rater is an error unless ``add_raters``."""
    if kind == "items":
        records = iter_item_file(io.BytesIO(data), name, study_tasks(engine))
        res = import_item_stream(engine, records, file=name, update=update)
        return Msg("Items from {file}: {result}", file=name, result=res.message())
    if kind == "ratings":
        records = parse_rating_bytes(data, name, current_rubric(engine), item_tasks(engine))
        res = import_rating_records(engine, records, file=name, update=update,
                                    add_raters=add_raters)
        return Msg("Ratings from {file}: {result}", file=name, result=res.message())
    if kind == "rubric":
        text = decode(data, name, what=Msg("rubric"))
        rubric = parse_rubric(text, file=name)
        version, changed = set_rubric(engine, rubric, source=text)
        return (Msg("Rubric '{name}' version {version} is now current", name=rubric.name,
                    version=version) if changed else
                Msg("Rubric version {version} was already current; nothing changed",
                    version=version))
    raise ValueError(f"unknown upload kind {kind!r}")
