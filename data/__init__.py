"""The h2htalk data layer: the study database, its migrations and the file formats.

Imports neither streamlit nor the LLM SDKs.
"""

from .engine import get_engine, read_session, resolve_url, write_session
from .errors import FormatError, H2HError, Problem
from .importing import (
                        ImportResult,
                        export_items,
                        export_ratings_csv,
                        import_item_records,
                        import_rating_records,
)
from .items import ItemRecord, read_items
from .raters import add_rater, authenticate, deactivate_rater, list_raters
from .rating_service import save_rating
from .ratings import RatingRecord, read_ratings
from .rubric import Dimension, Level, Rubric, load_default_rubric, load_rubric, parse_rubric
from .study import current_rubric, get_study, init_study, set_rubric

__all__ = [
    "get_engine", "read_session", "write_session", "resolve_url",
    "FormatError", "H2HError", "Problem",
    "ImportResult", "export_items", "export_ratings_csv", "import_item_records",
    "import_rating_records",
    "ItemRecord", "read_items", "RatingRecord", "read_ratings",
    "add_rater", "authenticate", "deactivate_rater", "list_raters", "save_rating",
    "Dimension", "Level", "Rubric", "load_default_rubric", "load_rubric", "parse_rubric",
    "current_rubric", "get_study", "init_study", "set_rubric",
]
