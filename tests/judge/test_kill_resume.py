"""A real `h2h judge run` process killed with SIGKILL mid-run, then run again.

The fake answers 6 judge requests and then leaves every further request hanging, unanswered.
With 3 workers, once 3 requests hang every answered one has been stored (a worker stores its
answer before it takes the next request). The process is killed there. The second run must
ask only for what was not answered: the request log shows no (item, dimension) answered twice
- nothing paid for twice - and every stored answer is the server's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from .conftest import N_PAIRS, query

ROOT = str(Path(__file__).resolve().parents[2])  # this checkout's packages come first


def _run(db: str, url: str, env: dict) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "annotate.cli", "judge", "run", "--db", db,
           "--provider", "anthropic", "--model", "fake-judge", "--base-url", url,
           "--concurrency", "3", "--quiet", "--name", "killed-run"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_sigkill_midway_then_resume_asks_nothing_twice(study, anthropic_fake):
    db = str(study.url.database)
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, ANTHROPIC_API_KEY=anthropic_fake.api_key, PYTHONPATH=path)
    anthropic_fake.hang_after(6)
    proc = _run(db, anthropic_fake.url, env)
    try:
        deadline = time.monotonic() + 60
        while len(anthropic_fake.calls("judge")) < 9:  # 6 answered + 3 hanging
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never reached the hanging requests"
            time.sleep(0.02)
        time.sleep(0.2)  # give a (wrong) runner the chance to store or send more
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL

    first = anthropic_fake.calls("judge")
    answered_before = set(anthropic_fake.answered_keys())
    stored_before = set(query(study, "SELECT item_id, dimension FROM judgment"))
    assert len(first) == 9 and len(answered_before) == 6
    assert stored_before == answered_before  # committed as they arrived, none lost

    anthropic_fake._hang_after = None
    anthropic_fake.release()
    proc = _run(db, anthropic_fake.url, env)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert f"6 already stored, 0 waiting in batches, {N_PAIRS - 6} to ask" in out

    answered = Counter(anthropic_fake.answered_keys())
    assert len(answered) == N_PAIRS and max(answered.values()) == 1  # nothing answered twice
    second = anthropic_fake.calls("judge")[len(first):]
    asked_again = {(r.item, r.dims[0]) for r in second}
    assert asked_again.isdisjoint(stored_before)
    assert len(second) == N_PAIRS - 6
    rows = query(study, "SELECT item_id, dimension, score FROM judgment")
    assert len(rows) == N_PAIRS
    assert all(score == anthropic_fake.score(i, d) for i, d, score in rows)
