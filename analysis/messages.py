"""Messages a person reads, kept translatable (the analysis core's copy of
:mod:`data.messages`).

The analysis core imports nothing of ours, so it has its own :class:`Msg`: the same
behaviour (``tests/annotate/test_i18n.py`` holds the two to it). A ``Msg`` *is* its English
text, as the CLI, JSON output and the report print it; the app translates it by its
``template`` and ``params``. Mark templates with ``Msg("…")`` / ``nMsg("…", "…", n)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["Msg", "nMsg", "N_", "join_msgs", "message_of"]


def N_(message: str) -> str:  # noqa: N802 (gettext's name for "translate later")
    """Mark a constant for the catalog; the app translates it where it shows it."""
    return message


class Msg(str):
    """English text that remembers its template and parameters (``str.format`` fields)."""

    template: str
    params: dict[str, Any]
    plural: str | None
    n: int | None

    def __new__(cls, template: str, /, **params: Any) -> Msg:
        self = super().__new__(cls, template.format(**params))
        self.template, self.params, self.plural, self.n = template, params, None, None
        return self

    def __reduce__(self):  # copies and pickles keep the template (not only the text)
        return (_rebuild, (self.template, self.plural, self.n, self.params))


def nMsg(singular: str, plural: str, n: int, /, **params: Any) -> Msg:  # noqa: N802
    """The singular or plural form for the number ``n`` (also a parameter, ``{n}``)."""
    params.setdefault("n", n)
    m = Msg(singular if n == 1 else plural, **params)
    m.template, m.plural, m.n = singular, plural, n
    return m


def _rebuild(template: str, plural: str | None, n: int | None, params: dict) -> Msg:
    return Msg(template, **params) if plural is None else nMsg(template, plural, n, **params)


# the separators of a list, a message of their own: Chinese joins reasons with "；" and the
# parts of a list with "、" (an ASCII "; " or ", " between Chinese words reads as a typo)
_SEPARATORS = {"; ": Msg("; "), ", ": Msg(", ")}


def join_msgs(sep: str, parts: Iterable[str]) -> Msg:
    """``sep.join(parts)`` that stays translatable part by part; ``"; "`` and ``", "`` are
    translated too (any other ``sep`` stays as written)."""
    parts = list(parts)
    params: dict[str, Any] = {f"p{i}": p for i, p in enumerate(parts)}
    if sep in _SEPARATORS:
        template = "{sep}".join(f"{{p{i}}}" for i in range(len(parts)))
        params["sep"] = _SEPARATORS[sep]
    else:
        safe = sep.replace("{", "{{").replace("}", "}}")
        template = safe.join(f"{{p{i}}}" for i in range(len(parts)))
    return Msg(template, **params)


def message_of(exc: BaseException) -> str:
    """An exception's message, a :class:`Msg` kept as one (``str(exc)`` would flatten it)."""
    if len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)
