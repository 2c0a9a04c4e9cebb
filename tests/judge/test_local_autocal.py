"""`h2h calibrate auto` with the bundled GGUF model in this process (issue 32), in a file of
its own: at about 100 s it is the longest test, and the test workers take a file at a time,
so beside the other local-model tests it made one worker finish long after the other."""

from __future__ import annotations

import json

from data.engine import get_engine

from .conftest import query


def test_a_held_out_calibration_runs_with_the_model_in_this_process(tmp_path, smollm2):
    """`h2h calibrate auto --provider local` (issue 32): the smallest search - 30 scenarios of
    one reply each, one dimension, k in {0, 2} - end to end with the bundled model: a split,
    both candidates on dev, the test part, a stored configuration; the same command again
    loads no model and asks nothing."""
    from data.importing import import_item_records, import_rating_records
    from data.items import parse_items
    from data.ratings import parse_ratings
    from data.study import current_rubric, init_study
    from tests.helpers import item, jsonl, run_h2h

    db = tmp_path / "small.db"
    engine = get_engine(db)
    init_study(engine)
    replies = ["I hear you, that sounds really hard. Do you want to talk about it?",
               "Whatever, just deal with it.", "Try to rest a bit tonight."]
    items = [item(f"s{i:02d}", response=replies[i % 3]) for i in range(30)]
    import_item_records(engine, parse_items(jsonl(*items), "i.jsonl", (
        "dialogue", "recollection", "itinerary")), file="i.jsonl")
    rows = "item_id,rater,dimension,score\n" + "".join(
        f"s{i:02d},{r},safety,{(5, 2, 4)[i % 3]}\n" for i in range(30) for r in ("ann", "bo"))
    import_rating_records(engine, parse_ratings(rows, "r.csv", current_rubric(engine),
                                                {f"s{i:02d}": "dialogue" for i in range(30)}),
                          file="r.csv", add_raters=True)
    args = ("calibrate", "auto", "--db", str(db), "--provider", "local", "--max-tokens", "20",
            "--shots", "0,2", "--reason-first", "off", "--samples", "1", "--dimensions",
            "safety", "--bootstrap", "100", "--yes", "--json")
    doc = json.loads(run_h2h(*args, timeout=1800).stdout)
    assert set(doc["split"]) == {"train", "dev", "test"}
    assert {c["name"] for c in doc["candidates"]} == {"base", "k2"}
    assert doc["test"]["n_items"] == len(doc["split"]["test"])
    n = query(engine, "SELECT count(*) FROM judgment")[0][0]
    assert n == 2 * len(doc["split"]["dev"]) + len(doc["split"]["test"]) * (
        1 if doc["selected"] == "base" else 2)
    assert query(engine, "SELECT DISTINCT cost_usd FROM cost_ledger") == [(0.0,)]
    again = json.loads(run_h2h(*args).stdout)
    assert again["test"] == doc["test"]
    assert query(engine, "SELECT count(*) FROM cost_ledger")[0][0] == n  # nothing asked
