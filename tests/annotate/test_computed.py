"""What the admin pages compute is kept while its inputs stay the same (annotate.computed):
a rerun, a second admin's visit or a look at another disagreement computes nothing again, and
one changed score, a judge's new judgment, a deal of items or another B, seed or estimator
computes again at once."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest

from annotate import computed, state
from tests.annotate.conftest import APP_DIR
from tests.annotate.test_ranking_page import _thin_out


def _page(name: str, who) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / name), default_timeout=90)
    at.session_state[state.IDENTITY] = who
    return at.run()


def _counting(monkeypatch, module, name: str) -> list[int]:
    """Count the calls of ``module.name`` (the real function still runs)."""
    real, calls = getattr(module, name), []

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _flip_one_score(engine, table: str, where: str = "") -> None:
    """Change the first scored row of ``table`` (``rating`` or ``judgment``) to another
    score: 1 if it was 3 or more, else 5."""
    with engine.begin() as c:
        row, score = c.execute(sa.text(
            f"SELECT id, score FROM {table} WHERE score IS NOT NULL {where} "
            "ORDER BY id LIMIT 1")).one()
        c.execute(sa.text(f"UPDATE {table} SET score = :s WHERE id = :i"),
                  {"s": 1.0 if score >= 3 else 5.0, "i": row})


def _ratings(n_items: int, raters: int = 3, dims: int = 2, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(f"item-{i:05d}", f"r{r}", f"d{d}") for i in range(n_items) for r in range(raters)
            for d in range(dims)]
    df = pd.DataFrame(rows, columns=["item_id", "rater", "dimension"])
    df["score"] = rng.integers(1, 6, len(df)).astype(float)
    return df


def test_one_changed_score_anywhere_in_a_large_study_is_another_key():
    """60,000 ratings: Streamlit's own argument hashing would look at 10,000 of them (a frame
    of 50,000 rows or more is sampled), so a change elsewhere would keep the old numbers."""
    df = _ratings(10_000)
    assert len(df) == 60_000
    key = computed.content_key(df)
    assert computed.content_key(df.copy()) == key  # the same values in other objects
    keys = set()
    for row in (0, 7_777, 23_456, 41_000, 59_999):
        changed = df.copy()
        changed.loc[row, "score"] = 6.0 - changed.loc[row, "score"] if \
            changed.loc[row, "score"] != 3.0 else 4.0
        keys.add(computed.content_key(changed))
    assert key not in keys and len(keys) == 5
    # a deleted rating, a cannot-rate answer, a renamed rater
    assert computed.content_key(df.drop(index=30_000)) != key
    nan = df.copy()
    nan.loc[12, "score"] = np.nan
    assert computed.content_key(nan) != key
    renamed = df.copy()
    renamed.loc[5, "rater"] = "r9"
    assert computed.content_key(renamed) != key


@pytest.mark.parametrize("other", [
    lambda df: df.astype({"score": "int64"}),              # 3 is not 3.0
    lambda df: df.rename(columns={"score": "value"}),
    lambda df: df.set_axis(range(1, len(df) + 1)),          # another index
    lambda df: df[["rater", "item_id", "dimension", "score"]],
    lambda df: df.rename_axis("row"),                        # an index name
], ids=["dtype", "column name", "index", "column order", "index name"])
def test_the_key_sees_types_names_index_and_column_order(other):
    df = _ratings(20)
    assert computed.content_key(other(df)) != computed.content_key(df)


def test_a_label_1_is_not_a_label_text_1():
    df = _ratings(3)
    assert computed.content_key(df.set_axis(["item_id", "rater", "dimension", 1], axis=1)) != \
        computed.content_key(df.set_axis(["item_id", "rater", "dimension", "1"], axis=1))
    s = df["score"]
    assert computed.content_key(s.rename(1)) != computed.content_key(s.rename("1"))


@pytest.mark.parametrize("a, b", [
    ([1, "a"], ["1", "a"]), ([True, "a"], ["True", "a"]), ([None, "a"], [np.nan, "a"]),
    ([("a", 1), "b"], ["('a', 1)", "b"]), ([b"a", "b"], ["a", "b"]), ([0.5, "a"], ["0.5", "a"]),
], ids=["int", "bool", "None", "tuple", "bytes", "float"])
def test_objects_of_another_type_with_the_same_text_are_another_key(a, b):
    """pandas hashes the cells of a mixed object column by their text."""
    frame = lambda values: pd.DataFrame({"x": pd.Series(values, dtype=object)})  # noqa: E731
    assert computed.content_key(frame(a)) != computed.content_key(frame(b))
    assert computed.content_key(frame(a)) == computed.content_key(frame(list(a)))


def test_a_categorical_is_its_categories_their_order_and_its_codes():
    def cat(categories, ordered=True, values=("lo", "hi")):
        return pd.Series(pd.Categorical(list(values), categories=categories, ordered=ordered))

    key = computed.content_key(cat(["lo", "hi"]))
    assert computed.content_key(cat(["lo", "hi"])) == key
    assert computed.content_key(cat(["hi", "lo"])) != key            # another order
    assert computed.content_key(cat(["lo", "hi"], ordered=False)) != key
    assert computed.content_key(cat(["lo", "hi", "mid"])) != key     # an unused category
    assert computed.content_key(cat(["lo", "hi"]).astype(object)) != key


def test_an_exception_is_raised_every_time_and_never_kept():
    from data.errors import H2HError

    calls = []

    def refuses(x):
        calls.append(x)
        raise H2HError("no judgments stored for j; run them first")

    for _ in range(2):
        with pytest.raises(H2HError, match="no judgments stored"):
            computed.cached(refuses, 1)
    assert calls == [1, 1]


def test_arguments_beside_the_frames_are_part_of_the_key():
    df = _ratings(20)
    scales = {"d0": (1.0, 2.0, 3.0), "d1": (1.0, 2.0, 3.0)}
    key = computed.content_key(df, scales, {"B": 500, "seed": 0})
    assert computed.content_key(df, scales, {"B": 500, "seed": 0}) == key
    assert computed.content_key(df, scales, {"B": 500, "seed": 1}) != key
    assert computed.content_key(df, scales, {"B": 200, "seed": 0}) != key
    assert computed.content_key(df, {**scales, "d1": (1.0, 2.0)}, {"B": 500, "seed": 0}) != key
    assert computed.content_key(df, scales, {"B": 500.0, "seed": 0}) != key  # int is not float
    assert computed.content_key([1, 2]) != computed.content_key((1, 2))
    assert computed.content_key(np.arange(4)) != computed.content_key(np.arange(4.0))
    assert computed.content_key({"a", "b"}) == computed.content_key({"a", "b"})
    assert computed.content_key({"a", "b"}) != computed.content_key({"a", "c"})


def test_the_agreement_page_computes_once_until_a_score_changes(demo_db, monkeypatch):
    from annotate.services import admin

    analyses = _counting(monkeypatch, admin, "analyze")
    fits_page = _counting(monkeypatch, computed, "fit_dimensions")
    at = _page("admin_agreement.py", demo_db["admin"])
    assert not at.exception
    assert len(analyses) == 1 and len(fits_page) == 1
    first = at.table[0].value.copy()
    at.run()  # a rerun: nothing computed again, the same numbers
    other = _page("admin_agreement.py", demo_db["admin"])  # another admin's session
    assert len(analyses) == 1 and len(fits_page) == 1
    pd.testing.assert_frame_equal(at.table[0].value, first)
    pd.testing.assert_frame_equal(other.table[0].value, first)

    # one score changed (a rater went back to an item): computed again, the new numbers
    _flip_one_score(demo_db["engine"], "rating", "AND dimension = 'empathy'")
    at.run()
    assert not at.exception
    assert len(analyses) == 2 and len(fits_page) == 2
    now = at.table[0].value
    assert not now.equals(first)
    row = [i for i, label in enumerate(now.index) if "Empathy" in html.unescape(str(label))]
    assert row and now.iloc[row[0]].tolist() != first.iloc[row[0]].tolist()
    # a judge's judgment changed (a run again): computed again
    _flip_one_score(demo_db["engine"], "judgment")
    at.run()
    assert len(analyses) == 3 and len(fits_page) == 2  # the rater model reads no judgments
    # another B: computed again (the caption says which B)
    at.select_slider[0].set_value(200).run()
    assert len(analyses) == 4
    assert any("B = 200" in c.value for c in at.caption)


def test_looking_through_the_disagreements_does_not_bootstrap_again(demo_db, monkeypatch):
    from annotate.services import calibration as cal

    bootstraps = _counting(monkeypatch, cal, "compare_dimension")
    at = _page("admin_calibrate.py", demo_db["admin"])
    assert not at.exception
    per_visit = len(bootstraps)
    assert per_visit == 5  # one per dimension
    verdicts = [m.value for m in at.markdown if "best configuration" in m.value]
    items = at.selectbox(key="h2h_dis_item")
    assert len(items.options) > 2
    for pick in (1, 2):
        at.selectbox(key="h2h_dis_item").select_index(pick).run()
        assert not at.exception
    at.selectbox(key="h2h_dis_dim").select_index(1).run()
    assert len(bootstraps) == per_visit
    assert [m.value for m in at.markdown if "best configuration" in m.value] == verdicts
    # a new judgment stored for a chosen configuration: its numbers are computed again
    _flip_one_score(demo_db["engine"], "judgment")
    at.run()
    assert len(bootstraps) == 2 * per_visit
    # another seed: computed again
    at.number_input(key="h2h_cal_seed").set_value(1).run()
    assert len(bootstraps) == 3 * per_visit


def test_the_ranking_is_computed_again_for_another_estimator_b_seed_or_a_deal(demo_db,
                                                                             monkeypatch):
    """Another estimator, B or seed is another leaderboard; dealing the suggested items
    stores a draw, which the leaderboard reports: the page's next run computes it again (the
    draw is one of its inputs)."""
    from annotate.services import ranking

    _thin_out(demo_db["engine"])  # every third item human-rated: there is something to deal
    boards = _counting(monkeypatch, ranking, "ppi_leaderboard")
    at = _page("admin_ranking.py", demo_db["admin"])
    assert not at.exception and len(boards) == 1
    at.run()
    assert len(boards) == 1
    for key, value in (("h2h_rank_estimator", "ppi"), ("h2h_rank_B", 200),
                       ("h2h_rank_seed", 3)):  # each is part of the key
        n = len(boards)
        widget = at.select_slider(key=key) if key == "h2h_rank_B" else \
            at.number_input(key=key) if key == "h2h_rank_seed" else at.selectbox(key=key)
        widget.set_value(value).run()
        assert not at.exception and len(boards) == n + 1, key
    at.run()
    boards.clear()
    at.button(key="h2h_rank_deal").click().run()
    assert not at.exception
    assert "50 items picked" in at.success[0].value
    at.run()
    assert len(boards) == 1
