"""`h2h ... --help` as a person reads it, at any terminal width (issue 34).

Typer's rich help keeps a docstring's line breaks after its first paragraph and wraps the
lines again (a description then breaks mid-sentence), reads ``[local]`` in a help text as
Rich markup and drops it, shows ``<bool>`` after every flag and ``{file}`` for an argument in
the usage line. :func:`tidy` gives every command and group of an app a class that fixes
these, without touching any command's code:

* paragraphs are reflowed: single line breaks become spaces, except before a line that
  starts with ``Example:`` (each example keeps its own line);
* every help text is escaped, so square brackets show as written;
* flags show no type, other options their type as click writes it (``TEXT``, ``PATH``);
  arguments show as ``FILE`` (``[FILE]`` when optional) in the usage line and the
  arguments table.

Example
-------
>>> reflow("Back the study up while\\nraters work.\\n\\nExample: h2h a\\nExample: h2h b")
'Back the study up while raters work.\\n\\nExample: h2h a\\nExample: h2h b'
"""

from __future__ import annotations

import re

import typer
from rich.markup import escape
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

__all__ = ["reflow", "tidy", "H2HCommand", "H2HGroup"]

_KEEP_LINE = re.compile("^\\s*(Example:|- |\\* |\x08)")


def reflow(text: str | None) -> str | None:
    """Paragraphs of ``text`` on one line each; a line starting with ``Example:`` (or a
    list item) keeps its own line."""
    if not text:
        return text
    import inspect

    paragraphs = inspect.cleandoc(text).split("\n\n")
    out = []
    for para in paragraphs:
        lines = [ln.strip() for ln in para.splitlines() if ln.strip()]
        joined = ""
        for ln in lines:
            if not joined:
                joined = ln
            elif _KEEP_LINE.match(ln):
                joined += "\n" + ln
            else:
                joined += " " + ln
        out.append(joined)
    return "\n\n".join(out)


def _escaped(text: str | None) -> str | None:
    return text if not text else escape(text)


_TYPES = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH", "bool": "BOOLEAN"}


def _type_name(shown: str | None) -> str | None:
    """Typer's ``<str>``, ``<list[path]>`` as click writes types: ``TEXT``, ``PATH`` (a
    repeatable option says so in its help). Narrower, so the help column keeps its words."""
    if not shown or not (shown.startswith("<") and shown.endswith(">")):
        return shown
    inner = shown[1:-1]
    if inner.startswith("list[") and inner.endswith("]"):
        inner = inner[5:-1]
    return _TYPES.get(inner, inner.upper())


class _Argument(TyperArgument):
    """An argument named in capitals (``FILE``), never in braces."""

    @property
    def display_name_raw(self) -> str:
        return (self.metavar or self.name or "").upper()

    def display_type_rich(self, ctx):
        return _type_name(super().display_type_rich(ctx))

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


class _Option(TyperOption):
    """A flag shows no type (``--force``, not ``--force <bool>``)."""

    def display_type_rich(self, ctx):
        if self.is_flag and not self.count:
            return None
        return _type_name(super().display_type_rich(ctx))


def _tidy_params(cmd) -> None:
    for p in cmd.params:
        if isinstance(p, TyperArgument) and not isinstance(p, _Argument):
            p.__class__ = _Argument
        elif isinstance(p, TyperOption) and not isinstance(p, _Option):
            p.__class__ = _Option
        if getattr(p, "help", None):
            p.help = _escaped(reflow(p.help))


def _help_option(option):
    if isinstance(option, TyperOption) and not isinstance(option, _Option):
        option.__class__ = _Option
    return option


class H2HCommand(TyperCommand):
    """A command whose help reads as written (see the module's docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.help = _escaped(reflow(self.help))
        self.short_help = _escaped(self.short_help)
        _tidy_params(self)

    def get_help_option(self, ctx):
        return _help_option(super().get_help_option(ctx))


class H2HGroup(TyperGroup):
    """A group whose help reads as written (see the module's docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.help = _escaped(reflow(self.help))
        _tidy_params(self)

    def get_help_option(self, ctx):
        return _help_option(super().get_help_option(ctx))


def tidy(app: typer.Typer) -> typer.Typer:
    """Give ``app``, its groups and every command the classes above (call it once every
    command is registered)."""
    if app.info.cls in (None, TyperGroup) \
            or isinstance(app.info.cls, typer.models.DefaultPlaceholder):
        app.info.cls = H2HGroup
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = H2HCommand
    for group in app.registered_groups:
        tidy(group.typer_instance)
    return app
