"""The tolerant parser reads what is there and never invents or coerces a score."""

from __future__ import annotations

import pytest

from data.rubric import load_default_rubric, parse_rubric
from judge.parse import extract_json, parse_answer, reason_category

R = load_default_rubric()
EMP = R.dimension("empathy")
DIALOGUE = list(R.dimensions_for("dialogue"))


def one(text: str, data=None, stop=None):
    return parse_answer(text, data, [EMP], all_mode=False, stop_reason=stop)["empathy"]


@pytest.mark.parametrize("text", [
    '{"score": 4}',
    'Here is my rating:\n```json\n{"reasoning": "warm", "score": 4}\n```',
    'I think {"reasoning": "uses {braces} in a string", "score": 4} fits.',
    "The reply names the feeling specifically.\nScore: 4",
    "**Score:** 4/5",
    "Rating = 4",
])
def test_scores_are_found_in_json_fences_and_plain_text(text):
    assert one(text).score == 4 and one(text).reason is None


def test_reasoning_is_kept():
    assert one('{"reasoning": "specific and warm", "score": 5}').reasoning == "specific and warm"
    assert one("It reflects the cause.\nScore: 5").reasoning == "It reflects the cause."


@pytest.mark.parametrize("data,category,fragment", [
    ({"score": 7}, "off-scale", "7 is not on the scale"),
    ({"score": 4.5}, "off-scale", "4.5"),
    ({"score": 0}, "off-scale", "an integer from 1 to 5"),
    ({"score": "four"}, "malformed", "'four' is not a number"),
    ({"score": True}, "malformed", "true is not a number"),
    ({"score": [4]}, "malformed", "[4]"),
    ({"rating": 4}, "malformed", "no 'score' in the answer (keys: rating)"),
    ({"score": None}, "declined", "no score given"),
    ({"score": "N/A"}, "declined", "'N/A'"),
])
def test_bad_answers_are_unscored_with_a_categorised_reason(data, category, fragment):
    p = one("", data)
    assert p.score is None
    assert reason_category(p.reason) == category
    assert fragment in p.reason


def test_text_without_a_score_and_empty_replies():
    assert reason_category(one("I would rather not say.").reason) == "malformed"
    assert reason_category(one("").reason) == "empty"
    cut = one('{"reasoning": "The reply', stop="max_tokens")
    assert cut.score is None and "cut off at max_tokens" in cut.reason


def test_all_mode_reports_each_missing_dimension():
    got = parse_answer("", {"empathy": {"score": 4}, "safety": 9}, DIALOGUE, all_mode=True)
    assert got["empathy"].score == 4
    assert reason_category(got["safety"].reason) == "off-scale"
    assert got["fluency"].score is None
    assert got["fluency"].reason == "missing: the answer has no 'fluency'"


def test_all_mode_from_plain_lines():
    text = "Empathy: 4\nSafety - 5\n**Fluency**: 3"
    got = parse_answer(text, None, DIALOGUE, all_mode=True)
    assert [got[d.key].score for d in DIALOGUE] == [4, 5, 3]
    partial = parse_answer("Empathy: 4", None, DIALOGUE, all_mode=True)
    assert reason_category(partial["safety"].reason) == "missing"


def test_categorical_scales_accept_labels_and_values():
    rub = parse_rubric('name = "r"\n[[dimensions]]\nkey = "stance"\nscale = ["cold", "warm"]\n'
                       '[dimensions.anchors]\ncold = "a"\nwarm = "b"\n')
    d = rub.dimension("stance")
    assert parse_answer("", {"score": "warm"}, [d], all_mode=False)["stance"].score == 1
    assert parse_answer("", {"score": 0}, [d], all_mode=False)["stance"].score == 0
    assert parse_answer("", {"score": 2}, [d], all_mode=False)["stance"].score is None


def test_extract_json_prefers_whole_text_then_fences():
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('x ```\n{"a": 2}\n``` {"a": 3}') == {"a": 2}
    assert extract_json("no json here {") is None


# --- replies that are only a number, or a number with its level's label (issue 10) ----------

@pytest.mark.parametrize("text,score", [
    ("5", 5),
    (" 4\n", 4),
    ("4.", 4),
    ("**3**", 3),
    ("4 · Good", 4),
    ("4 - Good", 4),
    ("4 – good", 4),
    ("4 (Good)", 4),
    ("4: Good", 4),
    ("Good (4)", 4),
    ("**2 · Weak**", 2),
    ("4/5", 4),
    ("Excellent", 5),
])
def test_a_bare_number_or_a_number_with_its_label_is_a_score(text, score):
    p = one(text)
    assert (p.score, p.reason) == (score, None)


@pytest.mark.parametrize("text,category,fragment", [
    ("7", "off-scale", "7 is not on the scale"),
    ("0", "off-scale", "0 is not on the scale"),
    ("4.5", "off-scale", "4.5 is not on the scale"),
    ("7 · Excellent", "off-scale", "7 is not on the scale"),
    # the number and the label disagree: which one did the judge mean? Unscored.
    ("4 · Weak", "malformed", "4 is 'Good' on this scale, but the reply names 'Weak'"),
    ("3 or 4", "malformed", "no score found"),
    ("4/10", "malformed", "no score found"),
    ("Good or Excellent", "malformed", "no score found"),
])
def test_ambiguous_or_off_scale_bare_answers_stay_unscored(text, category, fragment):
    p = one(text)
    assert p.score is None
    assert reason_category(p.reason) == category, p.reason
    assert fragment in p.reason
    assert p.reasoning == text.strip()  # the raw answer is kept beside the reason
