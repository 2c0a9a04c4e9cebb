""""Save and next" latency in the browser on a big study: 50,000 items, 200 raters, k = 3.

Measured in Debian's Chromium through Playwright against the real `h2h serve`: the time from
the click on "Save and next" until the next item's progress line is on screen, over 30 saves.
Reference: Potato 2.12 takes about 270 ms median (310 ms p90) from "Next" to the next item on
this machine kind, with a full page reload. Requirement: <= 200 ms median, <= 300 ms p90.
Also prints the SQLite query plans of every statement behind one save-and-next.
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotate.services import queue  # noqa: E402
from annotate.services.assignment import assign  # noqa: E402
from data.codes import hash_code, new_code  # noqa: E402
from data.engine import get_engine, write_session  # noqa: E402
from data.importing import import_item_records  # noqa: E402
from data.items import ItemRecord  # noqa: E402
from data.models import Rater  # noqa: E402
from data.study import current_rubric, init_study  # noqa: E402
from tests.browser import CHROMIUM, CHROMIUM_ARGS, served  # noqa: E402

N_ITEMS, N_RATERS, K, SAVES = 50_000, 200, 3, 30


def build(db: Path) -> tuple[str, int]:
    engine = get_engine(db)
    init_study(engine, name="latency benchmark")
    t0 = time.perf_counter()
    recs = [ItemRecord.model_validate({
        "id": f"it{i:05d}", "task": ("dialogue", "recollection", "itinerary")[i % 3],
        "scenario": f"sc{i // 3:05d}",
        "context": {"persona": "Mira", "memories": ["Has a cat named Miso."],
                    "turns": [{"role": "user", "text": f"Long day number {i}. I'm tired."}]},
        "response": f"That sounds exhausting ({i}). What was the hardest part?",
        "model": f"m{i % 7}", "condition": "sap" if i % 2 else "baseline"})
        for i in range(N_ITEMS)]
    import_item_records(engine, recs, file="bench")
    code = new_code()
    with write_session(engine) as s:
        for r in range(N_RATERS):
            s.add(Rater(name=f"rater{r:03d}", role="rater",
                        code_hash=hash_code(code) if r == 0 else hash_code(new_code())))
    res = assign(engine, k=K, seed=1, repeat_share=0.05)
    print(f"study built in {time.perf_counter() - t0:.1f} s: {N_ITEMS} items, {N_RATERS} "
          f"raters, {res.added} assignments")
    return code, 1


def query_plans(db: Path) -> None:
    """Run one save-and-next through the services and EXPLAIN each statement it issues."""
    engine = get_engine(db)
    seen: list[tuple[str, tuple]] = []

    def log(conn, cursor, statement, params, context, executemany):
        if statement.lstrip().upper().startswith(("SELECT", "UPDATE", "INSERT")):
            seen.append((statement, params))

    rubric = current_rubric(engine)
    with engine.connect() as c:
        rid = c.execute(sa.text("SELECT id FROM rater WHERE name='rater001'")).scalar_one()
    event.listen(engine, "before_cursor_execute", log)
    prog = queue.progress(engine, rid)
    view = queue.item_at(engine, rid, prog.current, rubric)
    queue.save_item(engine, rid, view, {d.key: 3 for d in view.dimensions}, "", False, 5.0)
    queue.next_position(engine, rid, view.position)
    queue.progress(engine, rid)
    event.remove(engine, "before_cursor_execute", log)
    print("\nquery plans behind one save-and-next (SQLite EXPLAIN QUERY PLAN):")
    with engine.connect() as c:
        raw = c.connection.driver_connection
        done = set()
        for stmt, params in seen:
            key = re.sub(r"\s+", " ", stmt)
            if key in done or " FROM rubric" in key or " FROM study" in key:
                continue
            done.add(key)
            plan = raw.execute("EXPLAIN QUERY PLAN " + stmt, params).fetchall()
            print(f"- {key[:110]}{'…' if len(key) > 110 else ''}")
            for row in plan:
                print(f"    {row[-1]}")


def main() -> None:
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-"))
    db = tmp / "big.db"
    code, _ = build(db)
    times: list[float] = []
    with served(db, tmp / "serve.log") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(base)
        page.get_by_label("Access code").fill(code)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_text(re.compile(r"^0 of \d+ done")).wait_for(timeout=60_000)
        time.sleep(1.0)
        ready = page.get_by_test_id("h2h-ready")
        ready.wait_for(state="attached", timeout=30_000)
        for i in range(SAVES + 2):  # two warm-up saves
            current = ready.get_attribute("data-item")
            groups = page.locator('div[data-testid="stRadio"]')
            for g in range(groups.count()):
                groups.nth(g).locator('div[role="radiogroup"] label').filter(
                    has_text=re.compile(r"^3 ")).click()
            page.wait_for_timeout(150)
            t0 = time.perf_counter()
            page.get_by_role("button", name="Save and next").click()
            # the end marker of the form names the next item: it is fully drawn
            page.wait_for_function(
                "cur => { const r = document.querySelector('[data-testid=\"h2h-ready\"]');"
                " return r && r.dataset.item !== cur; }", arg=current, timeout=30_000,
                polling="raf")
            if i >= 2:
                times.append((time.perf_counter() - t0) * 1000)
            page.get_by_text(re.compile(rf"^{i + 1} of \d+ done")).wait_for(timeout=30_000)
        browser.close()
    times.sort()
    med = statistics.median(times)
    p90 = times[int(round(0.9 * (len(times) - 1)))]
    print(f"\n'Save and next' to next item, {len(times)} saves in Chromium: median {med:.0f} ms, "
          f"p90 {p90:.0f} ms, min {times[0]:.0f} ms, max {times[-1]:.0f} ms")
    print(f"Potato 2.12 reference on this machine kind: 270 ms median, 310 ms p90 -> "
          f"{270 / med:.1f}x faster at the median")
    print("PASS" if med <= 200 and p90 <= 300 else "FAIL")
    query_plans(db)


if __name__ == "__main__":
    main()
