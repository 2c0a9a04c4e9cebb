"""Small builders shared by tests."""

from __future__ import annotations

import json
import subprocess
import sys

import sqlalchemy as sa

TABLES = ("study", "rubric", "dimension", "item", "rater", "assignment", "rating",
          "rating_revision", "repeat_rating", "adjudication", "judge_config", "judgment",
          "judge_batch", "cost_ledger", "generation_config", "generation", "quality_settings",
          "gold_score", "training_rating", "qualification", "attention_check", "attention_result",
          "norming_session", "norming_item", "norming_participant", "norming_rating",
          "metric_config", "metric_score")


def h2h(*args: str) -> subprocess.CompletedProcess:
    """Run `h2h` in a subprocess; it must succeed."""
    proc = subprocess.run([sys.executable, "-m", "annotate.cli", *args], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


def item(id: str, task: str = "dialogue", **kw) -> dict:
    d = {"id": id, "task": task, "scenario": kw.pop("scenario", id),
         "context": {"persona": "Mira, a calm companion.", "memories": [], "schedule": "",
                     "turns": [{"role": "user", "text": f"hello from {id}"}]},
         "response": kw.pop("response", f"reply to {id}"), "model": "m", "condition": None,
         "reference": None, "metadata": {}}
    d.update(kw)
    return d


def jsonl(*objs: dict) -> str:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def snapshot(engine) -> dict[str, int | str]:
    """Row counts of every table plus the rating rows, to prove an import changed nothing."""
    out: dict[str, int | str] = {}
    with engine.connect() as c:
        for t in TABLES:
            out[t] = c.execute(sa.text(f"SELECT COUNT(*) FROM {t}")).scalar_one()
        rows = c.execute(sa.text("SELECT rater_id, item_id, dimension, score, comment "
                                 "FROM rating ORDER BY rater_id, item_id, dimension")).all()
        out["ratings"] = repr(rows)
        items = c.execute(sa.text("SELECT id, content_hash FROM item ORDER BY id")).all()
        out["items"] = repr(items)
    return out
