"""Item import: h2htalk's validated, all-or-nothing import against a plain bulk insert.

Reference: what a careful script does without h2htalk — read the JSON Lines with the standard
library and insert every row with one ``executemany`` in one transaction (sqlite3, no
validation, no hashing of the content beyond what the table needs). Both import the same N
items into fresh SQLite study files, side by side in this run, alternating, best of 3 each.

Target: h2htalk at most 15x the plain insert's time. Everything h2htalk adds — parsing every
record against the schema, naming each bad line, the content hash that makes re-imports
idempotent, checking the study's tasks — must stay within that factor of the bare minimum.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from data.engine import get_engine
from data.importing import import_item_records, study_tasks
from data.items import item_hash, read_items
from data.models import utcnow
from data.study import init_study

N = 5_000
TARGET = 15.0


def make_file(path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(N):
            fh.write(json.dumps({
                "id": f"it-{i:06d}", "task": "dialogue", "scenario": f"s-{i // 3}",
                "context": {"persona": "Mira", "turns": [
                    {"role": "user", "text": f"I had a long day number {i}."}]},
                "response": "That sounds tiring. What was the hardest part?",
                "model": "m", "condition": "sap"}, ensure_ascii=False) + "\n")


def ours(src: Path, db: Path) -> float:
    eng = get_engine(db)
    init_study(eng)
    t0 = time.perf_counter()
    res = import_item_records(eng, read_items(src, study_tasks(eng)), file=src.name)
    took = time.perf_counter() - t0
    eng.dispose()
    assert res.added == N, res
    return took


def plain(src: Path, db: Path) -> float:
    eng = get_engine(db)  # the same schema, created the same way
    init_study(eng)
    eng.dispose()
    t0 = time.perf_counter()
    now = utcnow().isoformat()
    rows = []
    for pos, line in enumerate(src.read_text(encoding="utf-8").splitlines()):
        d = json.loads(line)
        rows.append((d["id"], d["task"], d["scenario"], json.dumps(d["context"]), d["response"],
                     d["model"], d["condition"], None, "{}", item_hash(d), pos, now, now))
    con = sqlite3.connect(db)
    with con:
        con.executemany("INSERT INTO item (id, task, scenario, context, response, model, "
                        "condition, reference, metadata, content_hash, position, created_at, "
                        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    took = time.perf_counter() - t0
    n = con.execute("SELECT COUNT(*) FROM item").fetchone()[0]
    con.close()
    assert n == N, n
    return took


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-"))
    src = tmp / "items.jsonl"
    make_file(src)
    t_ours, t_plain = [], []
    for r in range(3):
        t_ours.append(ours(src, tmp / f"ours{r}.db"))
        t_plain.append(plain(src, tmp / f"plain{r}.db"))
    a, b = min(t_ours), min(t_plain)
    ratio = a / b
    print(f"import of {N} items (best of 3): h2htalk {a:.2f} s (validated, hashed, one "
          f"transaction) vs plain executemany {b:.3f} s (one transaction, no validation) "
          f"-> {ratio:.1f}x the plain insert (target <= {TARGET:g}x)")
    ok = ratio <= TARGET
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
