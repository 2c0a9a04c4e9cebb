"""Item import: h2htalk's validated, single-transaction import against a naive per-row loop.

Reference: the usual script of weaker tools, one INSERT and COMMIT per row through the same
ORM. Both import the same N items into fresh SQLite files, measured side by side in this run.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from data.engine import get_engine, write_session
from data.importing import import_item_records, study_tasks
from data.items import item_hash, read_items
from data.models import Item
from data.study import init_study

N = 5_000


def make_file(path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(N):
            fh.write(json.dumps({
                "id": f"it-{i:06d}", "task": "dialogue", "scenario": f"s-{i // 3}",
                "context": {"persona": "Mira", "turns": [
                    {"role": "user", "text": f"I had a long day number {i}."}]},
                "response": "That sounds tiring. What was the hardest part?",
                "model": "m", "condition": "sap"}, ensure_ascii=False) + "\n")


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-"))
    src = tmp / "items.jsonl"
    make_file(src)

    eng = get_engine(tmp / "ours.db")
    init_study(eng)
    t0 = time.perf_counter()
    res = import_item_records(eng, read_items(src, study_tasks(eng)), file=src.name)
    ours = time.perf_counter() - t0

    ref = get_engine(tmp / "naive.db")
    init_study(ref)
    t0 = time.perf_counter()
    for pos, line in enumerate(src.read_text(encoding="utf-8").splitlines()):
        d = json.loads(line)
        with write_session(ref) as s:
            s.add(Item(id=d["id"], task=d["task"], scenario=d["scenario"], context=d["context"],
                       response=d["response"], model=d["model"], condition=d["condition"],
                       meta={}, content_hash=item_hash(d), position=pos))
    naive = time.perf_counter() - t0
    print(f"import of {N} items ({res.added} added): h2htalk {ours:.2f} s (validated, one "
          f"transaction) vs naive per-row commits {naive:.2f} s -> {naive / ours:.1f}x faster")


if __name__ == "__main__":
    main()
