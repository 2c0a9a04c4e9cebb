"""Prompt templates: TOML files with ``{{placeholder}}`` texts, rendered from an item and the
study's rubric.

A judge template has ``system``, ``user`` (one dimension per call) and ``user_all`` (all
applicable dimensions in one call); a generation template has ``system``. The anchors come from
the parsed rubric, the same text raters see. Unknown placeholders are rejected when the file is
loaded, naming the file, line and the placeholders that exist.

Example
-------
>>> t = load_judge_template(None)
>>> t.name
'h2htalk default judge'
>>> render("Hi {{ name }}", {"name": "Mira"})
'Hi Mira'
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from data._files import read_text
from data.errors import FormatError, H2HError, Problem
from data.rubric import Dimension, Rubric
from messages import Msg

__all__ = ["JudgeTemplate", "GenerationTemplate", "load_judge_template",
           "load_pairwise_template", "PAIRWISE_PLACEHOLDERS",
           "load_generation_templates", "load_sap", "render", "placeholders", "item_values",
           "dimension_values", "render_anchors", "render_dimension", "JUDGE_PLACEHOLDERS",
           "DIMENSION_PLACEHOLDERS", "GENERATION_PLACEHOLDERS", "text_hash",
           "GENERATION_TASKS", "PROTOCOLS"]

_PH = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
CONTEXT_PLACEHOLDERS = ("task", "persona", "memories", "schedule", "outfit", "turns",
                        "response")
DIMENSION_PLACEHOLDERS = ("dimension_key", "dimension_label", "dimension_description", "scale",
                          "anchors")
JUDGE_PLACEHOLDERS = (("guidelines", "rubric_name", "dimensions", "output")
                      + CONTEXT_PLACEHOLDERS + DIMENSION_PLACEHOLDERS)
PAIRWISE_PLACEHOLDERS = (("guidelines", "rubric_name", "dimensions", "output")
                         + CONTEXT_PLACEHOLDERS[:-1] + ("first", "second")
                         + DIMENSION_PLACEHOLDERS)
"""A pairwise template's placeholders: the judge's, with the two replies as ``first`` and
``second`` (in the order the call shows them) instead of ``response``."""
GENERATION_PLACEHOLDERS = ("task", "persona", "memories", "schedule", "outfit")
GENERATION_TASKS = ("dialogue", "recollection", "itinerary")
PROTOCOLS = ("default", "h2htalk")
"""Generation protocols: ``default`` (the templates in ``data/prompts``) and ``h2htalk`` (the
benchmark's reply format, ``data/prompts/h2htalk``: one or two short sentences, expressions
and actions in parentheses, given the persona, memories, the day's schedule and outfit)."""
_NONE = "(none)"


def text_hash(payload: Any) -> str:
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def placeholders(text: str) -> list[str]:
    return [m.group(1) for m in _PH.finditer(text)]


def render(text: str, values: Mapping[str, str]) -> str:
    """Replace each ``{{name}}`` in one pass (inserted text is never expanded again)."""
    return _PH.sub(lambda m: values.get(m.group(1), m.group(0)), text).strip()


@dataclass(frozen=True)
class JudgeTemplate:
    name: str
    system: str
    user: str
    user_all: str
    source: str

    @property
    def hash(self) -> str:
        return text_hash({"system": self.system, "user": self.user, "user_all": self.user_all})

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "system": self.system, "user": self.user,
                "user_all": self.user_all, "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, str]) -> JudgeTemplate:
        return cls(name=d["name"], system=d["system"], user=d["user"],
                   user_all=d.get("user_all", ""), source=d.get("source", ""))


@dataclass(frozen=True)
class GenerationTemplate:
    task: str
    name: str
    system: str
    source: str


def _parse_toml(text: str, file: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise FormatError([Problem(file, int(m.group(1)) if m else None, None,
                                   Msg("not valid TOML: {reason}", reason=exc))]) from None


def _line_of(text: str, needle: str) -> int | None:
    for n, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return n
    return None


def _check_fields(raw: dict[str, Any], text: str, file: str, allowed: dict[str, tuple[str, ...]],
                  required: Sequence[str]) -> list[Problem]:
    problems: list[Problem] = []
    for key in sorted(set(raw) - set(allowed) - {"name", "description"}):
        problems.append(Problem(file, _line_of(text, key), key, Msg(
            "unknown field (allowed: {fields})",
            fields=", ".join(["name", "description", *allowed]))))
    for key in required:
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            problems.append(Problem(file, None, key, Msg("required: a non-empty text")))
    for key, known in allowed.items():
        val = raw.get(key)
        if val is None:
            continue
        if not isinstance(val, str):
            problems.append(Problem(file, _line_of(text, key), key, Msg("must be a text")))
            continue
        for ph in placeholders(val):
            if ph not in known:
                problems.append(Problem(file, _line_of(text, "{{" + ph) or _line_of(text, ph),
                                        key, Msg("unknown placeholder {{{{{name}}}}} (known here: "
                                                 "{known})", name=ph, known=", ".join(known))))
    return problems


def load_judge_template(path: str | Path | None) -> JudgeTemplate:
    """A judge template file, or the bundled default (``data/prompts/judge_default.toml``)."""
    if path is None:
        text = resources.files("data").joinpath("prompts/judge_default.toml").read_text("utf-8")
        file = "judge_default.toml"
    else:
        file, text = read_text(path, what=Msg("template"))
    raw = _parse_toml(text, file)
    all_known = tuple(p for p in JUDGE_PLACEHOLDERS if p not in DIMENSION_PLACEHOLDERS)
    problems = _check_fields(raw, text, file, {"system": JUDGE_PLACEHOLDERS,
                                               "user": JUDGE_PLACEHOLDERS,
                                               "user_all": all_known}, ("system", "user"))
    for key in ("user", "user_all"):
        val = raw.get(key)
        if isinstance(val, str) and val.strip() and "response" not in placeholders(val):
            problems.append(Problem(file, _line_of(text, key), key, Msg("must show the reply to "
                                                                        "rate: add "
                                                                        "{{{{response}}}}")))
    if problems:
        raise FormatError(problems)
    name = raw.get("name") or Path(file).stem
    return JudgeTemplate(name=str(name), system=raw["system"].strip(), user=raw["user"].strip(),
                         user_all=(raw.get("user_all") or "").strip(), source=file)


def load_pairwise_template(path: str | Path | None) -> JudgeTemplate:
    """A pairwise judge template file, or the bundled default
    (``data/prompts/pairwise_default.toml``): ``system``, ``user`` (one dimension per call)
    and ``user_all``; both user texts must show ``{{first}}`` and ``{{second}}``."""
    if path is None:
        text = resources.files("data").joinpath("prompts/pairwise_default.toml"
                                                ).read_text("utf-8")
        file = "pairwise_default.toml"
    else:
        file, text = read_text(path, what=Msg("template"))
    raw = _parse_toml(text, file)
    all_known = tuple(p for p in PAIRWISE_PLACEHOLDERS if p not in DIMENSION_PLACEHOLDERS)
    problems = _check_fields(raw, text, file, {"system": PAIRWISE_PLACEHOLDERS,
                                               "user": PAIRWISE_PLACEHOLDERS,
                                               "user_all": all_known}, ("system", "user"))
    for key in ("user", "user_all"):
        val = raw.get(key)
        if isinstance(val, str) and val.strip():
            missing = [p for p in ("first", "second") if p not in placeholders(val)]
            if missing:
                problems.append(Problem(file, _line_of(text, key), key, Msg(
                    "must show both replies: add {{{{first}}}} and {{{{second}}}}")))
    if problems:
        raise FormatError(problems)
    name = raw.get("name") or Path(file).stem
    return JudgeTemplate(name=str(name), system=raw["system"].strip(), user=raw["user"].strip(),
                         user_all=(raw.get("user_all") or "").strip(), source=file)


def load_generation_templates(folder: str | Path | None = None,
                              protocol: str = "default") -> dict[str, GenerationTemplate]:
    """The generation template per task family: ``generate_<task>.toml`` from ``folder`` when
    it has one, else the bundled one of the ``protocol`` (see :data:`PROTOCOLS`). Other task
    families use the dialogue template."""
    if protocol not in PROTOCOLS:
        raise H2HError(f"--protocol: '{protocol}' is not one of {', '.join(PROTOCOLS)}")
    bundled = ("prompts",) if protocol == "default" else ("prompts", protocol)
    out: dict[str, GenerationTemplate] = {}
    for task in GENERATION_TASKS:
        fname = f"generate_{task}.toml"
        user_file = Path(folder) / fname if folder is not None else None
        if user_file is not None and user_file.exists():
            file, text = read_text(user_file, what="template")
        else:
            file = fname if protocol == "default" else f"{protocol}/{fname}"
            text = resources.files("data").joinpath(*bundled, fname).read_text("utf-8")
        raw = _parse_toml(text, file)
        problems = _check_fields(raw, text, file, {"system": GENERATION_PLACEHOLDERS},
                                 ("system",))
        if problems:
            raise FormatError(problems)
        out[task] = GenerationTemplate(task=task, name=str(raw.get("name") or fname),
                                       system=raw["system"].strip(), source=file)
    return out


def load_sap(path: str | Path | None = None) -> str:
    """The Secure Attachment Persona system prompt (bundled ``data/prompts/sap.txt``)."""
    if path is None:
        return resources.files("data").joinpath("prompts/sap.txt").read_text("utf-8").strip()
    return read_text(path, what="SAP text")[1].strip()


# --- values for the placeholders -----------------------------------------------------------

def _turns(turns: Sequence[Mapping[str, str]]) -> str:
    names = {"user": "User", "companion": "Companion"}
    return "\n\n".join(f"{names.get(t['role'], t['role'])}: {t['text']}" for t in turns)


def item_values(task: str, context: Mapping[str, Any], response: str = "") -> dict[str, str]:
    """The conversation placeholders of one item (empty parts read "(none)")."""
    memories = context.get("memories") or []
    return {
        "task": task,
        "persona": (context.get("persona") or "").strip() or _NONE,
        "memories": "\n".join(f"- {m}" for m in memories) if memories else _NONE,
        "schedule": (context.get("schedule") or "").strip() or _NONE,
        "outfit": (context.get("outfit") or "").strip() or _NONE,
        "turns": _turns(context.get("turns") or []),
        "response": response,
    }


def render_anchors(dim: Dimension) -> str:
    """One line per level: ``4 = Good: <anchor>`` (the label is left out when it is the number)."""
    lines = []
    for lv in dim.levels:
        label = "" if lv.label == str(lv.value) else f" = {lv.label}"
        lines.append(f"{lv.value}{label}: {lv.anchor}")
    return "\n".join(lines)


def dimension_values(dim: Dimension) -> dict[str, str]:
    return {"dimension_key": dim.key, "dimension_label": dim.label,
            "dimension_description": dim.description or "", "scale": dim.describe_scale(),
            "anchors": render_anchors(dim)}


def render_dimension(dim: Dimension) -> str:
    """A dimension as a block for all-dimensions prompts."""
    parts = [f"### {dim.label} (key: {dim.key})"]
    if dim.description:
        parts.append(dim.description)
    parts.append(f"Scale: {dim.describe_scale()}.\n{render_anchors(dim)}")
    return "\n".join(parts)


def rubric_values(rubric: Rubric) -> dict[str, str]:
    return {"guidelines": rubric.guidelines or _NONE, "rubric_name": rubric.name}
