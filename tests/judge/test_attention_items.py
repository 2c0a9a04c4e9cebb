"""Attention-check items are not part of the study: judges never score them (and never pay
for them), whatever the filters say."""

from __future__ import annotations

import pytest

from data.errors import H2HError
from data.quality import add_instructed_checks
from judge.judging import Filters, plan_judging

from .conftest import N_PAIRS, judge_spec


def test_attention_checks_are_left_out_of_a_judge_run(study):
    made = add_instructed_checks(study, 2, seed=1)
    assert len(made) == 2
    plan = plan_judging(study, judge_spec(study))
    assert not set(plan.items) & set(made)
    # the four real items, every dimension once: exactly the pairs before the checks existed
    assert plan.total_keys == N_PAIRS
    assert set(plan.items) == {"d1", "d2", "r1", "i1"}


def test_asking_for_an_attention_check_by_id_says_what_it_is(study):
    made = add_instructed_checks(study, 1, seed=1)
    with pytest.raises(H2HError, match="attention check"):
        plan_judging(study, judge_spec(study), Filters(items=(made[0],)))


def test_generation_does_not_take_attention_checks_for_scenarios(study):
    from judge.scenarios import study_scenarios

    before = {sc.id for sc in study_scenarios(study)}
    add_instructed_checks(study, 2, seed=1)
    assert {sc.id for sc in study_scenarios(study)} == before
