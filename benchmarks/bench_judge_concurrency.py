"""Judge runner: 1,000 judgments at concurrency 50 against concurrency 1, measured in this run.

A loopback server speaking the Anthropic Messages API (the test suite's fake, in its own
process, as a real server would be) answers every request after 200 ms; the real ``anthropic``
SDK talks to it. Each run works on its own fresh study with the same 1,000 items, judged on one
dimension, and stores every answer as it arrives, as a real run does. Concurrency 1 is the
reference: a sequential loop, ~200 s. Then the concurrency-50 run is repeated unchanged: a
finished configuration must make zero requests. The SDK is imported before timing starts.

Requires: >= 20x faster at concurrency 50, and 0 requests on the repeat.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for the loopback fake in tests/

from data.engine import get_engine  # noqa: E402
from data.importing import import_item_records  # noqa: E402
from data.items import parse_items  # noqa: E402
from data.study import current_rubric, init_study  # noqa: E402
from judge.calls import RunOptions  # noqa: E402
from judge.config import JudgeSpec  # noqa: E402
from judge.judging import Filters  # noqa: E402
from judge.prices import load_prices  # noqa: E402
from judge.prompts import load_judge_template  # noqa: E402
from judge.providers import make_provider  # noqa: E402
from judge.run import run_judge  # noqa: E402
from tests.judge.fakes import FakeServer  # noqa: E402

N = 1_000
DELAY = 0.2


def make_study(path: Path):
    engine = get_engine(path)
    init_study(engine, name="bench")
    lines = [json.dumps({"id": f"it-{i:04d}", "task": "dialogue", "scenario": f"s-{i}",
                         "context": {"persona": "Mira", "turns": [
                             {"role": "user", "text": f"I had a long day number {i}."}]},
                         "response": f"reply to it-{i:04d}", "model": "m"})
             for i in range(N)]
    import_item_records(engine, parse_items("\n".join(lines), "bench.jsonl", ("dialogue",)),
                        file="bench.jsonl")
    return engine


def serve(conn) -> None:
    """The fake provider in a child process; answers "count" with the requests seen."""
    fake = FakeServer("anthropic", delay=DELAY)
    conn.send((fake.url, fake.api_key))
    while (msg := conn.recv()) != "stop":
        conn.send(len(fake.log) if msg == "count" else None)
    fake.close()


def timed_run(engine, url: str, concurrency: int) -> tuple[float, int]:
    spec = JudgeSpec("anthropic", "fake-judge", load_judge_template(None),
                     current_rubric(engine).version, name="bench-judge")
    provider = make_provider("anthropic", base_url=url, timeout=30, concurrency=concurrency)
    t0 = time.perf_counter()
    _, stats = run_judge(engine, spec, provider, filters=Filters(dimensions=("empathy",)),
                         options=RunOptions(concurrency=concurrency), prices=load_prices())
    return time.perf_counter() - t0, stats.scored


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="h2h-bench-judge-"))
    here, there = mp.Pipe()
    server = mp.get_context("fork").Process(target=serve, args=(there,), daemon=True)
    server.start()
    url, key = here.recv()
    os.environ["ANTHROPIC_API_KEY"] = key
    import anthropic  # noqa: F401  (a one-off import cost belongs to neither run)
    try:
        fast_db = make_study(tmp / "c50.db")
        slow_db = make_study(tmp / "c1.db")
        t50, n50 = timed_run(fast_db, url, 50)
        t1, n1 = timed_run(slow_db, url, 1)
        here.send("count")
        before = here.recv()
        t_again, n_again = timed_run(fast_db, url, 50)
        here.send("count")
        repeat_requests = here.recv() - before
    finally:
        here.send("stop")
        server.join(10)
    ratio = t1 / t50
    print(f"{N} judgments, server answering after {DELAY * 1000:.0f} ms, real anthropic SDK: "
          f"concurrency 50 {t50:.2f} s ({n50} stored) vs concurrency 1 {t1:.2f} s "
          f"({n1} stored) -> {ratio:.1f}x faster (required >= 20x)")
    print(f"identical second run: {repeat_requests} requests, {n_again} new judgments, "
          f"{t_again:.2f} s (required: 0 requests)")
    ok = ratio >= 20 and repeat_requests == 0 and n50 == n1 == N
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
