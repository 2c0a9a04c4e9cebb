"""Files a command writes (``--out``): checked before any work, written with one clear error.

Every command that writes a file takes the same path rules, so a typo costs one line of
output and no traceback: the folder must exist (nothing is created on a guess: a typo would
leave a tree of folders behind), the path must not be a folder, and an error while writing
(permissions, a full or read-only disk) is said with the path and the system's reason.

Example
-------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> try:
...     check_out_file(d)
... except H2HError as exc:
...     print(str(exc).replace(str(d), "D"))
--out: 'D' is a folder; give a file name, such as D/out.csv
"""

from __future__ import annotations

from pathlib import Path

from messages import Msg

from .errors import H2HError

__all__ = ["check_out_file", "check_out_folder", "write_out_text"]


def _suffix_hint(path: Path, example: str) -> str:
    return str(path / example)


def check_out_file(path: Path | str, option: str = "--out", example: str = "out.csv") -> Path:
    """``path`` as a file to write: its folder exists and it is not itself a folder."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise H2HError(Msg("{option}: '{out}' is a folder; give a file name, such as "
                           "{hint}", option=option, out=str(p),
                           hint=_suffix_hint(p, example)))
    parent = p.parent
    if not parent.exists():
        raise H2HError(Msg("{option}: folder '{parent}' does not exist; create it first or "
                           "give another path", option=option, parent=str(parent)))
    if not parent.is_dir():
        raise H2HError(Msg("{option}: '{parent}' is not a folder", option=option,
                           parent=str(parent)))
    return p


def check_out_folder(path: Path | str, option: str = "--out") -> Path:
    """``path`` as a folder to write into: it is a folder or can be made in an existing
    one (its parent must exist)."""
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise H2HError(Msg("{option}: '{out}' is a file; give a folder for the files",
                           option=option, out=str(p)))
    if not p.exists() and not p.parent.exists():
        raise H2HError(Msg("{option}: folder '{parent}' does not exist; create it first or "
                           "give another path", option=option, parent=str(p.parent)))
    return p


def write_out_text(path: Path | str, text: str, option: str = "--out") -> Path:
    """Write ``text`` (UTF-8) to ``path`` after :func:`check_out_file`; an error while
    writing is one message naming the path (no partial file is left behind)."""
    p = check_out_file(path, option)
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as exc:
        try:
            if p.exists() and p.stat().st_size == 0:
                p.unlink()
        except OSError:
            pass
        raise H2HError(Msg("{option}: cannot write '{out}': {reason}", option=option,
                           out=str(p), reason=exc.strerror or type(exc).__name__)) from None
    return p
