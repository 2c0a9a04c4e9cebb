"""Reading a judge's answer into scores, tolerantly, and never by guessing.

The structured payload (tool input, or JSON the server returned under a schema) is read first.
Without one, the text is searched for a JSON object (the whole text, a fenced code block, or the
first balanced ``{...}``) and, failing that, for lines like ``Score: 4`` or ``Empathy: 4``. A
reply that is only a score is read too (small local models often answer so): a bare number
(``4``, ``4/5``), a number with its level's label (``4 · Good``, ``Good (4)``) or the label
alone. A bare number off the scale is ``off-scale``; a number whose label names another level
(``4 · Weak`` where 4 is Good) is ``malformed`` - the judge said two things.

Every score is checked against its dimension's scale. A malformed, off-scale or missing answer
gives ``score=None`` with a reason; the reason starts with its category (``malformed``,
``off-scale``, ``missing``, ``declined``, ``empty``) so summaries can count them. Nothing is
coerced: 4.5 is off a 1-5 scale, not rounded; "four" is malformed, not 4.

Example
-------
>>> from data.rubric import load_default_rubric
>>> d = load_default_rubric().dimension("empathy")
>>> parse_answer("Warm and specific.\\nScore: 4", None, [d], all_mode=False)["empathy"].score
4
>>> parse_answer('```json\\n{"score": 7}\\n```', None, [d], all_mode=False)["empathy"].reason
'off-scale: 7 is not on the scale (an integer from 1 to 5)'
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from data.rubric import Dimension

__all__ = ["Parsed", "parse_answer", "extract_json", "reason_category", "REASON_CATEGORIES"]

REASON_CATEGORIES = ("malformed", "off-scale", "missing", "declined", "empty", "request")
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_NUM = r"\**\s*(-?\d+(?:\.\d+)?)"


@dataclass(frozen=True)
class Parsed:
    """One dimension's outcome: a score on the scale, or None and why."""

    score: int | None
    reason: str | None = None
    reasoning: str = ""


def reason_category(reason: str | None) -> str:
    """The category of an unscored reason (the text before the first colon)."""
    if not reason:
        return ""
    head = reason.split(":", 1)[0].strip()
    return head if head in REASON_CATEGORIES else "other"


def _balanced_objects(text: str):
    depth, start, in_str, esc = 0, None, False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0 and start is not None:
                yield text[start:i + 1]


def extract_json(text: str) -> dict[str, Any] | None:
    """The JSON object in ``text``: the whole text, a fenced block, or the first ``{...}``."""
    candidates = [text.strip()] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    candidates += list(_balanced_objects(text))
    for c in candidates:
        if not c.startswith("{"):
            continue
        try:
            obj = json.loads(c)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def _check(dim: Dimension, value: Any, reasoning: str) -> Parsed:
    if value is None:
        return Parsed(None, f"declined: no score given for '{dim.key}'", reasoning)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return Parsed(None, f"malformed: score {json.dumps(value, ensure_ascii=False)} is not a "
                            f"number ({dim.describe_scale()})", reasoning)
    if isinstance(value, str):
        text = value.strip()
        is_label = dim.kind == "categorical" and any(
            text.casefold() == lv.label.casefold() for lv in dim.levels)
        if not is_label and not re.fullmatch(r"-?\d+(\.\d+)?", text):
            if text.upper() in {"NA", "N/A", "NAN", "CANNOT_RATE", ""}:
                return Parsed(None, f"declined: the judge answered {value!r}", reasoning)
            return Parsed(None, f"malformed: score {value!r} is not a number "
                                f"({dim.describe_scale()})", reasoning)
    try:
        score = dim.parse_score(value)
    except ValueError:
        return Parsed(None, f"off-scale: {value} is not on the scale ({dim.describe_scale()})",
                      reasoning)
    if score is None:
        return Parsed(None, f"declined: the judge answered {value!r}", reasoning)
    return Parsed(score, None, reasoning)


def _str(v: Any) -> str:
    return v if isinstance(v, str) else "" if v is None else json.dumps(v, ensure_ascii=False)


def _from_object(obj: dict[str, Any], dims: Sequence[Dimension], all_mode: bool,
                 fallback_reasoning: str) -> dict[str, Parsed]:
    out: dict[str, Parsed] = {}
    if not all_mode:
        d = dims[0]
        if "score" in obj:
            value = obj["score"]
        elif d.key in obj:
            value = obj[d.key]
            if isinstance(value, dict):
                return _from_object(value, dims, False, fallback_reasoning)
        else:
            keys = ", ".join(sorted(obj)) or "none"
            return {d.key: Parsed(None, f"malformed: no 'score' in the answer (keys: {keys})",
                                  _str(obj.get("reasoning")) or fallback_reasoning)}
        return {d.key: _check(d, value, _str(obj.get("reasoning")) or fallback_reasoning)}
    scores = obj.get("scores") if isinstance(obj.get("scores"), dict) else obj
    for d in dims:
        if d.key not in scores:
            out[d.key] = Parsed(None, f"missing: the answer has no '{d.key}'",
                                _str(obj.get("reasoning")) or fallback_reasoning)
            continue
        v = scores[d.key]
        if isinstance(v, dict):
            if "score" not in v:
                out[d.key] = Parsed(None, f"malformed: no 'score' for '{d.key}'",
                                    _str(v.get("reasoning")))
                continue
            out[d.key] = _check(d, v["score"], _str(v.get("reasoning")))
        else:
            out[d.key] = _check(d, v, _str(obj.get("reasoning")) or fallback_reasoning)
    return out


_SEP = r"\s*[·•:=|\-–—(]\s*"


def _level(dim: Dimension, label: str):
    """The level whose label is ``label`` (case and a closing bracket or full stop ignored)."""
    want = label.strip().rstrip(").").strip().casefold()
    return next((lv for lv in dim.levels if lv.label.casefold() == want), None)


def _bare(text: str, dim: Dimension) -> Parsed | None:
    """A reply that is only a score: ``4``, ``4 · Good``, ``Good (4)``, ``4/5``, ``Good``.

    None when the text is something else (left to the other readers). A number whose label
    names another level is unscored: which of the two did the judge mean?
    """
    raw = text.strip()
    t = raw.strip("*`_ ").rstrip(".").strip("*`_ ")
    m = (re.fullmatch(r"(-?\d+(?:\.\d+)?)(?:" + _SEP + r"([^\d]+?))?", t)
         or re.fullmatch(r"(?P<label>[^\d]+?)" + _SEP + r"(-?\d+)\)?", t))
    if m is None:
        if (m := re.fullmatch(r"(\d+)\s*/\s*(\d+)", t)) and int(m.group(2)) == dim.max:
            return _check(dim, m.group(1), raw)
        lv = _level(dim, t)
        return None if lv is None else Parsed(lv.value, None, raw)
    number, label = (m.group(2), m.group(1)) if "label" in m.groupdict() else m.groups()
    named = None if label is None else _level(dim, label)
    if label is not None and named is None:
        return None  # "4 - warm and specific": not a bare score; the other readers decide
    p = _check(dim, number, raw)
    if p.score is None or named is None or named.value == p.score:
        return p
    said = next(lv for lv in dim.levels if lv.value == p.score)
    return Parsed(None, f"malformed: {p.score} is '{said.label}' on this scale, but the reply "
                        f"names '{named.label}'", raw)


def _from_lines(text: str, dims: Sequence[Dimension], all_mode: bool) -> dict[str, Parsed]:
    out: dict[str, Parsed] = {}
    if not all_mode:
        d = dims[0]
        bare = _bare(text, d)
        if bare is not None:
            return {d.key: bare}
        found = list(re.finditer(r"(?i)\b(?:score|rating)\b\s*[:=]?\s*" + _NUM, text))
        if not found:
            return {d.key: Parsed(None, "malformed: no score found in the reply", text.strip())}
        m = found[-1]  # reason-first replies end with the verdict
        return {d.key: _check(d, m.group(1), text[:m.start()].strip())}
    for d in dims:
        names = "|".join(re.escape(n) for n in (d.label, d.key, d.key.replace("_", " ")))
        found = list(re.finditer(rf"(?im)^[\W_]*(?:{names})[\W_]*?\s*[:=\-–]\s*" + _NUM, text))
        if not found:
            out[d.key] = Parsed(None, f"missing: no score for '{d.key}' in the reply",
                                text.strip())
        else:
            out[d.key] = _check(d, found[-1].group(1), text.strip())
    return out


def parse_answer(text: str, data: dict[str, Any] | None, dims: Sequence[Dimension], *,
                 all_mode: bool, stop_reason: str | None = None) -> dict[str, Parsed]:
    """Scores per dimension key from a reply's structured ``data`` or its ``text``."""
    if data is not None:
        out = _from_object(data, dims, all_mode, text.strip())
    elif not text.strip():
        out = {d.key: Parsed(None, "empty: the reply has no text and no structured answer")
               for d in dims}
    else:
        obj = extract_json(text)
        out = (_from_object(obj, dims, all_mode, "") if obj is not None
               else _from_lines(text, dims, all_mode))
    if stop_reason in ("max_tokens", "length"):
        out = {k: p if p.score is not None else
               Parsed(None, f"{p.reason} (the reply was cut off at max_tokens)", p.reasoning)
               for k, p in out.items()}
    return out
