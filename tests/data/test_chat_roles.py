"""Chat logs as they come (issue 34): OpenAI-style turns (``assistant``, ``content``,
``system``) import as the companion's turns and persona; what cannot be read so is refused
naming the turn."""

from __future__ import annotations

import json

import pytest

from data.errors import FormatError
from data.importing import export_items, import_item_records, study_tasks
from data.items import parse_items, parse_items_csv
from tests.helpers import item, jsonl

TASKS = ("dialogue", "recollection", "itinerary")


def _chat(*turns, **ctx) -> dict:
    return item("c1", context={**ctx, "turns": [dict(t) for t in turns]})


def test_assistant_turns_are_the_companions_and_system_turns_its_persona(engine):
    text = jsonl(_chat({"role": "system", "content": "You are Juniper, a gentle companion."},
                       {"role": "user", "content": "I failed my exam."},
                       {"role": "assistant", "content": "I'm sorry. How are you feeling?"},
                       {"role": "user", "text": "Bad."}))
    [rec] = parse_items(text, "chat.jsonl", TASKS)
    assert rec.context.persona == "You are Juniper, a gentle companion."
    assert [(t.role, t.text) for t in rec.context.turns] == [
        ("user", "I failed my exam."), ("companion", "I'm sorry. How are you feeling?"),
        ("user", "Bad.")]
    assert import_item_records(engine, [rec], file="chat.jsonl").added == 1
    # stored and exported in h2htalk's own roles: the export re-imports unchanged
    out = json.loads(export_items(engine).splitlines()[0])
    assert [t["role"] for t in out["context"]["turns"]] == ["user", "companion", "user"]
    again = parse_items(export_items(engine), "back.jsonl", study_tasks(engine))
    assert import_item_records(engine, again, file="back.jsonl").unchanged == 1


@pytest.mark.parametrize("turns,ctx,expected", [
    ([{"role": "user", "text": "hi"}, {"role": "system", "text": "be brief"}], {},
     "chat.jsonl:1: field 'context.turns.1.role': a 'system' turn after the conversation "
     "began; system turns are taken only at the start, as the companion's persona"),
    ([{"role": "system", "text": "You are Juniper."}, {"role": "user", "text": "hi"}],
     {"persona": "Mira."},
     "chat.jsonl:1: field 'context.turns.0.role': 'system' turns and a persona: system turns "
     "are taken as the companion's persona, so give it once"),
    ([{"role": "tool", "text": "{}"}], {},
     "chat.jsonl:1: field 'context.turns.0.role': must be 'user' or 'companion'"),
], ids=["system-midway", "system-and-persona", "tool"])
def test_what_cannot_be_read_as_a_chat_is_refused_naming_the_turn(turns, ctx, expected):
    with pytest.raises(FormatError) as ei:
        parse_items(jsonl(_chat(*turns, **ctx)), "chat.jsonl", TASKS)
    assert expected in str(ei.value)


def test_csv_turn_lines_take_assistant_and_system_too():
    text = ("id,task,turns,response\n"
            'x,dialogue,"system: You are Juniper.\nuser: hi\nassistant: hello\nuser: bye",ok\n')
    [rec] = parse_items_csv(text, "c.csv", TASKS)
    assert rec.context.persona == "You are Juniper."
    assert [t.role for t in rec.context.turns] == ["user", "companion", "user"]
