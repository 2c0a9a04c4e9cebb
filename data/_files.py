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
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from messages import N_, Msg

from .errors import FormatError, Problem

__all__ = ["read_text", "decode", "read_csv", "loads_json", "value_problem", "MAX_DEPTH",
           "short", "Limits", "parse_size", "open_file", "numbered_lines", "iter_csv"]

MAX_DEPTH = 32
"""Deepest nesting of lists and objects accepted in an item (context, metadata). Real items
nest three or four levels; the limit keeps hostile files from exhausting the stack."""


@dataclass(frozen=True)
class Limits:
    """The largest file and the longest line an import reads (``--max-size``,
    ``--max-line``). The defaults are far above real study files (the H2HTalk benchmark at
    full size, 232,500 replies, is a 76 MB JSON Lines file with lines of a few kB) and stop
    what is not a study file at all before it fills the memory."""

    max_bytes: int = 1 << 30   # 1 GiB
    max_line: int = 16 << 20   # 16 MiB


_SIZE = re.compile(r"(?i)\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)?\s*")
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def parse_size(text: str) -> int:
    """``"2GB"``, ``"512MiB"``, ``"1000000"`` → bytes; ValueError for anything else."""
    m = _SIZE.fullmatch(text or "")
    if m is None:
        raise ValueError(Msg("'{text}' is not a size such as 500MB or 2GB", text=text))
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])


def _size_words(n: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _fail(name: str, problem: Msg, line: int | None = None) -> FormatError:
    return FormatError([Problem(name, line, None, problem)])


def open_file(path: str | Path, limits: Limits | None = None) -> tuple[str, IO[bytes]]:
    """Open a file to import, for reading bytes: (display name, file). Refused, with the
    reason, unless it is a readable regular file within ``limits.max_bytes`` — a device
    (``/dev/zero``), a pipe or a socket never ends, so it is refused before a byte is read."""
    limits = limits or Limits()
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise _fail(str(p), Msg("no such file")) from None
    except OSError as exc:
        raise _fail(str(p), Msg("cannot read: {reason}", reason=exc.strerror)) from None
    if stat.S_ISDIR(st.st_mode):
        raise _fail(str(p), Msg("is a folder, not a file"))
    if not stat.S_ISREG(st.st_mode):
        raise _fail(str(p), Msg("is not a regular file (a device, a pipe or a socket); save "
                                "what it holds to a file and import that"))
    if st.st_size > limits.max_bytes:
        raise _fail(p.name, Msg("the file is {size}, more than the {limit} an import reads; if "
                                "it really is a study file, raise the limit with --max-size",
                                size=_size_words(st.st_size),
                                limit=_size_words(limits.max_bytes)))
    try:
        return p.name, open(p, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as exc:
        raise _fail(str(p), Msg("cannot read: {reason}", reason=exc.strerror)) from None


def numbered_lines(fh: IO[bytes], name: str, *, what: str, limits: Limits | None = None
                   ) -> Iterator[tuple[int, str]]:
    """(line number, line as text with its line end) of a binary file, read one line at a
    time (memory stays flat whatever the file's size). Each line is checked like
    :func:`decode` checks a whole file — UTF-8, no NUL byte — and for its length; a file of
    blank lines only is empty. Problems raise :class:`FormatError` at once: what follows an
    undecodable line cannot be trusted to be the lines it seems."""
    limits = limits or Limits()
    blank, total, n = True, 0, 0
    while True:
        raw = fh.readline(limits.max_line + 1)
        if not raw:
            break
        n += 1
        total += len(raw)
        if total > limits.max_bytes:
            raise _fail(name, Msg("the file is more than the {limit} an import reads; if it "
                                  "really is a study file, raise the limit with --max-size",
                                  limit=_size_words(limits.max_bytes)))
        if len(raw) > limits.max_line and not raw.endswith(b"\n"):
            raise _fail(name, Msg("line {n} is longer than {limit}, the longest line an import "
                                  "reads; if the file is right, raise the limit with "
                                  "--max-line", n=n, limit=_size_words(limits.max_line)), n)
        if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError([Problem(name, n, None, Msg(
                "not valid UTF-8 (byte 0x{byte:02x} at column {col}); save the file as UTF-8",
                byte=raw[exc.start], col=exc.start + 1))]) from None
        nul = raw.find(b"\x00")
        if nul >= 0:
            raise FormatError([Problem(name, n, None, Msg(
                "contains a NUL byte (0x00) at column {col}; this is not a text file, or it is "
                "damaged", col=nul + 1))])
        blank = blank and not text.strip()
        yield n, text
    if blank:
        raise _fail(name, Msg("the file is empty: no {what} in it", what=what))


def read_text(path: str | Path, *, what: str, limits: Limits | None = None
              ) -> tuple[str, str]:
    """Return (display name, text). Rejects what is not a regular file, a file past
    ``limits.max_bytes``, unreadable, non-UTF-8 and empty files."""
    limits = limits or Limits()
    name, fh = open_file(path, limits)
    with fh:
        try:
            data = fh.read(limits.max_bytes + 1)
        except OSError as exc:
            raise _fail(str(path), Msg("cannot read: {reason}", reason=exc.strerror)) from None
    if len(data) > limits.max_bytes:  # it grew since it was measured
        raise _fail(name, Msg("the file is more than the {limit} an import reads; if it "
                              "really is a study file, raise the limit with --max-size",
                              limit=_size_words(limits.max_bytes)))
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
    limit, a row with more or fewer cells than the header, or a column named twice in the
    header is a problem on that row's line. Rows with a problem are left out; rows whose
    cells are all blank are skipped. After a quoting error, reading starts again on the next
    line (the stray quote is taken as that line's), so the rows after it are still read and
    checked: a file's problems are all reported at once, not one per attempt.
    """
    rows: list[tuple[int, dict[str, str]]] = []
    problems: list[Problem] = []
    header: list[str] = []
    for kind, value in iter_csv(io.StringIO(text, newline=""), file):
        if kind == "header":
            header = value
        elif kind == "row":
            rows.append(value)
        else:
            problems.append(value)
    return header, rows, problems


class _Replayable:
    """An iterator over text lines that remembers the lines taken since :meth:`mark`, so
    that after a quoting error the lines after the row's first one can be read again by a
    fresh reader (memory: one row's lines, which the line and size caps bound)."""

    def __init__(self, lines):
        self._it = iter(lines)
        self._pending: list[str] = []
        self._taken: list[str] = []

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self._pending.pop() if self._pending else next(self._it)
        self._taken.append(line)
        return line

    def mark(self) -> None:
        self._taken = []

    def replay_after_first(self) -> None:
        self._pending.extend(reversed(self._taken[1:]))
        self._taken = []


def iter_csv(lines, file: str) -> Iterator[tuple[str, Any]]:
    """:func:`read_csv` one row at a time over an iterable of text lines (with their line
    ends): ``("header", [columns])`` first, then ``("row", (line, {column: cell}))`` or
    ``("problem", Problem)`` in the file's order."""
    src = _Replayable(lines)
    reader = csv.reader(src, strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
    except csv.Error as exc:
        yield "header", []
        yield "problem", Problem(file, 1, None, _csv_reason(exc, 1))
        return
    yield "header", header
    first: dict[str, int] = {}
    twice = False
    for i, h in enumerate(header, start=1):  # a second column of one name would hide the first
        if h in first:
            twice = True
            yield "problem", Problem(file, 1, h, Msg(
                "the header names this column twice (columns {first} and {again}); a file may "
                "have each column once", first=first[h], again=i))
        else:
            first[h] = i
    if twice:
        return
    base, end = 0, reader.line_num  # lines before the current reader's first; last line read
    while True:
        start = end + 1
        src.mark()
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            yield "problem", Problem(file, start, None, _csv_reason(exc, start))
            # the reader cannot find the next row after this: a fresh one on the next line
            src.replay_after_first()
            reader = csv.reader(src, strict=True)
            base, end = start, start
            continue
        end = base + reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            more = Msg("more") if len(cells) > len(header) else Msg("fewer")
            span = Msg(" (the row runs from line {start} to {end}: check its quotes)",
                       start=start, end=end) if end > start else ""
            yield "problem", Problem(file, start, None, Msg(
                "{cells} cells, {more} than the header's {columns} columns{span}",
                cells=len(cells), more=more, columns=len(header), span=span))
            continue
        yield "row", (start, dict(zip(header, cells, strict=True)))


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


class _DuplicateKey(ValueError):
    pass


def _no_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's keys, each once: ``{"id": "ok2", …, "id": "ok99"}`` is refused, never
    read as ``ok99`` (Python's json keeps the last)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _v in pairs if k in seen or seen.add(k))
        raise _DuplicateKey(Msg("the key {key} appears twice in one object; give each key "
                                "once", key=short(key)))
    return out


def loads_json(text: str) -> Any:
    """``json.loads`` that raises only ``ValueError`` with a message a person can act on.

    Refuses ``NaN``/``Infinity`` (Python's json accepts them; they are not JSON and would be
    stored as null), a key given twice in one object, integers past Python's 4,300-digit
    limit and nesting deep enough to exhaust the parser's stack.
    """
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_twice)
    except json.JSONDecodeError as exc:
        raise ValueError(Msg("not valid JSON: {reason} at column {col}",
                             reason=_json_reason(exc.msg), col=exc.colno)) from None
    except RecursionError:
        raise ValueError(Msg("nested too deeply (at most {depth} levels)", depth=MAX_DEPTH)) \
            from None
    except _DuplicateKey as exc:
        raise ValueError(exc.args[0]) from None
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
    text or key (PostgreSQL cannot store them, so both backends refuse them alike), lone
    surrogates (``"\\udc80"`` in JSON: half of a UTF-16 pair, not a character; UTF-8 cannot
    hold it, and it was stored as replacement characters) in any text or key, and
    non-finite numbers.
    """
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        v, where, depth = stack.pop()
        if isinstance(v, str):
            if "\x00" in v:
                return where, Msg("contains a NUL character (\\u0000), which cannot be stored")
            if _SURROGATE.search(v):
                return where, _surrogate(v)
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
                if isinstance(k, str) and _SURROGATE.search(k):
                    return where, Msg("a key: {problem}", problem=_surrogate(k))
                stack.append((sub, f"{where}.{k}" if where else str(k), depth + 1))
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate(text: str) -> Msg:
    code = ord(_SURROGATE.search(text).group())
    return Msg("contains a lone surrogate (\\u{code:04x}), half of a UTF-16 pair and not a "
               "character; it cannot be stored", code=code)


def short(v: Any, limit: int = 40) -> str:
    """A value as quoted in an error message, cut to ``limit`` characters."""
    s = repr(v) if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return s if len(s) <= limit else s[:limit - 3] + "…"
