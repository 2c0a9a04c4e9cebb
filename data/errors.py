"""Errors a user can act on.

Every problem with a user's file or command is an :class:`H2HError`; the CLI prints its
message and exits non-zero, the app shows it, and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["H2HError", "FormatError", "Problem"]


class H2HError(Exception):
    """A user error: bad input, missing study, wrong option. Never a bug."""


@dataclass(frozen=True)
class Problem:
    """One located problem in an input file."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        what = f" field '{self.field}':" if self.field else ""
        return f"{where}:{what} {self.message}"


class FormatError(H2HError):
    """A file was rejected whole. ``problems`` lists each located problem (at most 20 shown)."""

    def __init__(self, problems: list[Problem]):
        if not problems:
            raise ValueError("FormatError needs at least one problem")
        self.problems = problems
        shown = "\n".join(f"  {p}" for p in problems[:20])
        more = f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
        head = f"{problems[0].file} was rejected; nothing was imported."
        super().__init__(f"{head}\n{shown}{more}")

    @property
    def first(self) -> Problem:
        return self.problems[0]
