"""Judging on both database backends: the conditional upsert keeps first answers and replaces
request failures on SQLite and on PostgreSQL alike."""

from __future__ import annotations

from data.importing import import_item_records
from data.items import parse_items
from tests.helpers import jsonl

from .conftest import ITEMS, N_PAIRS, judge, query
from .fakes import Scripted


def test_judging_and_resuming_on_each_backend(engine, anthropic_fake, prices):
    records = parse_items(jsonl(*ITEMS), "items.jsonl", ("dialogue", "recollection",
                                                         "itinerary"))
    import_item_records(engine, records, file="items.jsonl")
    anthropic_fake.script(*[Scripted(500)] * 4, when=lambda r: r.item == "i1" and
                          r.dims == ("plan_quality",))
    _, stats = judge(engine, anthropic_fake, prices)
    assert stats.request_failed == 1 and stats.scored == N_PAIRS - 1
    plan, stats = judge(engine, anthropic_fake, prices)
    assert len(plan.units) == 1 and stats.scored == 1
    rows = query(engine, "SELECT item_id, dimension, score, outcome FROM judgment")
    assert len(rows) == N_PAIRS and {o for *_, o in rows} == {"scored"}
    assert all(s == anthropic_fake.score(i, d) for i, d, s, _ in rows)
    assert judge(engine, anthropic_fake, prices)[0].units == []
