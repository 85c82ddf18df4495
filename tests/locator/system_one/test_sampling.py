"""Sampled decisions (`sampling.seed`): each answer one draw from the backend's distribution, seeded
by seed and repeat, so a rerun reproduces a repeat and repeats differ as samples do."""

from __future__ import annotations

import pytest

from locator.system_one.sampling import Sampler
from locator.system_one.wire import ChoiceAnswer, NoulAnswer, Response, ScoreAnswer, Usage

RESPONSE = Response(model="m", usage=Usage(input_tokens=1, output_tokens=1), answers={
    "n": NoulAnswer(noul=0.3),
    "c": ChoiceAnswer(choice="a", probabilities={"a": 0.5, "b": 0.3, "c": 0.2}),
    "s": ScoreAnswer(probabilities=[0.1, 0.6, 0.3]),
})


def test_a_draw_is_one_answer_with_all_the_probability():
    drawn = Sampler(seed=0, repeat=0).draw("k", RESPONSE).answers
    assert drawn["n"].noul in (0.0, 1.0)
    assert sorted(drawn["c"].probabilities.values()) == [0.0, 0.0, 1.0]
    assert drawn["c"].probabilities[drawn["c"].choice] == 1.0
    assert sorted(drawn["s"].probabilities) == [0.0, 0.0, 1.0]


def test_the_same_seed_and_repeat_draw_the_same_and_repeats_differ():
    draws = [[Sampler(seed=7, repeat=r).draw(f"k{i}", RESPONSE).answers["c"].choice for i in range(50)]
             for r in (0, 0, 1)]
    assert draws[0] == draws[1] and draws[0] != draws[2]


@pytest.mark.parametrize("key", ["n", "c"])
def test_draws_follow_the_distribution(key):
    drawn = [Sampler(seed=1, repeat=0).draw(f"request-{i}", RESPONSE).answers[key] for i in range(4000)]
    if key == "n":
        assert sum(a.noul for a in drawn) / len(drawn) == pytest.approx(0.3, abs=0.03)
    else:
        assert sum(a.choice == "b" for a in drawn) / len(drawn) == pytest.approx(0.3, abs=0.03)
