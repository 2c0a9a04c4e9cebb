"""Item import at the H2HTalk benchmark's full size and past it: peak memory against file size,
and items per second against a plain ``executemany``.

Sizes: 23,250 items (a tenth), 232,500 (4,650 scenarios x 50 models, the benchmark at full
size) and 1,000,000, generated like H2HTalk items (persona, memories, schedule, three turns,
the reply; about 330 bytes a line, so 76 MB at 232,500 as in the report that measured
2.1 GB of memory for it). Each import is ``h2h import items`` as a user runs it, in a process
of its own, into a fresh SQLite study (a copy of one initialised template); its peak resident
memory is the kernel's figure for that process (``wait4``'s ``ru_maxrss``).

Reference, in the same run, alternating with it at every size: a plain ``executemany`` of the
same rows into the same schema, in its own process — read each line with ``json.loads``,
insert the rows in chunks of 10,000 in one transaction, nothing validated (what a careful
script does without h2htalk).

Targets: peak memory under 300 MB at every size (it does not grow with the file), and
h2htalk's items per second at least 1/15 of the plain insert's at 232,500 and 1,000,000
(everything h2htalk adds: every record validated against the schema with its line and field
named, the content hash, repeated ids found, all-or-nothing, the study not locked while the
file is read). ``--quick`` runs the smallest size only.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (23_250, 232_500, 1_000_000)
RSS_LIMIT_MB = 300.0
SPEED_TARGET = 15.0  # h2htalk may take at most this many times the plain insert's time
ROOT = Path(__file__).resolve().parents[1]
MOODS = ("tired", "anxious", "lonely", "hopeful", "worried about my sister", "so happy")
PLACES = ("the library", "the gym", "Grandma's", "the clinic", "work", "the park")


def make_file(path: Path, n: int) -> int:
    """``n`` H2HTalk-like items, 50 models per scenario; returns the file's size in bytes."""
    rng = random.Random(n)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            s = i // 50
            mood, place = MOODS[s % 6], PLACES[(s // 6) % 6]
            fh.write(json.dumps({
                "id": f"s{s:05d}-m{i % 50:02d}", "task": "dialogue", "scenario": f"s{s:05d}",
                "context": {"persona": "Mira",
                            "memories": [f"Tuesdays: {place}."],
                            "turns": [{"role": "user", "text": f"I feel {mood} today."},
                                      {"role": "user", "text": f"Day {s} at {place}."}]},
                "response": f"That sounds hard; {place}? ({rng.random():.3f})",
                "model": f"model-{i % 50:02d}", "condition": "sap" if i % 2 else "baseline"},
                ensure_ascii=False) + "\n")
    return path.stat().st_size


def _run(cmd: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of ``cmd`` run as a process of its own."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} failed:\n{out.decode(errors='replace')}")
    return took, usage.ru_maxrss / 1024  # kB on Linux


def ours(src: Path, template: Path, db: Path, n: int) -> tuple[float, float]:
    shutil.copy(template, db)
    took, rss = _run([sys.executable, "-m", "annotate.cli", "import", "items", str(src),
                      "--db", str(db)])
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM item").fetchone()[0] == n
    return took, rss


def plain(src: Path, template: Path, db: Path, n: int) -> tuple[float, float]:
    shutil.copy(template, db)
    took, rss = _run([sys.executable, __file__, "--plain", str(src), str(db)])
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM item").fetchone()[0] == n
    return took, rss


def plain_insert(src: Path, db: Path) -> None:
    """The reference: json.loads per line, executemany in chunks, one transaction."""
    from data.items import item_hash  # the table's content_hash column needs a value

    now = "2026-01-01T00:00:00+00:00"
    sql = ("INSERT INTO item (id, task, scenario, context, response, model, condition, "
           "reference, metadata, content_hash, position, created_at, updated_at) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    con = sqlite3.connect(db)
    with con, src.open(encoding="utf-8") as fh:
        rows = []
        for pos, line in enumerate(fh):
            d = json.loads(line)
            rows.append((d["id"], d["task"], d["scenario"], json.dumps(d["context"]),
                         d["response"], d["model"], d["condition"], None, "{}", item_hash(d),
                         pos, now, now))
            if len(rows) == 10_000:
                con.executemany(sql, rows)
                rows = []
        con.executemany(sql, rows)
    con.close()


def main() -> int:
    if sys.argv[1:2] == ["--plain"]:
        plain_insert(Path(sys.argv[2]), Path(sys.argv[3]))
        return 0
    sizes = SIZES[:1] if "--quick" in sys.argv else SIZES
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-"))
    template = tmp / "template.db"
    subprocess.run([sys.executable, "-m", "annotate.cli", "init", "--db", str(template)],
                   cwd=ROOT, check=True, capture_output=True)
    ok = True
    print(f"{'items':>9} {'file MB':>8} | {'h2htalk s':>9} {'items/s':>8} {'peak MB':>8} | "
          f"{'plain s':>7} {'items/s':>8} {'peak MB':>8} | ratio")
    try:
        for n in sizes:
            src = tmp / f"items-{n}.jsonl"
            size = make_file(src, n)
            t_ours, rss_ours = ours(src, template, tmp / "ours.db", n)
            t_plain, rss_plain = plain(src, template, tmp / "plain.db", n)
            ratio = t_ours / t_plain
            print(f"{n:>9,} {size / 1e6:>8.1f} | {t_ours:>9.1f} {n / t_ours:>8,.0f} "
                  f"{rss_ours:>8.0f} | {t_plain:>7.1f} {n / t_plain:>8,.0f} {rss_plain:>8.0f} "
                  f"| {ratio:.1f}x", flush=True)
            ok = ok and rss_ours < RSS_LIMIT_MB and (n < 200_000 or ratio <= SPEED_TARGET)
            for p in (src, tmp / "ours.db", tmp / "plain.db"):
                p.unlink(missing_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"targets: peak memory < {RSS_LIMIT_MB:g} MB at every size; h2htalk at most "
          f"{SPEED_TARGET:g}x the plain insert's time from 232,500 items on")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
