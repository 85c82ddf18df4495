from __future__ import annotations

import pytest

from locator.hashing import canonical_json
from locator.system_one.lexical import LexicalBackend, MissingTaskTextError
from locator.system_one.tokens import _encoding, count_tokens
from locator.system_one.wire import Question, Request

TASK = "separability_matrix returns wrong results for nested CompoundModels in astropy.modeling"


def _request(**questions: Question) -> Request:
    return Request(state={"task": TASK}, model="m", questions=questions)


def test_relevant_item_scores_higher_and_answers_are_probabilities():
    response = LexicalBackend().answer(
        _request(
            hit=Question(type="noul", instructions="relevant?", criteria="path: astropy/modeling/separable.py"),
            near=Question(type="noul", instructions="relevant?", criteria="path: astropy/io/fits/header.py"),
            miss=Question(type="noul", instructions="relevant?", criteria="path: requests/sessions.py"),
        )
    )
    hit, near, miss = (response.answers[k].noul for k in ("hit", "near", "miss"))
    assert 0 == miss < near < hit <= 1


def test_field_labels_and_instructions_do_not_lift_items():
    backend = LexicalBackend()
    labelled = backend.answer(_request(q=Question(type="noul", instructions="model matrix?", criteria="path: x/y.py")))
    assert labelled.answers["q"].noul == 0.0


def test_each_question_is_answered_on_its_own():
    backend = LexicalBackend()
    q = Question(type="noul", instructions="i", criteria="separable.py")
    alone = backend.answer(_request(a=q)).answers["a"].noul
    together = backend.answer(_request(a=q, b=Question(type="noul", instructions="i", criteria="separable models"))).answers["a"].noul
    assert alone == together


def test_damping_of_shared_tokens_is_an_option():
    q = {k: Question(type="noul", instructions="i", criteria=f"astropy/{name}.py") for k, name in
         [("a", "separable"), ("b", "units"), ("c", "table")]}
    plain = LexicalBackend().answer(_request(**q)).answers
    damped = LexicalBackend(shared_token_damping=0.9).answer(_request(**q)).answers
    assert damped["b"].noul < plain["b"].noul
    assert damped["a"].noul > damped["b"].noul


def test_choice_and_score():
    response = LexicalBackend().answer(
        _request(
            pick=Question(type="choice", instructions="which?", criteria={"w1": "def separability_matrix(", "w2": "def read_table("}),
            grade=Question(type="score", instructions="how relevant?", criteria=["no", "some", "very"], content="separability_matrix"),
        )
    )
    pick = response.answers["pick"]
    assert pick.choice == "w1"
    assert sum(pick.probabilities.values()) == pytest.approx(1.0, abs=1e-5)
    assert pick.probabilities["w1"] > pick.probabilities["w2"]
    grade = response.answers["grade"].probabilities
    assert len(grade) == 3 and sum(grade) == pytest.approx(1.0, abs=1e-5)


def test_deterministic_and_usage_counts_the_wire_text():
    request = _request(q=Question(type="noul", instructions="i", criteria="separable.py"))
    first, second = LexicalBackend().answer(request), LexicalBackend().answer(request)
    assert first == second
    assert first.usage.input_tokens == count_tokens(canonical_json(request.model_dump(mode="json")))
    assert first.usage.output_tokens > 0


def test_needs_the_task_text():
    with pytest.raises(MissingTaskTextError):
        LexicalBackend().answer(Request(state={}, model="m", questions={"q": Question(type="noul", instructions="i")}))


def test_identity_changes_with_parameters():
    assert LexicalBackend(scale=3).identity != LexicalBackend(scale=4).identity


def test_token_counts_of_long_text_stay_within_a_token_per_cut():
    line = "def separability_matrix(transform): return _separable(transform)\n"
    text = line * 12_000  # 800,000 characters: counted in two pieces, still countable at once
    exact = len(_encoding().encode_ordinary(text))
    assert abs(count_tokens(text) - exact) <= 1
    assert count_tokens(line * 20_000) > 0  # beyond what the tokenizer takes at once
