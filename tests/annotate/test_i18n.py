"""English and Simplified Chinese: every string the app wraps for translation — in the app's
code and in the messages the data layer, the analysis package and the judge package make for
it — has a Chinese translation in annotate/locale/zh.po (with the same placeholders), and a
message keeps its English text for the command line while the app shows it translated."""

from __future__ import annotations

import ast
import copy
import pickle
import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

import messages
from annotate.services.i18n import CATALOGS, N_, problem_lines, translate, translations
from data.errors import FormatError, Problem
from data.ratings import parse_ratings
from data.rubric import load_default_rubric

ROOT = Path(__file__).resolve().parents[2]
# every package whose strings reach the app, and the markers they use (docs/app.md)
PACKAGES = ("annotate", "data", "analysis", "judge", "messages")
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "Msg": None, "nMsg": (1, 2)}
FIELD = re.compile(r"\{([^{}]*)\}")


def _fields(text: str) -> list[str]:
    """The ``str.format`` fields of ``text`` (name, conversion and spec), escaped braces
    left out."""
    return sorted(FIELD.findall(text.replace("{{", "").replace("}}", "")))


def _app_strings() -> dict[str | tuple[str, str], str]:
    """Every string marked for the catalog in the packages (plural messages as (singular,
    plural)), with where it is."""
    found = {}
    for package in PACKAGES:
        for file, line, msg, _c, _ctx in extract_from_dir(
                str(ROOT / package), method_map=[("**.py", "python")], keywords=KEYWORDS):
            found.setdefault(msg, f"{package}/{file}:{line}")
    return found


def test_the_app_wraps_its_strings():
    strings = _app_strings()
    # a sample from every page and package, so a catalog test over nothing cannot pass
    for s in ("Sign in", "Access code", "Save and next", "Cannot rate", "Guidelines",
              "Score every dimension or mark it “Cannot rate” first:",
              "That code did not work. Check it and try again, or ask the study team.",
              "What are you importing?", "Bootstrap resamples", "Save adjudication",
              "{where}: field '{field}': {problem}", "unknown column (allowed: {columns})",
              "an integer from {min} to {max}", "reliable (≥ .800)",
              "can replace a human rater", "required: a non-empty text",
              ("Deactivated {name}; {n} open session ended.",
               "Deactivated {name}; {n} open sessions ended.")):
        assert s in strings, s


MARKERS = {"Msg", "nMsg", "N_", "_", "ngettext"}


def test_the_extractor_sees_every_marked_string():
    """Babel's extractor skips some marked strings (inside an f-string, or a message in a
    comprehension inside another message's arguments): those would ship untranslated, so
    every marked literal the code holds must be among the extracted ones."""
    extracted = {m[0] if isinstance(m, tuple) else m for m in _app_strings()}
    unseen = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                first = node.args[0]
                if name in MARKERS and isinstance(first, ast.Constant) \
                        and isinstance(first.value, str) and first.value not in extracted:
                    unseen.append(f"{path.relative_to(ROOT)}:{node.lineno}: {first.value!r}")
    assert unseen == [], "\n".join(unseen)


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
        elif any(_fields(msg[0] if isinstance(msg, tuple) else msg) != _fields(f)
                 for f in forms):
            problems.append(f"{where}: {msg!r} and its translation differ in placeholders")
    assert problems == [], "\n".join(problems)


def test_the_catalog_has_no_stale_or_fuzzy_entries():
    """Tidy: every entry is still used somewhere (pybabel update marks the others obsolete)."""
    with (CATALOGS / "zh.po").open("rb") as fh:
        catalog = read_po(fh, locale="zh")
    used = {m[0] if isinstance(m, tuple) else m for m in _app_strings()}
    assert [m.id for m in catalog if m.id and m.fuzzy] == []
    stale = [m.id for m in catalog if m.id and (m.id[0] if isinstance(m.id, tuple) else m.id)
             not in used]
    assert stale == []
    assert not catalog.obsolete


def test_translations_are_read_from_the_catalog():
    zh = translations("zh")
    assert zh.gettext("Save and next") == "保存并继续"
    assert zh.gettext("a string nobody wrapped") == "a string nobody wrapped"  # falls back
    assert translations("en").gettext("Save and next") == "Save and next"
    assert zh.ngettext("{n} minute", "{n} minutes", 120).format(n=120) == "120 分钟"
    assert translations("en").ngettext("{n} minute", "{n} minutes", 1) == "{n} minute"
    assert N_("Cannot rate") == "Cannot rate"


def test_a_message_is_its_english_text_and_keeps_its_template():
    m = messages.Msg("no item '{item_id}'", item_id="a{b}")
    assert m == "no item 'a{b}'" and str(m) == "no item 'a{b}'" and f"{m}" == str(m)
    assert type(str(m)) is str and isinstance(m, str)
    assert (m.template, m.params) == ("no item '{item_id}'", {"item_id": "a{b}"})
    one = messages.nMsg("{n} item", "{n} items", 1)
    many = messages.nMsg("{n} item", "{n} items", 3)
    assert (one, many) == ("1 item", "3 items")
    assert (many.template, many.plural, many.n) == ("{n} item", "{n} items", 3)
    for back in (pickle.loads(pickle.dumps(many)), copy.deepcopy(many)):
        assert back == "3 items" and (back.template, back.plural, back.n) == \
            ("{n} item", "{n} items", 3)
    joined = messages.join_msgs("; ", [m, "plain {text}"])
    assert joined == "no item 'a{b}'; plain {text}" and joined.params["p0"] is m
    assert messages.message_of(ValueError(m)) is m
    assert messages.message_of(KeyError("a", "b")) == str(KeyError("a", "b"))


def test_messages_are_shown_translated_with_their_message_parameters():
    zh, en = translations("zh"), translations("en")
    rubric = load_default_rubric()
    csv = "item_id,rater,dimension,score\na,pat,empathy,3\nb,pat,empathy,7\n"
    with pytest.raises(FormatError) as exc:
        parse_ratings(csv, "r.csv", rubric, {"b": "dialogue"})
    first, second = exc.value.problems
    # the command line's English, unchanged
    assert str(first) == "r.csv:2: field 'item_id': unknown item 'a' (import the items first)"
    assert str(exc.value).startswith("r.csv was rejected; nothing was imported.\n  r.csv:2:")
    zh_lines = problem_lines(exc.value, zh)
    assert problem_lines(exc.value, en) == [str(first), str(second)]
    assert zh_lines[0].startswith("r.csv:2: 字段 'item_id'") and "'a'" in zh_lines[0]
    assert "scale" not in zh_lines[1] and "7" in zh_lines[1]
    # "an integer from 1 to 5" is a message inside the message: translated too
    scale = zh.gettext("an integer from {min} to {max}").format(min=1, max=5)
    assert scale != "an integer from 1 to 5"
    bad = Problem("r.csv", 3, "score", rubric.dimension("empathy").describe_scale())
    assert str(bad) == "r.csv:3: field 'score': an integer from 1 to 5"
    assert translate(bad.text, zh) == f"r.csv:3: 字段 'score'：{scale}"
    assert translate(exc.value.head, zh) != str(exc.value.head)
    assert translate(42, zh) == 42 and translate("plain text", zh) == "plain text"


def test_with_params_replaces_a_parameter_and_keeps_the_template():
    from messages import Msg, nMsg, with_params

    m = with_params(Msg("{dim}: best configuration {best}", dim="empathy", best="j"), dim="共情")
    assert type(m) is Msg and m == "共情: best configuration j"
    assert m.template == "{dim}: best configuration {best}" and m.params["best"] == "j"
    p = with_params(nMsg("{dim}: {n} item", "{dim}: {n} items", 2, dim="safety"), dim="Safety")
    assert p == "Safety: 2 items" and p.plural == "{dim}: {n} items"
    assert with_params("plain empathy", dim="x") == "plain empathy"
    assert with_params(Msg("no {x}", x=1), dim="y") == "no 1"


def test_joined_messages_take_the_readers_punctuation():
    """'; ' and ', ' between messages are Chinese '；' and '、' in Chinese (a verdict's reasons
    read '…−0.05; 替代标注者检验通过…'), the English text unchanged."""
    zh = translations("zh")
    parts = [messages.Msg("no ratings"), messages.Msg("no variance")]
    assert messages.join_msgs("; ", parts) == "no ratings; no variance"
    assert translate(messages.join_msgs("; ", parts), zh) == "暂无评分；无变异"
    assert translate(messages.join_msgs(", ", parts), zh) == "暂无评分、无变异"
    assert translate(messages.join_msgs(" / ", parts), zh) == "暂无评分 / 无变异"
