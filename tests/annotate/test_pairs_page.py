"""Rating pairs side by side: sides blinded and counterbalanced when pairs are dealt, the page
(AppTest) blind and saving in the pair's own order, the 3-point form, hidden repeats with the
sides swapped, attention-check pairs counted with the rater's other checks."""

from __future__ import annotations

import random
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest

from annotate import state
from annotate.services.auth import Identity
from annotate.services.pair_assignment import assign_pairs, balanced_sides
from annotate.services.pair_queue import choice_of, option_of, pair_page
from data.engine import _engine_for, get_engine
from data.importing import import_item_records
from data.items import parse_items
from data.pairs import add_pair_checks, make_pairs
from data.preference_service import save_pair_preferences
from data.quality import attention_summary_rows
from data.raters import add_rater
from data.rubric import parse_rubric
from data.sessions import open_session
from data.study import current_rubric, init_study, set_rubric
from tests.annotate.conftest import APP_DIR
from tests.helpers import item, jsonl

MODELS = ("aster", "birch", "cedar")


@pytest.fixture(scope="module")
def _template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pairs-page") / "study.db"
    engine = get_engine(path)
    init_study(engine, name="pairs page")
    # nothing a rater sees names the model: neutral replies and context
    recs = [item(f"s{s}-{m}", scenario=f"s{s}", model=m, condition="baseline",
                 response=f"reply {k} to s{s}",
                 context={"persona": "Mira", "memories": [], "schedule": "",
                          "turns": [{"role": "user", "text": f"hello, scenario {s}"}]})
            for s in range(8) for k, m in enumerate(MODELS)]
    import_item_records(engine, parse_items(jsonl(*recs), "items.jsonl",
                                            ("dialogue", "recollection", "itinerary")),
                        file="items.jsonl")
    make_pairs(engine, seed=1)
    engine.dispose()
    _engine_for.cache_clear()
    return path


@pytest.fixture
def study(tmp_path, _template, monkeypatch):
    path = tmp_path / "study.db"
    shutil.copyfile(_template, path)
    monkeypatch.setenv("H2H_DB", str(path))
    engine = get_engine(path)
    yield engine
    engine.dispose()
    _engine_for.cache_clear()


def _rater(engine, name="pat") -> Identity:
    rater, _code = add_rater(engine, name, "rater")
    token, _ = open_session(engine, rater.id)
    return Identity(rater.id, name, "rater", token)


def rows(engine, sql: str) -> list[tuple]:
    with engine.connect() as c:
        return [tuple(r) for r in c.execute(sa.text(sql)).all()]


@pytest.mark.parametrize("seed", range(5))
def test_balanced_sides_split_every_rater_and_pair_evenly(seed):
    rng = random.Random(seed)
    edges = sorted({(rng.randrange(7), rng.randrange(40)) for _ in range(150)})
    flips = balanced_sides(edges, random.Random(seed))
    by_rater, by_pair = defaultdict(int), defaultdict(int)
    for (r, p), f in zip(edges, flips, strict=True):
        by_rater[r] += 1 if f else -1
        by_pair[p] += 1 if f else -1
    assert all(abs(v) <= 1 for v in by_rater.values()), by_rater
    assert all(abs(v) <= 1 for v in by_pair.values()), by_pair


def test_pairs_are_dealt_with_sides_counterbalanced(study):
    for name in ("pat", "ria", "sam"):
        _rater(study, name)
    add_pair_checks(study, 2, seed=0)
    res = assign_pairs(study, k=2, seed=3, repeat_share=0.2, min_gap=2, attention_rate=0.1)
    assert res.items == 24 and res.added > 48 and res.repeats > 0 and res.attention > 0
    got = rows(study, "SELECT a.rater_id, a.pair_id, a.kind, a.flipped, p.scenario FROM "
                      "pair_assignment a JOIN pair p ON p.id = a.pair_id ORDER BY a.rater_id, "
                      "a.position")
    primary = [(r, p, f) for r, p, k, f, _ in got if k == "primary"]
    assert Counter(p for _, p, _ in primary) == {p: 2 for p in range(1, 25)}  # k = 2 each
    for key in (0, 1):  # per rater and per pair: as many left as right, give or take one
        side = Counter()
        for x in primary:
            side[x[key]] += 1 if x[2] else -1
        assert all(abs(v) <= 1 for v in side.values()), side
    first = {(r, p): f for r, p, f in primary}
    assert all(f != first[(r, p)] for r, p, k, f, _ in got if k == "repeat")  # sides swapped
    by_rater = defaultdict(list)
    for r, _p, _k, _f, scen in got:
        by_rater[r].append(scen)
    assert all(a != b for seq in by_rater.values() for a, b in zip(seq, seq[1:], strict=False))
    again = assign_pairs(study, k=2, seed=3)
    assert again.added == 0  # running it again only adds


@pytest.mark.parametrize("points", [5, 3])
def test_choices_turn_into_the_pairs_own_order_and_back(points):
    for flipped in (False, True):
        for option in range(1, points + 1):
            choice = choice_of(option, points, flipped)
            assert option_of(choice, points, flipped) == option
    assert choice_of(1, 5, False) == ("a", 2) and choice_of(1, 5, True) == ("b", 2)
    assert choice_of(3, 5, True) == ("tie", None) and choice_of(None, 5, False) == (None, None)
    assert choice_of(3, 3, False) == ("b", None)


def _page(who: Identity) -> AppTest:
    at = AppTest.from_file(str(APP_DIR / "views" / "rate.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = who
    return at.run()


def test_the_page_shows_a_pair_blind_and_saves_in_the_pairs_own_order(study):
    who = _rater(study)
    assign_pairs(study, k=1, seed=0)
    at = _page(who)
    assert not at.exception
    assert "0 of 24 pairs done · pair 1" in at.get("progress")[0].proto.text
    html = "\n".join(e.proto.body for e in at.get("html"))
    assert 'data-testid="h2h-pair"' in html and "Reply A" in html and "Reply B" in html
    text = html + "\n".join(str(r.options) for r in at.radio)
    assert not any(m in text for m in MODELS + ("baseline", "s0-")), "model or id leaked"
    _prog, view = pair_page(study, who.rater_id, None, current_rubric(study))
    assert f'data-testid="h2h-left">{view.left}<' in html
    assert f'data-testid="h2h-right">{view.right}<' in html
    radios = list(at.radio)
    assert [r.label for r in radios] == ["Empathy", "Safety", "Fluency"]
    assert radios[0].options == ["**1** A much better", "**2** A better",
                                 "**3** About the same", "**4** B better",
                                 "**5** B much better", "Cannot compare"]
    at.button(key="h2h_save").click().run()
    missing = "\n".join(e.proto.body for e in at.get("html") if "h2h-missing" in e.proto.body)
    assert "Choose on every dimension" in missing
    radios = list(at.radio)
    radios[0].set_value(1)         # A (left) much better
    radios[1].set_value(3)         # about the same
    radios[2].set_value("cannot")  # cannot compare
    at.button(key="h2h_save").click().run()
    assert "1 of 24 pairs done · pair 2" in at.get("progress")[0].proto.text
    left = "b" if view.flipped else "a"
    got = rows(study, "SELECT dimension, winner, strength, shown_left, kind FROM preference "
                      "ORDER BY dimension")
    assert got == [("empathy", left, 2, left, "primary"), ("fluency", None, None, left,
                                                            "primary"),
                   ("safety", "tie", None, left, "primary")]
    assert len(rows(study, "SELECT id FROM preference_revision")) == 3


def test_a_three_point_rubric_gives_three_options(study):
    text = (Path(__file__).resolve().parents[2] / "data" / "rubrics" / "companion.toml"
            ).read_text("utf-8")
    set_rubric(study, parse_rubric("pairwise_scale = 3\n" + text))
    who = _rater(study)
    assign_pairs(study, k=1, seed=0)
    at = _page(who)
    assert list(at.radio)[0].options == ["**1** A better", "**2** About the same",
                                         "**3** B better", "Cannot compare"]


def test_a_rater_with_both_kinds_switches_between_them(study):
    from annotate.services.assignment import assign

    who = _rater(study)
    assign(study, k=1, seed=0)
    assign_pairs(study, k=1, seed=0)
    at = _page(who)
    assert "0 of 24 done" in at.get("progress")[0].proto.text  # single replies first
    at.segmented_control(key=state.QUEUE_KIND).set_value("pairs").run()
    assert "0 of 24 pairs done" in at.get("progress")[0].proto.text


def test_hidden_repeats_and_attention_pairs_are_kept_apart(study):
    who = _rater(study)
    made = add_pair_checks(study, 1, seed=0)
    engine = study
    passed = save_pair_preferences(engine, rater_id=who.rater_id, pair_id=made[0],
                                   choices={"empathy": ("b", 2), "safety": ("b", 2),
                                            "fluency": ("a", 1)}, kind="attention")
    assert passed is False
    save_pair_preferences(engine, rater_id=who.rater_id, pair_id=1,
                          choices={"empathy": ("a", 1), "safety": ("a", 1),
                                   "fluency": ("a", 1)}, kind="repeat")
    assert rows(engine, "SELECT DISTINCT kind FROM preference ORDER BY kind") == \
        [("attention",), ("repeat",)]
    assert rows(engine, "SELECT id FROM preference_revision") == []  # primary ones only
    (rater, item_id, ok, _at, scores, expected) = attention_summary_rows(engine)[0]
    assert (rater, ok) == ("pat", False) and item_id.startswith("pattn-")
    assert scores["fluency"] == "not chosen" and expected["fluency"] == "chosen"


# --- the demo's side-by-side data on the Calibration page and in the report -----------------

@pytest.fixture(scope="module")
def _demo_pairs(tmp_path_factory) -> Path:
    from data.sample import add_sample_pairs, build_sample_study
    from judge.simulate import add_simulated_pairwise_judge

    path = tmp_path_factory.mktemp("demo-pairs") / "study.db"
    engine = get_engine(path)
    init_study(engine, name="demo pairs")
    rub = current_rubric(engine)
    build_sample_study(engine, rub)
    add_sample_pairs(engine, rub, seed=5)
    add_simulated_pairwise_judge(engine, rub, seed=5)
    add_rater(engine, "ada", "admin")
    engine.dispose()
    _engine_for.cache_clear()
    return path


@pytest.fixture
def demo_pairs(tmp_path, _demo_pairs, monkeypatch):
    path = tmp_path / "study.db"
    shutil.copyfile(_demo_pairs, path)
    monkeypatch.setenv("H2H_DB", str(path))
    engine = get_engine(path)
    yield engine
    engine.dispose()
    _engine_for.cache_clear()


def test_the_calibration_page_shows_the_pairwise_judge(demo_pairs):
    (admin_id,) = rows(demo_pairs, "SELECT id FROM rater WHERE name = 'ada'")[0]
    token, _ = open_session(demo_pairs, admin_id)
    at = AppTest.from_file(str(APP_DIR / "views" / "admin_calibrate.py"), default_timeout=120)
    at.session_state[state.IDENTITY] = Identity(admin_id, "ada", "admin", token)
    at.run()
    assert not at.exception
    assert "Pairwise judges" in [h.value for h in at.subheader]
    captions = "\n".join(c.value for c in at.caption)
    assert "The reply shown first won" in captions and "decisive answers" in captions
    table = at.dataframe[-1].value
    assert list(table["dimension"])[:3] == ["Empathy", "Safety", "Fluency"]
    assert table["judge_kappa"].notna().all() and table["human_kappa"].notna().all()
    # the study's only judge is pairwise: the single-item comparison does not offer it
    assert "No judge configurations yet" in at.info[0].value


def test_the_report_section_fits_an_acl_column_and_shows_both_rankings(demo_pairs):
    from types import SimpleNamespace

    from analysis.arena_study import pairwise_study
    from analysis.report.latex import _layout
    from analysis.report.model import ReportBundle, RubricDimension
    from analysis.report.sec_pairwise import pairwise

    rub = current_rubric(demo_pairs)
    # a bundle with only what the section reads: the rubric's dimensions and the rankings
    bundle = ReportBundle(SimpleNamespace(dimensions={}), [], None,
                          [RubricDimension(d.key, d.label, d.level, d.kind, d.min, d.max)
                           for d in rub.dimensions],
                          pairwise=pairwise_study(demo_pairs, B=100, seed=1))
    out = pairwise(bundle)
    keys = [t.key for t in out.tables]
    assert keys == ["pairwise_sim-judge-pairwise", "pairwise_agreement_sim-judge-pairwise"]
    for t in out.tables:
        assert not _layout(t).wide, f"{t.key} does not fit a column"
    ranking = out.tables[0]
    assert [c.head for c in ranking.cols] == ["Model", "Humans", "Judge", "n"]
    (fig,) = out.figures
    names = {tr.name for tr in fig.fig.data}
    assert names == {"Humans", "Judge sim-judge-pairwise"}
    assert any("position bias" in f.text and f.kind == "caveat" for f in out.findings)
    assert {t.key for t in out.details} == {"pairwise_rankings", "pairwise_agreement"}


def test_the_page_speaks_chinese(study):
    who = _rater(study)
    assign_pairs(study, k=1, seed=0)
    at = AppTest.from_file(str(APP_DIR / "views" / "rate.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = who
    at.session_state[state.LANGUAGE] = "zh"
    at.run()
    assert not at.exception
    assert "已完成 0/24 对 · 第 1 对" in at.get("progress")[0].proto.text
    html = "\n".join(e.proto.body for e in at.get("html"))
    assert "回复 A" in html and "回复 B" in html and "要比较的两条回复" in html
    radio = list(at.radio)[0]
    assert radio.label == "共情"
    assert radio.options == ["**1** A 好得多", "**2** A 更好", "**3** 差不多", "**4** B 更好",
                             "**5** B 好得多", "无法比较"]


def test_the_assignment_page_deals_pairs(study):
    _rater(study, "pat")
    (pat_id,) = rows(study, "SELECT id FROM rater WHERE name = 'pat'")[0]
    ada, _code = add_rater(study, "ada", "admin")
    token, _ = open_session(study, ada.id)
    at = AppTest.from_file(str(APP_DIR / "views" / "admin_assign.py"), default_timeout=60)
    at.session_state[state.IDENTITY] = Identity(ada.id, "ada", "admin", token)
    at.run()
    at.number_input[0].set_value(1)
    at.checkbox(key="h2h_assign_pairs").check()
    at.button(key="h2h_assign_go").click().run()
    done = at.success[0].value
    assert not at.exception and "26 assignments added &#40;2 hidden repeats" in done
    # the command as plain words: the page shows messages inert, so backticks showed as such
    assert done.endswith("add more with the command h2h pairs attention") and "&#96;" not in done
    assert rows(study, "SELECT COUNT(*) FROM pair_assignment WHERE rater_id = "
                       f"{pat_id}") == [(26,)]
    assert rows(study, "SELECT COUNT(*) FROM assignment") == [(0,)]
