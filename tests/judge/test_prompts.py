"""Templates: the rubric's anchors reach the judge verbatim; bad templates are rejected clearly."""

from __future__ import annotations

import pytest

from data.errors import FormatError, H2HError
from data.rubric import load_default_rubric
from judge.config import JudgeSpec
from judge.judging import ItemView, build_request
from judge.prompts import load_judge_template, load_sap, render
from judge.schema import answer_schema

RUBRIC = load_default_rubric()
ITEM = ItemView(id="x1", task="recollection", content_hash="h", response="我记得你的狗叫Biscuit。",
                context={"persona": "Juniper, gentle.", "memories": ["Dog: Biscuit", "Vegetarian"],
                         "schedule": "Thu: vet at 4 pm",
                         "turns": [{"role": "user", "text": "今天好累"},
                                   {"role": "companion", "text": "怎么了？"},
                                   {"role": "user", "text": "I can't focus."}]})


def spec(**kw) -> JudgeSpec:
    return JudgeSpec("anthropic", "fake-judge", kw.pop("template", load_judge_template(None)),
                     RUBRIC.version, **kw)


def test_per_dimension_prompt_carries_context_guidelines_and_every_anchor():
    dim = RUBRIC.dimension("memory_fidelity")
    req = build_request(spec(), RUBRIC, ITEM, [dim])
    user = req.messages[0].text
    for lv in dim.levels:  # the very anchor text raters see, for every level
        assert f"{lv.value} = {lv.label}: {lv.anchor}" in user
    assert RUBRIC.guidelines.splitlines()[0] in req.system
    assert "- Dog: Biscuit\n- Vegetarian" in user
    assert "User: 今天好累\n\nCompanion: 怎么了？\n\nUser: I can't focus." in user
    assert "我记得你的狗叫Biscuit。" in user and "Thu: vet at 4 pm" in user
    assert "{{" not in user + req.system
    assert req.schema_name == "score_memory_fidelity"
    assert req.schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]


def test_all_mode_prompt_lists_every_applicable_dimension():
    dims = RUBRIC.dimensions_for("recollection")
    req = build_request(spec(mode="all", reason_first=True), RUBRIC, ITEM, dims)
    user = req.messages[0].text
    for d in dims:
        assert f"### {d.label} (key: {d.key})" in user
        assert d.levels[-1].anchor in user
    assert list(req.schema["properties"]) == [d.key for d in dims]
    first = req.schema["properties"]["empathy"]
    assert list(first["properties"]) == ["reasoning", "score"]  # reasoning comes first
    assert "First reason" in user and "score_all" in user


def test_binary_and_categorical_scales_are_bounded_in_the_schema():
    from data.rubric import parse_rubric
    rub = parse_rubric('name = "r"\n[[dimensions]]\nkey = "red_flag"\nscale = "binary"\n'
                       '[dimensions.anchors]\n0 = "no risk"\n1 = "risk"\n'
                       '[[dimensions]]\nkey = "stance"\nscale = ["dismissive", "neutral", '
                       '"supportive"]\n[dimensions.anchors]\ndismissive = "a"\nneutral = "b"\n'
                       'supportive = "c"\n')
    assert answer_schema([rub.dimension("red_flag")], all_mode=False,
                         reason_first=False)["properties"]["score"]["enum"] == [0, 1]
    req = build_request(JudgeSpec("openai", "m", load_judge_template(None), rub.version), rub,
                        ITEM, [rub.dimension("stance")])
    assert "0 = dismissive: a" in req.messages[0].text
    assert req.schema["properties"]["score"]["enum"] == [0, 1, 2]


def test_unknown_placeholder_is_rejected_with_file_and_line(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text('system = "You judge."\nuser = """\nReply: {{response}}\n{{anchorz}}\n"""\n',
                 encoding="utf-8")
    with pytest.raises(FormatError) as exc:
        load_judge_template(p)
    assert "mine.toml:4: field 'user': unknown placeholder {{anchorz}}" in str(exc.value)


def test_template_without_the_reply_or_with_dimension_placeholders_in_all_mode(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text('system = "s"\nuser = "rate {{anchors}}"\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"add \{\{response\}\}"):
        load_judge_template(p)
    p.write_text('system = "s"\nuser = "{{response}}"\nuser_all = "{{response}} {{anchors}}"\n',
                 encoding="utf-8")
    with pytest.raises(FormatError, match="unknown placeholder"):
        load_judge_template(p)
    p.write_text('system = "s"\nuser = "{{response}}"\n', encoding="utf-8")
    with pytest.raises(H2HError, match="has no user_all"):
        spec(template=load_judge_template(p), mode="all")


def test_config_hash_follows_what_shapes_the_prompt():
    base = spec()
    assert base.hash == spec(samples=5).hash == spec(name="other").hash
    changed = [spec(reason_first=True), spec(mode="all"), spec(temperature=0.0),
               spec(max_tokens=99), spec(structured=False),
               JudgeSpec("anthropic", "fake-judge", load_judge_template(None), "other-rubric")]
    assert len({base.hash, *(s.hash for s in changed)}) == 1 + len(changed)


def test_render_is_single_pass_and_sap_text_covers_the_principles():
    assert render("{{a}} {{b}}", {"a": "{{b}}", "b": "x"}) == "{{b}} x"
    sap = load_sap().lower()
    for phrase in ("secure base", "boundaries", "grand promises", "dependence",
                   "regulate your own tone", "solve problems", "crisis line", "gently"):
        assert phrase in sap
