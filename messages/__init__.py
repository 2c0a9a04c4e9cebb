"""Messages a person reads, kept translatable: an English template and its parameters.

A :class:`Msg` *is* its English text (a ``str``): the CLI prints it, ``str(exc)`` gives it,
JSON writes it and tests compare it exactly as before. It also keeps the ``template`` and
the ``params`` it was made from, so the app can show it in the reader's language
(``annotate.i18n.tr``): the template is looked up in the catalog, a parameter that is a
message itself is translated too, and every other parameter (numbers, item ids, rater
names, file names, text from files) goes in as it is.

``Msg("…")`` and ``nMsg("…", "…", n)`` mark their templates for the catalog (pybabel
keywords ``Msg`` and ``nMsg:1,2``; see docs/app.md, "Languages"); :func:`N_` marks a
constant that is translated where it is shown. Joining messages (``"; ".join``) or adding
to one gives a plain ``str``, which the app shows untranslated: use :func:`join_msgs`.

This module is the lowest floor of the house: it imports only the standard library, and every
package (``data``, ``analysis``, ``judge``, ``annotate``) may import it — the analysis core
included, which imports nothing else of ours (the import contracts in ``.importlinter``).
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


def with_params(message: str, /, **changes: Any) -> str:
    """``message`` with some parameters replaced (e.g. a dimension key by the rubric's label in
    the reader's language); a plain ``str`` is returned as it is. Works on any message that
    keeps its template this way, rebuilt as its own class."""
    params = getattr(message, "params", None)
    if not isinstance(params, dict) or not set(changes) & set(params):
        return message
    rebuild, (template, plural, n, _) = message.__reduce__()
    return rebuild(template, plural, n, {**params, **{k: v for k, v in changes.items()
                                                       if k in params}})


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
