from __future__ import annotations

import bpe_openai
import pytest

from locator.hashing import canonical_json
from locator.system_one.lexical import MissingTaskTextError
from locator.system_one.tokens import count_tokens
from locator.system_one.wire import Question, Request
from tests.configs import backend as compose_backend

TASK = "separability_matrix returns wrong results for nested CompoundModels in astropy.modeling"


def _request(**questions: Question) -> Request:
    return Request(state={"task": TASK}, model="m", questions=questions)


def test_relevant_item_scores_higher_and_answers_are_probabilities():
    response = compose_backend("lexical").answer(
        _request(
            hit=Question(type="noul", instructions="relevant?", criteria="path: astropy/modeling/separable.py"),
            near=Question(type="noul", instructions="relevant?", criteria="path: astropy/io/fits/header.py"),
            miss=Question(type="noul", instructions="relevant?", criteria="path: requests/sessions.py"),
        )
    )
    hit, near, miss = (response.answers[k].noul for k in ("hit", "near", "miss"))
    assert 0 == miss < near < hit <= 1


def test_field_labels_and_instructions_do_not_lift_items():
    backend = compose_backend("lexical")
    labelled = backend.answer(_request(q=Question(type="noul", instructions="model matrix?", criteria="path: x/y.py")))
    assert labelled.answers["q"].noul == 0.0


def test_each_question_is_answered_on_its_own():
    backend = compose_backend("lexical")
    q = Question(type="noul", instructions="i", criteria="separable.py")
    alone = backend.answer(_request(a=q)).answers["a"].noul
    together = backend.answer(_request(a=q, b=Question(type="noul", instructions="i", criteria="separable models"))).answers["a"].noul
    assert alone == together


def test_damping_of_shared_tokens_is_an_option():
    q = {k: Question(type="noul", instructions="i", criteria=f"astropy/{name}.py") for k, name in
         [("a", "separable"), ("b", "units"), ("c", "table")]}
    plain = compose_backend("lexical").answer(_request(**q)).answers
    damped = compose_backend("lexical", shared_token_damping=0.9).answer(_request(**q)).answers
    assert damped["b"].noul < plain["b"].noul
    assert damped["a"].noul > damped["b"].noul


def test_choice_and_score():
    response = compose_backend("lexical").answer(
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
    first, second = compose_backend("lexical").answer(request), compose_backend("lexical").answer(request)
    assert first == second
    assert first.usage.input_tokens == count_tokens(canonical_json(request.model_dump(mode="json")))
    assert first.usage.output_tokens > 0


def test_needs_the_task_text():
    with pytest.raises(MissingTaskTextError):
        compose_backend("lexical").answer(Request(state={}, model="m", questions={"q": Question(type="noul", instructions="i")}))


def test_identity_changes_with_parameters():
    assert compose_backend("lexical", scale=3).identity != compose_backend("lexical", scale=4).identity


def test_token_counts_of_long_text_stay_within_a_token_per_cut():
    line = "def separability_matrix(transform): return _separable(transform)\n"
    text = line * 12_000  # 800,000 characters: counted in two pieces, still countable at once
    exact = len(bpe_openai.get_encoding("o200k_base").encode_ordinary(text))
    assert abs(count_tokens(text) - exact) <= 1
    assert count_tokens(line * 20_000) > 0  # beyond what the tokenizer takes at once


def _tie_question(order):
    options = {"stop": "stop: nothing more in this file is needed", "w0": "lines 1-20\n(no definitions start here)",
               "w1": "lines 21-40\n(no definitions start here)"}
    return Question(type="choice", instructions="which?", criteria={k: options[k] for k in order})


def test_a_choice_tie_is_not_decided_by_option_order():
    # no option shares a token with the task: a three-way tie
    orders = [("stop", "w0", "w1"), ("w1", "w0", "stop"), ("w0", "stop", "w1")]
    answers = [compose_backend("lexical").answer(_request(q=_tie_question(order))).answers["q"] for order in orders]
    assert len({a.choice for a in answers}) == 1  # the same winner whatever the listing order
    for a in answers:
        assert sorted(set(a.probabilities.values())) == [pytest.approx(1 / 3)]  # the tie stays visible


def test_the_tie_rule_is_the_content_hash():
    from locator.hashing import blake3_hex

    question = _tie_question(("stop", "w0", "w1"))
    answer = compose_backend("lexical").answer(_request(q=question)).answers["q"]
    options = question.options()
    assert answer.choice == max(options, key=lambda k: blake3_hex(f"{TASK}\0{k}\0{options[k]}"))


def test_what_is_covered_counts_less_novelty():
    item = Question(type="noul", instructions="new?", content="def separability_matrix(transform): nested CompoundModels")
    other = Question(type="noul", instructions="new?", content="def separability_matrix(transform): wrong results")
    backend = compose_backend("lexical")
    plain = backend.answer(Request(state={"task": TASK}, model="m", questions={"a": item, "b": other}))
    covered = backend.answer(Request(state={"task": TASK, "covered": "nested CompoundModels"}, model="m",
                                     questions={"a": item, "b": other}))
    assert covered.answers["a"].noul < plain.answers["a"].noul  # its task words were already covered
    assert covered.answers["b"].noul == plain.answers["b"].noul  # nothing of it was
    assert compose_backend("lexical", covered_discount=0.0).answer(
        Request(state={"task": TASK, "covered": "nested CompoundModels"}, model="m", questions={"a": item})
    ).answers["a"].noul == plain.answers["a"].noul


def test_a_request_mean_reference_lets_a_long_item_compete_with_the_items_beside_it():
    from locator.system_one.wire import Question, Request

    long_item = "parse_config section " + " ".join(f"filler{i}" for i in range(120))
    request = Request(state={"task": "parse_config ignores the section"}, model="m",
                      questions={"q0": Question(type="noul", instructions="i", criteria="x", content=long_item),
                                 "q1": Question(type="noul", instructions="i", criteria="y", content=long_item + " other")})
    fixed = compose_backend("lexical").answer(request).answers["q0"].noul
    relative = compose_backend("lexical", length_reference="request_mean").answer(request).answers["q0"].noul
    assert relative > 0.5 > fixed  # against a 20-token reference a 120-token excerpt cannot reach even 0.5
    assert compose_backend("lexical", length_reference="request_mean").identity != compose_backend("lexical").identity


def test_an_unknown_length_reference_is_refused_naming_the_setting():
    with pytest.raises(Exception, match="length_reference must be one of \\['fixed', 'request_mean'\\], got 'bogus'"):
        compose_backend("lexical", length_reference="bogus")


def test_a_mention_weight_lets_the_excerpt_with_the_named_code_beat_one_sharing_prose():
    from locator.system_one.wire import Question, Request

    task = "Writing a table with header rows fails in `_format_header` for every table writer"
    named = "def _format_header(self, cols):\n    return cols"
    prose = "writing a table with rows: every table writer fails here"
    request = Request(state={"task": task}, model="m",
                      questions={"named": Question(type="noul", instructions="i", criteria="x", content=named),
                                 "prose": Question(type="noul", instructions="i", criteria="x", content=prose)})
    plain = compose_backend("lexical", mention_weight=0.0).answer(request).answers
    weighted = compose_backend("lexical", mention_weight=3.0).answer(request).answers
    assert plain["named"].noul < plain["prose"].noul  # task prose outweighs the one name it mentions
    assert weighted["named"].noul > weighted["prose"].noul
    too_short = compose_backend("lexical", mention_weight=3.0, mention_min_length=20).answer(request).answers
    assert too_short == plain  # `_format_header` is shorter than 20: not taken for a name
    assert compose_backend("lexical", mention_weight=3.0).identity != compose_backend("lexical").identity
    assert "mention_weight" not in compose_backend("lexical", mention_weight=0.0).identity  # off: lexical-v3 as it was


def test_a_text_is_counted_once_and_the_count_cache_is_bounded(monkeypatch):
    from locator.system_one import tokens

    encoded = []
    real = tokens._tokenizer()

    class Recording:
        def count(self, text):
            encoded.append(text)
            return real.count(text)

    monkeypatch.setattr(tokens, "_tokenizer", Recording)
    monkeypatch.setattr(tokens, "COUNT_CACHE_SIZE", 3)
    text = "def counted_once(x):\n    return x  # unique to this test\n"
    first = count_tokens(text)
    assert count_tokens(text) == first == real.count(text) and encoded == [text]
    for i in range(5):
        count_tokens(f"filler {i} of the count cache")
    assert len(tokens._COUNTED) == 3
    count_tokens(text)  # evicted: counted again
    assert encoded.count(text) == 2
