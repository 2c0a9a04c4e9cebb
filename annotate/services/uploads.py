"""Uploaded files go through exactly the CLI's validation and all-or-nothing import."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from data._files import decode
from data.importing import import_item_records, import_rating_records, item_tasks, study_tasks
from data.items import parse_item_bytes
from data.ratings import parse_rating_bytes
from data.rubric import parse_rubric
from data.study import current_rubric, set_rubric

__all__ = ["import_upload"]


def import_upload(engine: Engine, kind: str, name: str, data: bytes, update: bool) -> str:
    """Validate and import one uploaded file; returns a one-line summary."""
    if kind == "items":
        records = parse_item_bytes(data, name, study_tasks(engine))
        res = import_item_records(engine, records, file=name, update=update)
        return f"Items from {name}: {res}"
    if kind == "ratings":
        records = parse_rating_bytes(data, name, current_rubric(engine), item_tasks(engine))
        res = import_rating_records(engine, records, file=name, update=update)
        return f"Ratings from {name}: {res}"
    if kind == "rubric":
        text = decode(data, name, what="rubric")
        rubric = parse_rubric(text, file=name)
        version, changed = set_rubric(engine, rubric, source=text)
        return (f"Rubric '{rubric.name}' version {version} is now current" if changed else
                f"Rubric version {version} was already current; nothing changed")
    raise ValueError(f"unknown upload kind {kind!r}")
