"""A number that means nothing is not printed (issue 34): no admin page shows "None", "nan" or
a blank that reads as a number; a missing value shows as "—" on every page (the one format of
annotate.services.formats), in st.dataframe (its placeholder) and st.table alike."""

from __future__ import annotations

import io
import re

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from annotate import state
from annotate.app import ADMIN_PAGES
from annotate.services.formats import NONE
from tests.annotate.conftest import APP_DIR
from tests.annotate.page_text import page_texts

LEAK = re.compile(r"(?<![\w.])(None|nan|NaN|NaT|<NA>)(?![\w])")


def _page(name: str, who) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / name), default_timeout=90)
    at.session_state[state.IDENTITY] = who
    return at.run()


def _cells(data: bytes) -> list[tuple[str, object]]:
    table = pa.ipc.open_stream(io.BytesIO(data)).read_all()
    return [(name, v) for name in table.column_names for v in table.column(name).to_pylist()
            if not name.startswith("__index_level_")]


def _leaks(at) -> list[str]:
    """Where the page would print a missing number as None/nan (or leave it blank)."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        kind = type(proto).__name__
        if kind in ("Dataframe", "Table") and proto.arrow_data.data:
            for col, v in _cells(proto.arrow_data.data):
                missing = v is None or (isinstance(v, float) and v != v)
                if isinstance(v, str) and LEAK.fullmatch(v.strip()):
                    out.append(f"{kind} {col}: {v!r}")
                elif missing and not (kind == "Dataframe" and proto.placeholder == NONE):
                    out.append(f"{kind} {col}: missing, shown as Streamlit's 'None'")
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    out += [f"text: {t!r}" for t in page_texts(at) if LEAK.search(t)]
    return out


@pytest.mark.parametrize("page", ["study.py", *[p for p, _t, _i in ADMIN_PAGES]])
def test_no_admin_page_prints_a_missing_number(demo_db, page):
    at = _page(page, demo_db["admin"])
    assert not at.exception, at.exception
    assert _leaks(at) == []


def test_rater_quality_shows_a_dash_for_a_rater_without_gold(demo_db):
    """pat has no gold items: the gold columns are empty, shown as "—", never "None"."""
    at = _page("admin_quality.py", demo_db["admin"])
    table = next(d for d in at.dataframe if "gold QWK" in d.value.columns)
    pat = table.value[table.value["rater"] == "pat"].iloc[0]
    assert pat["gold QWK"] is None or pat["gold QWK"] != pat["gold QWK"]  # nothing to show
    assert table.proto.placeholder == NONE


@pytest.fixture
def sparse_study(tmp_path, monkeypatch):
    """Too little for most statistics: three items, one rater who scored one of them (with
    a 'cannot rate'), and an attention check nobody answered."""
    from annotate.services.auth import Identity
    from data import quality as q
    from data.engine import _engine_for, get_engine
    from data.importing import import_item_records
    from data.items import ItemRecord
    from data.raters import add_rater
    from data.rating_service import save_item_ratings
    from data.sessions import open_session
    from data.study import current_rubric, init_study
    from tests.helpers import item

    db = tmp_path / "sparse.db"
    monkeypatch.setenv("H2H_DB", str(db))
    engine = get_engine(db)
    init_study(engine, name="Sparse study")
    import_item_records(engine, [ItemRecord.model_validate(item(f"i{n}")) for n in range(3)],
                        file="items.jsonl")
    ann, _ = add_rater(engine, "ann", "rater")
    admin, _ = add_rater(engine, "ada", "admin")
    dims = [d.key for d in current_rubric(engine).dimensions if d.applies_to("dialogue")]
    save_item_ratings(engine, rater_id=ann.id, item_id="i0", seconds_spent=30.0,
                      scores={d: None if d == "safety" else 4 for d in dims})
    q.add_instructed_checks(engine, 1, 2)
    token, _ = open_session(engine, admin.id)
    yield Identity(admin.id, "ada", "admin", token)
    engine.dispose()
    _engine_for.cache_clear()


@pytest.mark.parametrize("page", ["study.py", *[p for p, _t, _i in ADMIN_PAGES]])
def test_no_page_prints_a_missing_number_in_a_sparse_study(sparse_study, page):
    at = _page(page, sparse_study)
    assert not at.exception, at.exception
    assert _leaks(at) == []
