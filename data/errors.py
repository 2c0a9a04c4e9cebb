"""Errors a user can act on.

Every problem with a user's file or command is an :class:`H2HError`; the CLI prints its
message and exits non-zero, the app shows it (in the reader's language: a message given as a
:class:`~messages.Msg` keeps its template), and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from messages import Msg

__all__ = ["H2HError", "FormatError", "Problem", "SHOWN_PROBLEMS", "reject"]


class H2HError(Exception):
    """A user error: bad input, missing study, wrong option. Never a bug. Its one argument
    is the message (a :class:`~messages.Msg` to be shown translated in the app)."""


@dataclass(frozen=True)
class Problem:
    """One located problem in an input file."""

    file: str
    line: int | None
    field: str | None
    message: str  # what is wrong (a Msg, so the app can translate it)

    @property
    def text(self) -> Msg:
        """``file:line: field 'f': problem`` (no line or field where there is none)."""
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.field:
            return Msg("{where}: field '{field}': {problem}", where=where, field=self.field,
                       problem=self.message)
        return Msg("{where}: {problem}", where=where, problem=self.message)

    def __str__(self) -> str:
        return str(self.text)


SHOWN_PROBLEMS = 50
"""How many of a rejected file's problems its message lists (the rest are counted)."""


class FormatError(H2HError):
    """A file was rejected whole. ``problems`` lists each located problem, every one of the
    file at once (structure and fields alike); the message shows :data:`SHOWN_PROBLEMS`."""

    def __init__(self, problems: list[Problem]):
        if not problems:
            raise ValueError("FormatError needs at least one problem")
        self.problems = problems
        self.head = Msg("{file} was rejected; nothing was imported.", file=problems[0].file)
        shown = "\n".join(f"  {p}" for p in problems[:SHOWN_PROBLEMS])
        more = (f"\n  … and {len(problems) - SHOWN_PROBLEMS} more"
                if len(problems) > SHOWN_PROBLEMS else "")
        super().__init__(f"{self.head}\n{shown}{more}")

    @property
    def first(self) -> Problem:
        return self.problems[0]


def reject(problems: list[Problem]) -> None:
    """Reject a file whole: raise :class:`FormatError` with every problem found, in the order
    of the file's lines (a line's own problems keep their order; those of no line come
    first). Nothing happens when there are none."""
    if problems:
        raise FormatError(sorted(problems, key=lambda p: p.line or 0))
