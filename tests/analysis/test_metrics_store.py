"""Metric scores in the study database (SQLite and PostgreSQL): only items with a reference,
attention checks left out, resumable, rescored when an item changes, names guarded."""

from __future__ import annotations

import pytest
import sacrebleu
import sqlalchemy as sa

from analysis.refmetrics.lexical import BleuScorer, ChrfScorer, RougeLScorer
from analysis.refmetrics.run import run_metrics
from data.errors import H2HError
from data.importing import import_item_records
from data.items import parse_items
from data.quality import add_instructed_checks
from tests.helpers import item, jsonl

TASKS = ("dialogue", "recollection", "itinerary")


def _items(**changes):
    recs = [item("en1", response="(smiles) Sleep early tonight.", reference="(nods) Get "
                 "some sleep tonight."),
            item("zh1", response="（笑）今天早点睡。", reference="（点头）今晚早点睡吧。"),
            item("blank", response="Hi.", reference="   "),
            item("none", response="Hello.")]
    for r in recs:
        r.update(changes.get(r["id"], {}))
    return parse_items(jsonl(*recs), "items.jsonl", TASKS)


def _scores(engine, name):
    with engine.connect() as c:
        return dict(c.execute(sa.text(
            "SELECT s.item_id, s.score FROM metric_score s JOIN metric_config m ON "
            "m.hash = s.config_hash WHERE m.name = :n"), {"n": name}).all())


def test_items_with_a_reference_are_scored_once_and_rescored_when_they_change(engine):
    import_item_records(engine, _items(), file="items.jsonl")
    checks = add_instructed_checks(engine, 1, 2, seed=0)  # a copy of a real item
    todo, reports = run_metrics(engine, [BleuScorer(), ChrfScorer(), RougeLScorer()])
    assert [it.id for it in todo.items] == ["en1", "zh1"]
    assert (todo.without_reference, todo.attention_checks, todo.total) == (2, 1, 4)
    assert [(r.spec.name, r.scored_now, r.already) for r in reports] == [
        ("bleu", 2, 0), ("chrf", 2, 0), ("rougeL", 2, 0)]
    assert reports[0].languages == {"en": 1, "zh": 1}
    bleu = _scores(engine, "bleu")
    assert set(bleu) == {"en1", "zh1"} and checks[0] not in bleu
    assert bleu["zh1"] == pytest.approx(sacrebleu.sentence_bleu(
        "（笑）今天早点睡。", ["（点头）今晚早点睡吧。"], tokenize="zh").score)
    with engine.connect() as c:
        lang = c.execute(sa.text("SELECT item_id, lang FROM metric_score")).all()
    assert set(lang) == {("en1", "en"), ("zh1", "zh")}
    # a second run computes nothing; a changed reference is scored again, and only that item
    _, again = run_metrics(engine, [BleuScorer()])
    assert (again[0].scored_now, again[0].already) == (0, 2)
    import_item_records(engine, _items(en1={"reference": "(nods) Sleep early tonight."}),
                        file="items.jsonl", update=True)
    # until it is scored again, the old score of the changed item is stale and not used
    from analysis.study import study_metrics
    from data.metrics import list_metric_configs

    df, _ = study_metrics(engine)
    assert sorted(df.loc[df["metric"] == "bleu", "item_id"]) == ["zh1"]
    counts = {r["row"].name: (r["scored"], r["stale"]) for r in list_metric_configs(engine)}
    assert counts["bleu"] == (1, 1)
    _, after = run_metrics(engine, [BleuScorer()])
    assert (after[0].scored_now, after[0].already) == (1, 1)
    assert _scores(engine, "bleu")["en1"] > bleu["en1"]


def test_a_name_with_other_settings_is_refused_unless_replaced(engine):
    import_item_records(engine, _items(), file="items.jsonl")
    run_metrics(engine, [RougeLScorer("rouge", segmenter="char")])
    with pytest.raises(H2HError, match="already names metric configuration.*--replace"):
        run_metrics(engine, [RougeLScorer("rouge", segmenter="jieba")])
    run_metrics(engine, [RougeLScorer("rouge", segmenter="jieba")], replace=True)
    with engine.connect() as c:
        rows = c.execute(sa.text("SELECT name, settings FROM metric_config")).all()
        n = c.execute(sa.text("SELECT COUNT(*) FROM metric_score")).scalar_one()
    assert len(rows) == 1 and "jieba" in str(rows[0][1]) and n == 2
    with pytest.raises(H2HError, match="already stored as metric configuration 'rouge'"):
        run_metrics(engine, [RougeLScorer("other", segmenter="jieba")])


def test_the_analysis_reads_scores_and_configurations_back(engine):
    from analysis.study import study_metrics, study_systems

    import_item_records(engine, _items(), file="items.jsonl")
    add_instructed_checks(engine, 1, 2, seed=0)
    run_metrics(engine, [BleuScorer(), RougeLScorer(segmenter="jieba")])
    df, configs = study_metrics(engine)
    assert sorted(df["metric"].unique()) == ["bleu", "rougeL"] and len(df) == 4
    assert set(df.columns) == {"metric", "item_id", "score", "lang"}
    rouge = next(c for c in configs if c["name"] == "rougeL")
    assert rouge["settings"]["zh_segmenter"] == "jieba" and rouge["languages"] == {"en": 1,
                                                                                   "zh": 1}
    assert rouge["library"] == "rouge-score" and len(rouge["hash"]) == 16
    systems = study_systems(engine)
    assert sorted(systems["item_id"]) == ["blank", "en1", "none", "zh1"]  # no attention check
