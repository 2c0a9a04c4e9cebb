"""Item files: JSON Lines (the interchange format) and CSV, validated strictly.

One JSON object per line::

    {"id": "dlg-001-a", "task": "dialogue", "scenario": "dlg-001",
     "context": {"persona": "...", "memories": ["..."], "schedule": "...", "outfit": "...",
                 "turns": [{"role": "user", "text": "..."}]},
     "response": "...", "model": "model-a", "condition": "sap", "reference": null,
     "metadata": {}}

Chat logs are taken as they come: a turn's role ``assistant`` (the OpenAI chat convention) is
the companion's turn, ``content`` is accepted for ``text``, and ``system`` turns at the start
of the conversation become the companion's persona (:func:`chat_roles`).

Required: ``id``, ``task``, ``context.turns`` (at least one), ``response``. ``context.outfit``
(the day's outfit, part of the H2HTalk protocol's context) is optional and left out of the
stored record when absent, so items without it keep their content hash. A file with any
problem is rejected whole; every problem is reported with file, line and field.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_serializer,
)

from messages import Msg, message_of

from ._files import (
    Limits,
    decode,
    iter_csv,
    loads_json,
    numbered_lines,
    read_text,
    short,
    value_problem,
)
from .errors import FormatError, Problem

__all__ = ["Turn", "Context", "ItemRecord", "parse_items", "parse_items_csv", "read_items",
           "parse_item_bytes", "ITEM_FIELDS", "CSV_ITEM_COLUMNS", "CONTEXT_FIELDS", "item_hash",
           "lines", "iter_items", "iter_items_csv", "iter_item_file", "duplicate_id",
           "chat_roles", "CHAT_ROLES"]

ITEM_FIELDS = ("id", "task", "scenario", "context", "response", "model", "condition",
               "reference", "metadata")
CSV_ITEM_COLUMNS = ("id", "task", "scenario", "persona", "memories", "schedule", "outfit",
                    "turns", "response", "model", "condition", "reference", "metadata")
CONTEXT_FIELDS = ("persona", "memories", "schedule", "outfit", "turns")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Turn(_Strict):
    role: Literal["user", "companion"]
    text: str = Field(min_length=1)


class Context(_Strict):
    persona: str | None = None
    memories: list[str] = Field(default_factory=list)
    schedule: str | None = None
    outfit: str | None = None
    turns: list[Turn] = Field(min_length=1)

    @model_serializer(mode="wrap")
    def _without_absent_outfit(self, handler):
        # ``outfit`` came after the first studies: an item without one serialises (and
        # hashes) exactly as before it existed
        d = handler(self)
        if d.get("outfit") is None:
            d.pop("outfit", None)
        return d


class ItemRecord(_Strict):
    id: str = Field(min_length=1, max_length=200)
    task: str = Field(min_length=1, max_length=40)
    scenario: str | None = Field(default=None, min_length=1, max_length=200)
    context: Context
    response: str = Field(min_length=1)
    model: str = Field(default="unknown", min_length=1, max_length=200)
    condition: str | None = Field(default=None, max_length=100)
    reference: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    _line: int | None = PrivateAttr(default=None)

    @field_validator("id", "task", "scenario", "model")
    @classmethod
    def _no_edge_space(cls, v: str | None) -> str | None:
        if v is not None and v != v.strip():
            raise ValueError(Msg("must not start or end with spaces"))
        return v

    @property
    def line(self) -> int | None:
        """The line of the file this record came from (None when built in code)."""
        return self._line

    @property
    def scenario_id(self) -> str:
        return self.scenario or self.id

    def stored(self) -> dict[str, Any]:
        """The normalised record (defaults filled in), as exported and hashed."""
        d = self.model_dump(mode="json")
        d["scenario"] = self.scenario_id
        return d


def item_hash(record: dict[str, Any]) -> str:
    canonical = json.dumps({k: record.get(k) for k in ITEM_FIELDS}, sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# pydantic's common reasons, worded for a person and translatable (others as pydantic says)
_REASONS = {"string_type": Msg("input should be a valid string"),
            "dict_type": Msg("input should be a valid dictionary"),
            "list_type": Msg("input should be a valid list")}


def _describe(err: dict[str, Any]) -> tuple[str, str]:
    loc = ".".join(str(p) for p in err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = ".".join(str(p) for p in err["loc"][:-1])
        allowed = {"": ITEM_FIELDS, "context": CONTEXT_FIELDS}
        allow = allowed.get(parent, ("role", "text"))
        return loc, Msg("unknown field (allowed: {fields})", fields=", ".join(allow))
    if kind == "missing":
        return loc, Msg("required field is missing")
    if kind == "literal_error":
        return loc, Msg("must be 'user' or 'companion' ('assistant' is taken as the companion, "
                        "'system' at the start as the persona), got {value}",
                        value=repr(err["input"]))
    if kind == "too_short" and loc.endswith("turns"):
        return loc, Msg("needs at least one turn")
    if kind == "string_too_short":
        return loc, Msg("must not be empty")
    got = short(err.get("input"))
    if kind == "string_too_long":
        return loc, Msg("string should have at most {max} characters (got {got})",
                        max=(err.get("ctx") or {}).get("max_length"), got=got)
    if kind == "value_error" and isinstance((err.get("ctx") or {}).get("error"), ValueError):
        reason = message_of(err["ctx"]["error"])
        return loc, Msg("value error, {reason} (got {got})", reason=reason, got=got)
    if kind == "model_type":
        return loc, Msg("input should be a valid dictionary or instance of {name} (got {got})",
                        name=(err.get("ctx") or {}).get("class_name"), got=got)
    if kind in _REASONS:
        return loc, Msg("{reason} (got {got})", reason=_REASONS[kind], got=got)
    return loc, err["msg"][0].lower() + err["msg"][1:] + f" (got {got})"


def lines(text: str) -> list[str]:
    """Split on line feeds only (``\\r\\n`` too), never on the other characters Python's
    ``splitlines`` treats as breaks (U+2028, U+2029, U+0085, form feed …): a JSON string may
    hold them raw, and ``h2h export items`` writes them so."""
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def parse_items(text: str, file: str, known_tasks: tuple[str, ...]) -> list[ItemRecord]:
    """Parse JSON Lines text into records, or raise :class:`FormatError` with every problem."""
    return _all_or_error(iter_items(enumerate(lines(text), start=1), file, known_tasks), file)


def iter_items(numbered: Iterable[tuple[int, str]], file: str,
               known_tasks: tuple[str, ...]) -> Iterator[ItemRecord | Problem]:
    """JSON Lines, one line at a time: each line's record, or its problems, in the file's
    order (from :func:`data._files.numbered_lines`, lines may end in their line break).
    Ids are not compared across lines here: :func:`parse_items` does, and a streamed import
    does it in its staging table (:mod:`data.importing`)."""
    for n, line in numbered:
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        if not line.strip():
            continue
        try:
            obj = loads_json(line)
        except ValueError as exc:
            yield Problem(file, n, None, message_of(exc))
            continue
        yield from _checked(obj, n, file, known_tasks)


def _all_or_error(found: Iterable[ItemRecord | Problem], file: str) -> list[ItemRecord]:
    """Every record, or :class:`FormatError` with every problem, a repeated id included."""
    problems: list[Problem] = []
    out: list[ItemRecord] = []
    first_line: dict[str, int] = {}
    for r in found:
        if isinstance(r, Problem):
            problems.append(r)
        elif r.id in first_line:
            problems.append(duplicate_id(file, r.line, r.id, first_line[r.id]))
        else:
            first_line[r.id] = r.line
            out.append(r)
    if problems:
        raise FormatError(problems)
    return out


def duplicate_id(file: str, line: int | None, item_id: str, first: int | None) -> Problem:
    return Problem(file, line, "id", Msg("duplicate id '{id}' (first on line {line})",
                                         id=item_id, line=first))


CHAT_ROLES = {"assistant": "companion"}
"""Roles of other chat conventions and the h2htalk role they are (OpenAI: ``assistant``)."""


def chat_roles(obj: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, Msg]]]:
    """An item object with its turns in h2htalk's roles, and the problems found.

    ``assistant`` turns are the companion's; a turn's ``content`` (OpenAI) is its ``text``;
    ``system`` turns at the start of the conversation are the companion's persona (joined
    by blank lines). A ``system`` turn after the conversation began, or system turns beside
    a persona, is a problem naming the turn (the item is never guessed at)."""
    ctx = obj.get("context")
    turns = ctx.get("turns") if isinstance(ctx, dict) else None
    if not isinstance(turns, list) or not any(isinstance(t, dict) for t in turns):
        return obj, []
    problems: list[tuple[str, Msg]] = []
    new_turns, system = [], []
    for i, t in enumerate(turns):
        if not isinstance(t, dict):
            new_turns.append(t)
            continue
        t = dict(t)
        if "text" not in t and isinstance(t.get("content"), str):
            t["text"] = t.pop("content")
        role = t.get("role")
        if role in CHAT_ROLES:
            t["role"] = CHAT_ROLES[role]
        if role == "system":
            if new_turns:
                problems.append((f"context.turns.{i}.role", Msg(
                    "a 'system' turn after the conversation began; system turns are taken "
                    "only at the start, as the companion's persona")))
            else:
                system.append(t.get("text"))
            continue
        new_turns.append(t)
    if not system:
        return {**obj, "context": {**ctx, "turns": new_turns}}, problems
    if ctx.get("persona"):
        problems.append(("context.turns.0.role", Msg(
            "'system' turns and a persona: system turns are taken as the companion's "
            "persona, so give it once")))
    if not all(isinstance(x, str) and x.strip() for x in system):
        problems.append(("context.turns.0.text", Msg("a 'system' turn needs a non-empty text")))
    if problems:
        return obj, problems
    return {**obj, "context": {**ctx, "persona": "\n\n".join(system),
                               "turns": new_turns}}, []


def _checked(obj: Any, n: int, file: str, known_tasks) -> Iterator[ItemRecord | Problem]:
    if not isinstance(obj, dict):
        yield Problem(file, n, None, Msg("each line must be one JSON object {{...}}"))
        return
    bad = value_problem(obj)
    if bad is not None:
        yield Problem(file, n, bad[0] or None, bad[1])
        return
    obj, chat = chat_roles(obj)
    if chat:
        for fld, msg in chat:
            yield Problem(file, n, fld, msg)
        return
    task = obj.get("task")
    unknown = Problem(file, n, "task", Msg(
        "unknown task '{task}' (this study's tasks: {tasks}; declare others in the rubric's "
        "tasks list)", task=task, tasks=", ".join(known_tasks)))
    try:
        rec = ItemRecord.model_validate(obj)
    except ValidationError as exc:
        fields = []
        for err in exc.errors():
            fld, msg = _describe(err)
            fields.append(fld)
            yield Problem(file, n, fld, msg)
        # every problem of the line at once: an unknown task beside an empty conversation
        # was named only once the conversation was fixed (a user trial)
        if isinstance(task, str) and task not in known_tasks and "task" not in fields:
            yield unknown
        return
    if rec.task not in known_tasks:
        yield unknown
        return
    rec._line = n
    yield rec


def _csv_cell_json(value: str, kind: type) -> Any:
    value = value.strip()
    if not value:
        return kind()
    return loads_json(value)


def _csv_turns(value: str) -> Any:
    """Turns in a CSV cell: a JSON list, or one ``user: …`` / ``companion: …`` line per turn
    (``assistant:`` and ``system:`` too, read as :func:`chat_roles` says)."""
    v = value.strip()
    if v.startswith("["):
        return loads_json(v)
    turns: list[dict[str, str]] = []
    for raw in lines(v):
        if not raw.strip():
            continue
        role, sep, text = raw.partition(":")
        if sep and role.strip().lower() in ("user", "companion", "assistant", "system"):
            turns.append({"role": role.strip().lower(), "text": text.strip()})
        elif turns:
            turns[-1]["text"] += "\n" + raw.strip()
        else:
            raise ValueError(Msg("each turn must start with 'user:' or 'companion:' (or "
                                 "'assistant:', 'system:')"))
    return turns


def parse_items_csv(text: str, file: str, known_tasks: tuple[str, ...]) -> list[ItemRecord]:
    """Parse the CSV item layout (columns in :data:`CSV_ITEM_COLUMNS`) into records."""
    return _all_or_error(iter_items_csv(io.StringIO(text, newline=""), file, known_tasks),
                         file)


def iter_items_csv(text_lines: Iterable[str], file: str,
                   known_tasks: tuple[str, ...]) -> Iterator[ItemRecord | Problem]:
    """The CSV item layout one row at a time (see :func:`iter_items`); ``text_lines`` are
    the file's lines with their line ends."""
    rows = iter_csv(text_lines, file)
    _kind, header = next(rows)
    first = next(rows, None)
    head_problems: list[Problem] = []
    if first is not None and first[0] == "problem" and first[1].line in (1, None):
        head_problems = [first[1]] + [p for _kind, p in rows]  # the reader stopped there
        first = None
    structural = bool(head_problems)
    unknown = [h for h in header if h not in CSV_ITEM_COLUMNS]
    missing = [h for h in ("id", "task", "turns", "response") if h not in header]
    for h in unknown:
        head_problems.append(Problem(file, 1, h, Msg("unknown column (allowed: {columns})",
                                                     columns=", ".join(CSV_ITEM_COLUMNS))))
    for h in missing:
        head_problems.append(Problem(file, 1, h, Msg("required column is missing")))
    yield from head_problems
    if structural or missing:  # the rows cannot be read; a bad row's structure can wait
        return
    found = False
    for kind, value in itertools.chain([first] if first is not None else [], rows):
        if kind == "problem":
            found = True
            yield value
            continue
        n, row = value
        obj: dict[str, Any] = {}
        ctx: dict[str, Any] = {}
        try:
            for col in ("id", "task", "scenario", "response", "model", "condition",
                        "reference"):
                if row.get(col):
                    obj[col] = row[col]
            for col in ("persona", "schedule", "outfit"):
                if row.get(col):
                    ctx[col] = row[col]
            cur = "memories"
            if row.get("memories", "").strip():
                m = row["memories"].strip()
                ctx["memories"] = loads_json(m) if m.startswith("[") else \
                    [ln.strip() for ln in lines(m) if ln.strip()]
            cur = "turns"
            ctx["turns"] = _csv_turns(row.get("turns") or "")
            cur = "metadata"
            obj["metadata"] = _csv_cell_json(row.get("metadata") or "", dict)
        except ValueError as exc:
            found = True
            yield Problem(file, n, cur, Msg("cannot read this cell: {reason}",
                                            reason=message_of(exc)))
            continue
        obj["context"] = ctx
        found = True
        yield from _checked(obj, n, file, known_tasks)
    if not found:
        yield Problem(file, None, None, Msg("the file has a header but no item rows"))


def read_items(path: str | Path, known_tasks: tuple[str, ...],
               limits: Limits | None = None) -> list[ItemRecord]:
    """Read an item file; ``.csv`` is read as CSV, anything else as JSON Lines. (An import
    streams the file instead: :func:`data.importing.import_items_file`.)"""
    name, text = read_text(path, what=Msg("items"), limits=limits)
    if Path(path).suffix.lower() == ".csv":
        return parse_items_csv(text, name, known_tasks)
    return parse_items(text, name, known_tasks)


def iter_item_file(fh: IO[bytes], name: str, known_tasks: tuple[str, ...], *,
                   limits: Limits | None = None) -> Iterator[ItemRecord | Problem]:
    """An open item file (``.csv`` by its name, else JSON Lines), one record or problem at a
    time, read line by line: memory stays flat whatever the file's size."""
    numbered = numbered_lines(fh, name, what=Msg("items"), limits=limits)
    if name.lower().endswith(".csv"):
        return iter_items_csv((text for _n, text in numbered), name, known_tasks)
    return iter_items(numbered, name, known_tasks)


def parse_item_bytes(data: bytes, name: str, known_tasks: tuple[str, ...]) -> list[ItemRecord]:
    """Like :func:`read_items` for an upload already in memory."""
    text = decode(data, name, what=Msg("items"))
    if name.lower().endswith(".csv"):
        return parse_items_csv(text, name, known_tasks)
    return parse_items(text, name, known_tasks)
