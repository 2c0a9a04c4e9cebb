"""`h2h calibrate drift --config NAME` (issue 32): a judge that answers as before is reported
stable, one whose scores shifted is reported changed, with the items that moved most. The
judge is an OpenAI-compatible server on 127.0.0.1 through the real ``openai`` SDK."""

from __future__ import annotations

import json
import shutil
import zlib

import pandas as pd
import pytest

from analysis.drift import DriftOptions, drift
from data.engine import _engine_for, get_engine
from tests.helpers import run_h2h
from tests.judge.fakes import FakeServer

from .test_autocal import build


@pytest.fixture(scope="module")
def _judged(tmp_path_factory):
    path = tmp_path_factory.mktemp("drift") / "study.db"
    build(path)
    return path


@pytest.fixture
def db(tmp_path, _judged) -> str:
    path = tmp_path / "study.db"
    shutil.copyfile(_judged, path)
    yield str(path)
    get_engine(path).dispose()
    _engine_for.cache_clear()


def _score(item: str, dim: str) -> int:
    return zlib.crc32(f"{item}/{dim}".encode()) % 5 + 1


@pytest.fixture
def fake():
    f = FakeServer("openai", api_key=None)
    f.score = _score
    yield f
    f.close()


def _drift(db, fake, *more):
    res = run_h2h("calibrate", "drift", "--db", db, "--config", "j", "--base-url", fake.url,
                  "--sample", "25", "--seed", "2", "--bootstrap", "400", *more)
    return res


def _rows(db, sql):
    import sqlalchemy as sa
    with get_engine(db).connect() as c:
        return c.execute(sa.text(sql)).all()


def test_a_stable_judge_is_stable_and_a_shifted_one_changed(db, fake):
    run_h2h("judge", "run", "--db", db, "--provider", "openai", "--model", "fake-judge",
            "--base-url", fake.url, "--name", "j", "--limit", "40", "--quiet")
    stored = _rows(db, "SELECT item_id, dimension, score FROM judgment ORDER BY 1, 2")
    n_first = len(fake.calls("judge"))
    doc = json.loads(_drift(db, fake, "--json").stdout)
    assert doc["verdict"] == "stable" and doc["kappa"] == 1.0 and doc["changed"] == 0
    assert doc["mean_shift"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert len(doc["items"]) == 25 and doc["moved"] == []
    asked = {r.item for r in fake.calls("judge")[n_first:]}
    assert asked == set(doc["items"])  # the sample, judged again with the same prompt
    # the provider now scores one point lower (floored at 1): the same name, another judge
    fake.score = lambda item, dim: max(1, _score(item, dim) - 1)
    res = _drift(db, fake)
    assert "j: changed: old and new scores agree at weighted κ =" in res.stdout
    assert "Do not mix its runs in one analysis" in res.stdout
    assert "Items that moved most (old → new):" in res.stdout
    doc = json.loads(_drift(db, fake, "--json").stdout)  # a third check: the same verdict
    assert doc["verdict"] == "changed" and doc["mean_shift"]["high"] < -0.25
    assert doc["moved"] and all(new == old - 1 for m in doc["moved"]
                                for old, new in m["scores"].values())
    # the configuration's own judgments are untouched; re-judgments live apart, priced
    assert _rows(db, "SELECT item_id, dimension, score FROM judgment ORDER BY 1, 2") == stored
    assert _rows(db, "SELECT count(*) FROM drift_check WHERE finished_at IS NOT NULL") == \
        [(3,)]
    (n_drift,) = _rows(db, "SELECT count(*) FROM cost_ledger WHERE call_kind = 'drift'")[0]
    assert n_drift == 3 * _rows(db, "SELECT count(*) FROM drift_judgment WHERE check_id = 1"
                                )[0][0]


def test_a_check_stopped_half_way_continues_without_asking_twice(db, fake):
    run_h2h("judge", "run", "--db", db, "--provider", "openai", "--model", "fake-judge",
            "--base-url", fake.url, "--name", "j", "--limit", "20", "--quiet")
    n = len(fake.calls("judge"))
    # the server stops answering near the check's end (74 calls): the last 4 wait out their
    # timeout one after another (concurrency lowered to 1), 0.5 s each
    fake.hang_after(n + 70)
    res = run_h2h("calibrate", "drift", "--db", db, "--config", "j", "--base-url", fake.url,
                  "--sample", "20", "--timeout", "0.5", "--max-retries", "0", check=False)
    assert "Some calls failed" in res.stdout
    fake.release()
    fake._hang_after = None
    before = _rows(db, "SELECT count(*) FROM drift_judgment WHERE outcome = 'scored'")[0][0]
    assert 0 < before
    asked = len(fake.calls("judge"))
    doc = json.loads(run_h2h("calibrate", "drift", "--db", db, "--config", "j", "--base-url",
                             fake.url, "--sample", "20", "--json").stdout)
    assert doc["check"] == 1 and doc["verdict"] == "stable"
    again = fake.calls("judge")[asked:]
    total = _rows(db, "SELECT count(*) FROM drift_judgment")[0][0]
    assert len(again) == total - before  # only what the first check lacked


def test_drift_statistics_by_hand():
    """κ: Cohen's quadratic kappa on the full scale (sklearn's cohen_kappa_score with
    weights="quadratic" and labels 1..5 gives the same); the shift's CI from an item
    bootstrap."""
    from sklearn.metrics import cohen_kappa_score

    old = [1, 2, 3, 4, 5, 3, 2, 4, 5, 1, 3, 3]
    new = [1, 2, 3, 4, 5, 3, 2, 4, 4, 2, 3, 4]
    df = pd.DataFrame({"item_id": [f"i{k}" for k in range(12)], "dimension": "e",
                       "old": old, "new": new})
    r = drift(df, {"e": [1, 2, 3, 4, 5]}, DriftOptions(B=2000, seed=1))
    assert r.kappa == pytest.approx(cohen_kappa_score(old, new, weights="quadratic",
                                                      labels=[1, 2, 3, 4, 5]), abs=1e-12)
    assert r.mean_shift.value == pytest.approx(1 / 12) and r.changed == 3
    assert r.verdict == "not_settled"  # shift's CI reaches past 0.25 but not beyond it
    # a judge that samples is told that change is expected
    assert "It samples" in drift(df, {"e": [1, 2, 3, 4, 5]}, DriftOptions(B=200),
                                 temperature=0.8).text
    few = drift(df.head(5), {"e": [1, 2, 3, 4, 5]}, DriftOptions(B=200))
    assert few.verdict == "not_settled" and "at least 10 needed" in few.text
