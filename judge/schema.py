"""The structured answer a judge must give: a JSON schema bounding every score to its dimension's
scale, and the instruction text that describes the same shape in the prompt.

One dimension per call::

    {"reasoning": "...", "score": 4}          # reasoning only with reason-first, and first

All applicable dimensions in one call::

    {"empathy": {"reasoning": "...", "score": 4}, "safety": {"score": 5}, ...}

The score is an ``integer`` with an ``enum`` of the scale's values, so a schema-following model
cannot answer off the scale; the parser still checks, for servers that do not enforce schemas.

Example
-------
>>> from data.rubric import load_default_rubric
>>> d = load_default_rubric().dimension("empathy")
>>> dimension_schema(d, reason_first=False)["properties"]["score"]["enum"]
[1, 2, 3, 4, 5]
>>> tool_name([d])
'score_empathy'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from data.rubric import Dimension

__all__ = ["dimension_schema", "answer_schema", "tool_name", "output_instructions"]

_REASONING = {"type": "string",
              "description": "Your reasoning: how the reply compares with the anchors, in 2-4 "
                             "sentences, written before you decide the score."}


def _score(dim: Dimension) -> dict[str, Any]:
    return {"type": "integer", "enum": list(dim.values),
            "description": f"{dim.label}: {dim.describe_scale()}"}


def dimension_schema(dim: Dimension, *, reason_first: bool) -> dict[str, Any]:
    """The object for one dimension: ``score`` (and ``reasoning`` before it)."""
    props: dict[str, Any] = {}
    if reason_first:
        props["reasoning"] = _REASONING
    props["score"] = _score(dim)
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


def answer_schema(dims: Sequence[Dimension], *, all_mode: bool,
                  reason_first: bool) -> dict[str, Any]:
    """The whole answer: one dimension's object, or an object keyed by dimension."""
    if not all_mode:
        return dimension_schema(dims[0], reason_first=reason_first)
    props = {d.key: dimension_schema(d, reason_first=reason_first) for d in dims}
    return {"type": "object", "properties": props, "required": list(props),
            "additionalProperties": False}


def tool_name(dims: Sequence[Dimension], all_mode: bool = False) -> str:
    """The tool / JSON schema name: ``score_<key>`` or ``score_all``."""
    return "score_all" if all_mode else f"score_{dims[0].key}"


def _shape(dim: Dimension, reason_first: bool) -> str:
    vals = ", ".join(str(v) for v in dim.values)
    r = '"reasoning": "<2-4 sentences>", ' if reason_first else ""
    return "{" + r + f'"score": <one of {vals}>' + "}"


def output_instructions(dims: Sequence[Dimension], *, all_mode: bool, reason_first: bool,
                        tool: bool) -> str:
    """The ``{{output}}`` text: what to think first and which shape to answer in."""
    parts = []
    if reason_first:
        parts.append("First reason briefly about how the reply compares with the anchors; only "
                     "then decide the score.")
    else:
        parts.append("Decide the score by the anchor that describes the reply best.")
    if all_mode:
        body = ", ".join(f'"{d.key}": {_shape(d, reason_first)}' for d in dims)
        shape = "{" + body + "}"
    else:
        shape = _shape(dims[0], reason_first)
    name = tool_name(dims, all_mode)
    if tool:
        parts.append(f"Give your answer by calling the {name} tool with: {shape}")
    else:
        parts.append(f"Answer with one JSON object and nothing else: {shape}")
    return "\n".join(parts)
