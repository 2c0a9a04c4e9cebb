"""Reading user files safely: bytes to text, CSV rows and JSON values, each problem located.

Whatever a file holds — a wrong encoding, a NUL byte, an unbalanced quote, a cell past the CSV
size limit, JSON nested 100,000 deep, a 5,000-digit number, ``NaN`` — the reader reports
``file:line: field: problem`` and never lets a Python exception through.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from messages import N_, Msg

from .errors import FormatError, Problem

__all__ = ["read_text", "decode", "read_csv", "loads_json", "value_problem", "MAX_DEPTH",
           "short"]

MAX_DEPTH = 32
"""Deepest nesting of lists and objects accepted in an item (context, metadata). Real items
nest three or four levels; the limit keeps hostile files from exhausting the stack."""


def read_text(path: str | Path, *, what: str) -> tuple[str, str]:
    """Return (display name, text). Rejects unreadable, non-UTF-8 and empty files."""
    p = Path(path)
    name = p.name
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise FormatError([Problem(str(p), None, None, Msg("no such file"))]) from None
    except IsADirectoryError:
        raise FormatError([Problem(str(p), None, None, Msg("is a folder, not a file"))]) \
            from None
    except OSError as exc:
        raise FormatError([Problem(str(p), None, None, Msg("cannot read: {reason}",
                                                           reason=exc.strerror))]) from None
    return name, decode(data, name, what=what)


def decode(data: bytes, name: str, *, what: str) -> str:
    """UTF-8 text of a file, or a located error: wrong encoding, NUL byte, empty file."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _where(data, exc.start)
        raise FormatError([Problem(
            name, line, None,
            Msg("not valid UTF-8 (byte 0x{byte:02x} at column {col}); save the file as UTF-8",
                byte=data[exc.start], col=col))]) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = _where(data, nul)
        raise FormatError([Problem(name, line, None, Msg(
            "contains a NUL byte (0x00) at column {col}; this is not a text file, or it is "
            "damaged", col=col))])
    if not text.strip():
        raise FormatError([Problem(name, None, None, Msg("the file is empty: no {what} in it",
                                                         what=what))])
    return text


def _where(data: bytes, offset: int) -> tuple[int, int]:
    line = data[:offset].count(b"\n") + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def read_csv(text: str, file: str) -> tuple[list[str], list[tuple[int, dict[str, str]]],
                                            list[Problem]]:
    """Split CSV text into (header, [(first line of the row, {column: cell})], problems).

    Strict about structure, because a lenient reader silently merges rows: an unbalanced
    quote that runs to the end of the file, bad quoting, a cell past the CSV module's size
    limit, or a row with more or fewer cells than the header is a problem on that row's line.
    Rows with a problem are left out; rows whose cells are all blank are skipped.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    problems: list[Problem] = []
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        header = [h.strip() for h in next(reader, [])]
    except csv.Error as exc:
        return [], [], [Problem(file, 1, None, _csv_reason(exc, 1))]
    end = reader.line_num
    while True:
        start = end + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # the reader cannot find the next row reliably after this
            problems.append(Problem(file, start, None, _csv_reason(exc, start)))
            break
        end = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            more = Msg("more") if len(cells) > len(header) else Msg("fewer")
            span = Msg(" (the row runs from line {start} to {end}: check its quotes)",
                       start=start, end=end) if end > start else ""
            problems.append(Problem(file, start, None, Msg(
                "{cells} cells, {more} than the header's {columns} columns{span}",
                cells=len(cells), more=more, columns=len(header), span=span)))
            continue
        rows.append((start, dict(zip(header, cells, strict=True))))
    return header, rows, problems


def _csv_reason(exc: csv.Error, start: int) -> Msg:
    msg = str(exc)
    if "field larger than field limit" in msg:
        return Msg("a cell is longer than {limit:,} characters, the CSV limit (put very long "
                   "texts in a JSON Lines file)", limit=csv.field_size_limit())
    if "unexpected end of data" in msg:
        return Msg("a quoted cell opened on line {start} is never closed before the end of the "
                   "file (a stray \" quote?)", start=start)
    return Msg("bad quoting: {reason} (a cell with a \" must be quoted and its quotes doubled)",
               reason=msg)


def _reject_constant(name: str) -> Any:
    raise ValueError(Msg("{name} is not a number JSON allows (write null, or quote it as text)",
                         name=name))


def loads_json(text: str) -> Any:
    """``json.loads`` that raises only ``ValueError`` with a message a person can act on.

    Refuses ``NaN``/``Infinity`` (Python's json accepts them; they are not JSON and would be
    stored as null), integers past Python's 4,300-digit limit and nesting deep enough to
    exhaust the parser's stack.
    """
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(Msg("not valid JSON: {reason} at column {col}",
                             reason=_json_reason(exc.msg), col=exc.colno)) from None
    except RecursionError:
        raise ValueError(Msg("nested too deeply (at most {depth} levels)", depth=MAX_DEPTH)) \
            from None
    except ValueError as exc:
        if "digits" in str(exc):
            raise ValueError(Msg("a number with more than 4,300 digits")) from None
        raise


# the json module's reasons, translatable (others are shown as the module words them)
_JSON_REASONS = {r: Msg(r) for r in (
    N_("Expecting value"), N_("Expecting property name enclosed in double quotes"),
    N_("Expecting ',' delimiter"), N_("Expecting ':' delimiter"), N_("Extra data"),
    N_("Unterminated string starting at"), N_("Invalid control character at"),
    N_("Invalid \\escape"), N_("Invalid \\uXXXX escape"))}


def _json_reason(reason: str) -> str:
    return _JSON_REASONS.get(reason, reason)


def value_problem(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first (field path, problem) in a parsed value, or None when it is storable as is.

    Checked without recursion: nesting deeper than :data:`MAX_DEPTH`, NUL characters in any
    text or key (PostgreSQL cannot store them, so both backends refuse them alike), and
    non-finite numbers.
    """
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        v, where, depth = stack.pop()
        if isinstance(v, str):
            if "\x00" in v:
                return where, Msg("contains a NUL character (\\u0000), which cannot be stored")
        elif isinstance(v, float):
            if not math.isfinite(v):
                return where, Msg("{value} is not a finite number", value=v)
        elif isinstance(v, dict | list):
            if depth >= MAX_DEPTH:
                return (where if len(where) <= 40 else where[:39] + "…",
                        Msg("nested deeper than {depth} levels", depth=MAX_DEPTH))
            pairs = v.items() if isinstance(v, dict) else enumerate(v)
            for k, sub in pairs:
                if isinstance(k, str) and "\x00" in k:
                    return where, Msg("a key contains a NUL character (\\u0000)")
                stack.append((sub, f"{where}.{k}" if where else str(k), depth + 1))
    return None


def short(v: Any, limit: int = 40) -> str:
    """A value as quoted in an error message, cut to ``limit`` characters."""
    s = repr(v) if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return s if len(s) <= limit else s[:limit - 3] + "…"
