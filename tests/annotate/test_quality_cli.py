"""`h2h quality` and `h2h assign` as a coordinator runs them: real processes, real files,
clear errors with exit 1 and no traceback."""

from __future__ import annotations

import json
from pathlib import Path

from tests.annotate.test_cli import h2h
from tests.helpers import item, jsonl


def test_coordinator_workflow_through_the_cli(tmp_path: Path):
    db = str(tmp_path / "pilot.db")
    h2h("init", "--db", db)
    items = tmp_path / "items.jsonl"
    items.write_text(jsonl(*[item(f"i{n}", scenario=f"s{n}") for n in range(12)]),
                     encoding="utf-8")
    h2h("import", "items", str(items), "--db", db)
    h2h("raters", "add", "ann", "--db", db)
    h2h("raters", "add", "bob", "--db", db)

    bad = tmp_path / "gold.csv"
    bad.write_text("item_id,dimension,score,rationale\ni0,empathy,7,too high\n",
                   encoding="utf-8")
    proc = h2h("quality", "gold", "import", str(bad), "--db", db, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "gold.csv:2: field 'score': score '7' is off the scale" in proc.stderr
    bad.write_text("item_id,dimension,score,rationale\ni0,empathy,4,warm\ni1,empathy,2,cold\n",
                   encoding="utf-8")
    assert "2 gold scores on 2 items" in h2h("quality", "gold", "import", str(bad),
                                             "--db", db).stdout

    proc = h2h("assign", "--db", db, "--k", "1", check=False)
    assert proc.returncode == 1 and "no rater has qualified yet" in proc.stderr
    assert "--min-qwk" not in proc.stderr
    out = h2h("quality", "settings", "--min-qwk", "0.5", "--db", db).stdout
    assert "min_qwk: 0.5" in out and "training_count: 6" in out
    proc = h2h("quality", "settings", "--training-order", "sideways", "--db", db, check=False)
    assert proc.returncode == 1 and "training_order: 'sideways' is not fixed or random" \
        in proc.stderr

    made = h2h("quality", "attention", "add", "--n", "2", "--score", "2", "--db", db).stdout
    assert "2 instructed-response checks created" in made
    assert "ann is released" in h2h("quality", "release", "ann", "--db", db).stdout
    out = h2h("assign", "--db", db, "--k", "1", "--attention", "0.2").stdout
    assert "10 assignments added" not in out  # gold items are not dealt
    assert "(0 hidden repeats, 2 attention checks)" in out and "not qualified yet, so no " \
        "real items: bob" in out
    status = json.loads(h2h("quality", "status", "--json", "--db", db).stdout)
    assert [(r["rater"], r["qualification"]) for r in status] == [("ann", "released"),
                                                                 ("bob", "training")]
    assert "starts training round 1" in h2h("quality", "retrain", "bob", "--db", db).stdout
    model = h2h("quality", "model", "--db", db).stdout
    assert "not estimable: no ratings" in model
