"""The h2htalk data layer: the study database, its migrations and the file formats.

Imports neither streamlit nor the LLM SDKs. The names below load on first use (PEP 562), so
importing one light module such as ``data.errors`` or ``data.cli`` does not pull in the
database layer; ``h2h --help`` stays fast (issue 16).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "get_engine", "read_session", "write_session", "resolve_url",
    "FormatError", "H2HError", "Problem",
    "ImportResult", "export_items", "export_ratings_csv", "export_wide_csv",
    "export_matrix_csv", "import_item_records", "import_items_file",
    "import_rating_records",
    "ItemRecord", "read_items", "RatingRecord", "read_ratings",
    "add_rater", "authenticate", "deactivate_rater", "list_raters", "save_rating",
    "Dimension", "Level", "Rubric", "load_default_rubric", "load_rubric", "parse_rubric",
    "current_rubric", "get_study", "init_study", "set_rubric", "SessionEnded",
]

# public name -> the module of this package that defines it
_WHERE = {
    "get_engine": "engine", "read_session": "engine", "write_session": "engine",
    "resolve_url": "engine",
    "FormatError": "errors", "H2HError": "errors", "Problem": "errors",
    "ImportResult": "importing", "export_items": "importing", "export_ratings_csv": "exports",
    "export_wide_csv": "exports", "export_matrix_csv": "exports",
    "import_item_records": "importing", "import_items_file": "importing",
    "import_rating_records": "importing",
    "ItemRecord": "items", "read_items": "items",
    "add_rater": "raters", "authenticate": "raters", "deactivate_rater": "raters",
    "list_raters": "raters",
    "save_rating": "rating_service",
    "RatingRecord": "ratings", "read_ratings": "ratings",
    "Dimension": "rubric", "Level": "rubric", "Rubric": "rubric",
    "load_default_rubric": "rubric", "load_rubric": "rubric", "parse_rubric": "rubric",
    "current_rubric": "study", "get_study": "study", "init_study": "study",
    "set_rubric": "study",
    "SessionEnded": "sessions",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'data' has no attribute '{name}'")
    value = getattr(import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
