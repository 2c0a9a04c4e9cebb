"""English and Simplified Chinese: every string the app wraps for translation has a Chinese
translation in annotate/locale/zh.po (with the same placeholders), and the pages speak the
tab's language."""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from annotate.services.i18n import CATALOGS, N_, translations

APP = Path(__file__).resolve().parents[2] / "annotate"
PLACEHOLDER = re.compile(r"\{[a-z_]*\}")


def _app_strings() -> dict[str | tuple[str, str], str]:
    """Every string wrapped in _(), N_() or ngettext() in the app's code (plural messages as
    (singular, plural)), with where it is."""
    found = {}
    for file, line, msg, _c, _ctx in extract_from_dir(
            str(APP), method_map=[("**.py", "python")],
            keywords={"_": None, "N_": None, "ngettext": (1, 2)}):
        found.setdefault(msg, f"annotate/{file}:{line}")
    return found


def test_the_app_wraps_its_strings():
    strings = _app_strings()
    # a sample from every page of the rater's path, so a catalog test over nothing cannot pass
    for s in ("Sign in", "Access code", "Save and next", "Cannot rate", "Guidelines",
              "Score every dimension or mark it “Cannot rate” first:",
              "That code did not work. Check it and try again, or ask the study team."):
        assert s in strings


def test_every_app_string_has_a_chinese_translation():
    with (CATALOGS / "zh.po").open("rb") as fh:
        catalog = read_po(fh, locale="zh")
    problems = []
    for msg, where in _app_strings().items():
        entry = catalog.get(msg[0] if isinstance(msg, tuple) else msg)
        forms = (list(entry.string) if isinstance(entry.string, tuple) else [entry.string]) \
            if entry is not None else []
        if not forms or not all(forms):
            problems.append(f"{where}: {msg!r} has no Chinese translation in zh.po")
        elif entry.fuzzy:
            problems.append(f"{where}: {msg!r} is marked fuzzy (check it, remove the flag)")
        elif any(sorted(PLACEHOLDER.findall(msg[0] if isinstance(msg, tuple) else msg))
                 != sorted(PLACEHOLDER.findall(f)) for f in forms):
            problems.append(f"{where}: {msg!r} and its translation differ in placeholders")
    assert problems == [], "\n".join(problems)


def test_translations_are_read_from_the_catalog():
    zh = translations("zh")
    assert zh.gettext("Save and next") == "保存并继续"
    assert zh.gettext("a string nobody wrapped") == "a string nobody wrapped"  # falls back
    assert translations("en").gettext("Save and next") == "Save and next"
    assert zh.ngettext("{n} minute", "{n} minutes", 120).format(n=120) == "120 分钟"
    assert translations("en").ngettext("{n} minute", "{n} minutes", 1) == "{n} minute"
    assert N_("Cannot rate") == "Cannot rate"
