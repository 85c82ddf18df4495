"""openai_logprobs against a STUB chat-completions server (not a model): it answers in the
documented chat-completions logprobs format with logprobs derived from keywords in the prompt.
No live model endpoint is reachable here; this checks the protocol handling, not model quality."""

from __future__ import annotations

import math
import socket
import threading
import time

import pytest
import uvicorn
from fastapi import FastAPI

from locator.system_one.transport import SystemOneUnavailableError
from locator.system_one.wire import InvalidAnswerError, Question, Request
from tests.configs import backend as compose_backend


def _stub_app(mode: dict) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    def complete(body: dict) -> dict:
        prompt = body["messages"][-1]["content"]
        mode["requests"].append(body)
        if mode.get("no_logprobs"):
            return {"choices": [{"message": {"content": "true"}}], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}
        if mode.get("top"):
            top = mode["top"]
        elif "Answer true or false" in prompt:
            hot = "separable" in prompt.split("Question:")[1]
            top = [{"token": "true", "logprob": -0.1 if hot else -2.5}, {"token": " False", "logprob": -2.5 if hot else -0.1},
                   {"token": "maybe", "logprob": -4.0}]
        elif "letter of the best option" in prompt:
            option_a = prompt.split("\nA. ")[1].split("\n")[0]
            top = [{"token": "A", "logprob": -0.2 if "separable" in option_a else -1.8}, {"token": "B", "logprob": -1.0}]
        else:
            top = [{"token": "2", "logprob": -0.3}, {"token": "0", "logprob": -1.5}]
        return {
            "choices": [{"message": {"content": top[0]["token"]},
                         "logprobs": {"content": [{"token": top[0]["token"], "logprob": top[0]["logprob"], "top_logprobs": top}]}}],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 1,
                      "prompt_tokens_details": {"cached_tokens": mode.get("cached", 0)}},
        }

    return app


@pytest.fixture
def stub():
    mode: dict = {"requests": []}
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(_stub_app(mode), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", mode
    server.should_exit = True
    thread.join(timeout=10)


QUESTIONS = {
    "hot": Question(type="noul", instructions="Is this about separable models?", criteria="modeling/separable.py"),
    "cold": Question(type="noul", instructions="Is this about FITS headers?", criteria="io/fits/header.py"),
    "pick": Question(type="choice", instructions="Which?", criteria={"w1": "def separable(", "w2": "def other("}),
    "grade": Question(type="score", instructions="How relevant?", criteria=["no", "some", "very"]),
}


def test_answers_are_read_from_logprobs(stub):
    url, mode = stub
    backend = compose_backend("openai_logprobs", base_url=url, model="stub-model", max_attempts=1)
    response = backend.answer(Request(state={"task": "separability"}, model="stub-model", questions=QUESTIONS))
    assert response.answers["hot"].noul == pytest.approx(1 / (1 + pow(2.718281828, -2.4)), abs=1e-4)
    assert response.answers["cold"].noul < 0.2
    assert response.answers["pick"].choice == "w1"
    assert sum(response.answers["pick"].probabilities.values()) == pytest.approx(1)
    assert response.answers["grade"].probabilities[2] > response.answers["grade"].probabilities[0]
    assert response.answers["grade"].probabilities[1] == 0
    assert response.usage.output_tokens == 5 and response.usage.input_tokens > 0  # the choice: both orders
    sent = mode["requests"][0]
    assert (sent["max_tokens"], sent["logprobs"], sent["top_logprobs"], sent["model"]) == (1, True, 20, "stub-model")


def test_a_choice_past_26_options_reads_lower_case_labels_as_their_own_options(stub):
    """Seed 000's zoom frontier outgrows the capitals: label `a` is option 27, never a spelling of `A`."""
    url, mode = stub
    mode["top"] = [{"token": "a", "logprob": -0.1}, {"token": " A", "logprob": -2.5}]
    options = {f"z{i}": f"region {i}" for i in range(30)}
    backend = compose_backend("openai_logprobs", base_url=url, model="stub-model", max_attempts=1, choice_orders=1)
    question = Question(type="choice", instructions="Which region?", criteria=options)
    answer = backend.answer(Request(state={"task": "t"}, model="m", questions={"q": question})).answers["q"]
    assert "\na. region 26\n" in mode["requests"][0]["messages"][-1]["content"]
    assert answer.choice == "z26"
    assert answer.probabilities["z0"] == pytest.approx(1 / (1 + pow(2.718281828, 2.4)), abs=1e-4)
    too_many = Question(type="choice", instructions="Which?", criteria={f"z{i}": "r" for i in range(53)})
    with pytest.raises(InvalidAnswerError, match="at most 52 options"):
        backend.answer(Request(state={"task": "t"}, model="m", questions={"q": too_many}))


@pytest.mark.parametrize("logprobs", [
    [-3.0 - 0.1 * i for i in range(20)],  # much unlisted mass: each left-out label capped at the 20th's
    [-3.01] * 20,                          # little: the left-out labels split it
], ids=["capped", "split"])
def test_options_past_a_full_top_logprobs_list_share_its_unlisted_mass(stub, logprobs):
    """A 30-option Choice against an endpoint that lists 20 tokens: the 10 labels left out are not
    zero; they share what the list does not account for, each at most the 20th probability."""
    url, mode = stub
    mode["top"] = [{"token": chr(ord("A") + i), "logprob": lp} for i, lp in enumerate(logprobs)]
    options = {f"z{i}": f"region {i}" for i in range(30)}
    backend = compose_backend("openai_logprobs", base_url=url, model="stub-model", max_attempts=1, choice_orders=1)
    question = Question(type="choice", instructions="Which region?", criteria=options)
    answer = backend.answer(Request(state={"task": "t"}, model="m", questions={"q": question})).answers["q"]
    listed = [math.exp(lp) for lp in logprobs]
    share = min((1 - sum(listed)) / 10, listed[-1])
    assert share > 0
    total = sum(listed) + 10 * share
    assert answer.probabilities["z0"] == pytest.approx(listed[0] / total, abs=1e-6)  # answers carry 6 decimals
    assert all(answer.probabilities[f"z{i}"] == pytest.approx(share / total, abs=1e-6) for i in range(20, 30))
    assert sum(answer.probabilities.values()) == pytest.approx(1, abs=1e-4)
    mode["top"] = mode["top"][:5]  # a list shorter than asked for is the whole support: nothing unlisted to share
    answer = backend.answer(Request(state={"task": "t2"}, model="m", questions={"q": question})).answers["q"]
    assert answer.probabilities["z5"] == 0 and answer.probabilities["z0"] == pytest.approx(listed[0] / sum(listed[:5]), abs=1e-6)


def test_missing_logprobs_is_an_error_not_a_default(stub):
    url, mode = stub
    mode["no_logprobs"] = True
    backend = compose_backend("openai_logprobs", base_url=url, model="stub-model", max_attempts=1)
    with pytest.raises(InvalidAnswerError, match="no logprobs"):
        backend.answer(Request(state={"task": "t"}, model="m", questions={"q": QUESTIONS["hot"]}))


def test_unreachable_endpoint():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = compose_backend("openai_logprobs", base_url=f"http://127.0.0.1:{port}/v1", model="m", max_attempts=2,
                              backoff_initial_s=0.01)
    with pytest.raises(SystemOneUnavailableError, match="after 2 attempts"):
        backend.answer(Request(state={"task": "t"}, model="m", questions={"q": QUESTIONS["hot"]}))


def test_the_tokens_an_endpoint_says_its_prefix_cache_held_are_counted_and_checked(stub):
    """OpenAI and llama.cpp's server report `usage.prompt_tokens_details.cached_tokens`: summed over a
    request's chat calls; a count past the prompt's own is a server error, not a number to log."""
    url, mode = stub
    backend = compose_backend("openai_logprobs", base_url=url, model="stub-model", max_attempts=1)
    request = Request(state={"task": "separability"}, model="stub-model", questions=QUESTIONS)
    mode["cached"] = 2
    assert backend.answer(request).usage.cached_input_tokens == 2 * 5  # five chat calls, the choice twice
    mode["cached"] = 10_000
    with pytest.raises(InvalidAnswerError, match="cached_tokens 10000 is not within prompt_tokens"):
        backend.answer(request)
    mode["cached"] = "many"
    with pytest.raises(InvalidAnswerError, match="usage is not a count of tokens"):
        backend.answer(request)
