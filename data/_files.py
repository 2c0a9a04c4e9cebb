"""Reading user files: bytes to text with a located error for a wrong encoding or empty file."""

from __future__ import annotations

from pathlib import Path

from .errors import FormatError, Problem


def read_text(path: str | Path, *, what: str) -> tuple[str, str]:
    """Return (display name, text). Rejects unreadable, non-UTF-8 and empty files."""
    p = Path(path)
    name = p.name
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise FormatError([Problem(str(p), None, None, "no such file")]) from None
    except OSError as exc:
        raise FormatError([Problem(str(p), None, None, f"cannot read: {exc.strerror}")]) \
            from None
    return name, decode(data, name, what=what)


def decode(data: bytes, name: str, *, what: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FormatError([Problem(
            name, line, None,
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {col}); "
            "save the file as UTF-8")]) from None
    if not text.strip():
        raise FormatError([Problem(name, None, None, f"the file is empty: no {what} in it")])
    return text
