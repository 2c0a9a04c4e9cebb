"""Scenarios to generate responses for: from the study's items, or from a scenario file.

A scenario file is JSON Lines, one scenario per line, like an item without a response::

    {"id": "dlg-001", "task": "dialogue",
     "context": {"persona": "...", "memories": ["..."], "schedule": "...",
                 "outfit": "...", "turns": [{"role": "user", "text": "..."}]},
     "metadata": {}}

(``outfit``, the day's outfit, is optional; the ``h2htalk`` generation protocol shows it.)

From the study, each distinct ``scenario`` of the items is one scenario, with the context of its
first item (in import order).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.engine import Engine
from sqlmodel import select

from data._files import read_text
from data.engine import read_session
from data.errors import FormatError, H2HError, Problem
from data.items import Context
from data.models import AttentionCheck, Item

__all__ = ["Scenario", "read_scenarios", "study_scenarios", "select_scenarios"]


@dataclass(frozen=True)
class Scenario:
    id: str
    task: str
    context: dict[str, Any]
    metadata: dict[str, Any]


class _ScenarioRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str = Field(min_length=1, max_length=150)
    task: str = Field(min_length=1, max_length=40)
    context: Context
    metadata: dict[str, Any] = Field(default_factory=dict)


def read_scenarios(path: str | Path, known_tasks: tuple[str, ...]) -> list[Scenario]:
    """Read and validate a scenario file; any bad line rejects the whole file."""
    name, text = read_text(path, what="scenarios")
    problems: list[Problem] = []
    out: list[Scenario] = []
    first: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            rec = _ScenarioRecord.model_validate(obj)
        except json.JSONDecodeError as exc:
            problems.append(Problem(name, n, None, f"not valid JSON: {exc.msg}"))
            continue
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"]) or None
                problems.append(Problem(name, n, loc, err["msg"]))
            continue
        if rec.task not in known_tasks:
            problems.append(Problem(name, n, "task", f"unknown task '{rec.task}' (this "
                                    f"study's tasks: {', '.join(known_tasks)})"))
            continue
        if rec.id in first:
            problems.append(Problem(name, n, "id", f"duplicate scenario id '{rec.id}' (first "
                                    f"on line {first[rec.id]})"))
            continue
        first[rec.id] = n
        out.append(Scenario(rec.id, rec.task, rec.context.model_dump(mode="json"),
                            rec.metadata))
    if not problems and not out:
        problems.append(Problem(name, None, None, "the file has no scenarios"))
    if problems:
        raise FormatError(problems)
    return out


def study_scenarios(engine: Engine) -> list[Scenario]:
    """Each distinct scenario of the study's items, with its first item's context."""
    with read_session(engine) as s:
        rows = s.exec(select(Item.id, Item.scenario, Item.task, Item.context)
                      .order_by(Item.position, Item.id)).all()
        checks = set(s.exec(select(AttentionCheck.item_id)).all())  # not study scenarios
    seen: dict[str, Scenario] = {}
    for item_id, sid, task, ctx in rows:
        if sid not in seen and item_id not in checks:
            seen[sid] = Scenario(sid, task, ctx, {})
    return list(seen.values())


def select_scenarios(scenarios: list[Scenario], *, ids: tuple[str, ...] = (),
                     task: str | None = None, limit: int | None = None) -> list[Scenario]:
    if limit is not None and limit < 1:
        raise H2HError(f"--limit must be at least 1, got {limit}")
    out = [sc for sc in scenarios if task is None or sc.task == task]
    if ids:
        known = {sc.id for sc in out}
        missing = [i for i in ids if i not in known]
        if missing:
            raise H2HError(f"--only: no scenario {', '.join(missing[:10])}")
        out = [sc for sc in out if sc.id in set(ids)]
    return out[:limit] if limit is not None else out
