"""`system_one=openai_logprobs`: System One over any OpenAI-compatible chat endpoint (vLLM,
llama.cpp server, Ollama, hosted).

Each question becomes one single-token chat completion with top logprobs, rendered by the same
templates (`conf/system_one/prompts/`) and read the same way as `local_llm` (`prompting`): noul =
P(true) over the true/false spellings, choice = the distribution over option letters (averaged over
`choice_orders` listings), score = the distribution over level digits. A request's questions are
sent concurrently. An answer whose top logprobs hold none of the expected tokens is an error (the
endpoint returns no logprobs, or the model answers off the labels), never a default.

An endpoint lists at most `top_logprobs` tokens (OpenAI and vLLM: 20 by default), and a zoom frontier
can offer up to 52 options. When the list comes back full, the labels it leaves out are not zero:
they share the mass the list does not account for, each at most the list's smallest probability (a
token outside the top k cannot be likelier than the k-th). `local_llm` reads every label's logit, so
there the tail is exact and here an upper-bounded estimate; the top of the distribution, and so a
greedy answer, is the same (docs/system_one.md).

Unlike `local_llm`, nothing is truncated here: the endpoint has the model's tokenizer, not loclab;
a prompt over its context is the server's 4xx, and the task fails closed.
"""

from __future__ import annotations

import hashlib
import json
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from locator.system_one.lexical import MissingTaskTextError
from locator.redact import redact
from locator.system_one.transport import RetryPolicy, bearer_headers, get_json, post_json
from locator.system_one.prompting import Prompts, answer_question, check_choice_orders
from locator.system_one.wire import (
    Answer, Generation, GenerationRequest, InvalidAnswerError, Question, Request, Response, Usage,
)

@dataclass(frozen=True)
class TopLogprobs:
    """The first generated token's listed candidates: probability mass per token (stripped of spaces),
    and whether the list was cut at the requested length (so tokens outside it may carry mass)."""

    mass: dict[str, float]
    truncated: bool


def _top_logprobs(body: dict[str, Any], requested: int) -> TopLogprobs:
    try:
        first = body["choices"][0]["logprobs"]["content"][0]
        candidates = first.get("top_logprobs") or [first]
    except (KeyError, IndexError, TypeError):
        raise InvalidAnswerError("chat completion has no logprobs for its first token (is logprobs supported?)") from None
    mass: dict[str, float] = {}
    for candidate in candidates:
        token = str(candidate["token"]).strip()
        mass[token] = mass.get(token, 0.0) + math.exp(float(candidate["logprob"]))
    return TopLogprobs(mass=mass, truncated=len(candidates) >= requested)


def _usage(body: dict[str, Any], output_tokens: int) -> Usage:
    """A completion's usage: its prompt tokens and, where the server says (OpenAI, llama.cpp's server:
    `prompt_tokens_details.cached_tokens`), those its prefix cache held."""
    usage = body.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    try:
        prompt, cached = int(usage.get("prompt_tokens") or 0), int(details.get("cached_tokens") or 0)
    except (TypeError, ValueError):
        raise InvalidAnswerError(f"chat completion usage is not a count of tokens: {usage!r}") from None
    if not 0 <= cached <= prompt:
        raise InvalidAnswerError(f"chat completion usage: cached_tokens {cached} is not within prompt_tokens {prompt}")
    return Usage(input_tokens=prompt, output_tokens=output_tokens, cached_input_tokens=cached)


def _distribution(top: TopLogprobs, groups: list[list[str]], fold_case: bool) -> list[float]:
    """Each group's share of the mass; `fold_case` for a noul's true/false (`True`, `TRUE` count), never
    for a choice, whose `A` and `a` are two options. Groups a full list leaves out share its unlisted
    mass, each at most its smallest listed probability (module docstring)."""
    mass = top.mass
    if fold_case:
        folded: dict[str, float] = {}
        for token, p in mass.items():
            folded[token.lower()] = folded.get(token.lower(), 0.0) + p
        mass, groups = folded, [[label.lower() for label in group] for group in groups]
    weights = [sum(mass.get(label, 0.0) for label in set(group)) for group in groups]
    if sum(weights) == 0:
        raise InvalidAnswerError(f"none of the answer labels {groups} is among the model's top logprobs: "
                                 f"{sorted(mass)[:10]}")
    unlisted = [i for i, group in enumerate(groups) if not any(label in mass for label in group)]
    if top.truncated and unlisted:
        share = min(max(0.0, 1.0 - sum(top.mass.values())) / len(unlisted), min(top.mass.values()))
        for i in unlisted:
            weights[i] = share
    total = sum(weights)
    return [w / total for w in weights]


class OpenAILogprobsBackend:
    def __init__(self, *, base_url: str, model: str, api_key_env: str | None, top_logprobs: int,
                 parallel_questions: int, timeout_s: float, max_attempts: int, backoff_initial_s: float,
                 backoff_max_s: float, max_connections: int, prompts: dict[str, str], choice_orders: int):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.top_logprobs = top_logprobs
        self.prompts = Prompts(**prompts)
        self.choice_orders = check_choice_orders(choice_orders)
        self.parallel_questions = max(1, parallel_questions)
        self.policy = RetryPolicy(max_attempts, backoff_initial_s, backoff_max_s, timeout_s)
        self._client = httpx.Client(limits=httpx.Limits(max_connections=max_connections))

    @property
    def identity(self) -> str:
        prompts = hashlib.sha256(json.dumps(self.prompts.__dict__, sort_keys=True).encode()).hexdigest()[:16]
        return (f"openai_logprobs:{redact(self.url)}:{self.model}:top_logprobs={self.top_logprobs}:prompts={prompts}"
                f":choice_orders={self.choice_orders}")

    def served_identity(self) -> str | None:
        """The models the endpoint serves (`GET /models`), asked once before the first task, so an
        endpoint that is not there is said plainly, naming the setting, instead of as every task's retries."""
        models = self.url.removesuffix("/chat/completions") + "/models"
        body = get_json(self._client, models, bearer_headers(self.api_key_env), self.policy.timeout_s,
                        f"the OpenAI-compatible endpoint at {redact(models)} is not reachable ({{error}}): set "
                        "LOCLAB_OPENAI_BASE_URL (system_one.backend.base_url) to a running server's /v1, e.g. "
                        "llama.cpp's `llama-server --port 8000` or vLLM's")
        try:
            served = sorted(str(m["id"]) for m in body["data"])
        except (KeyError, TypeError):
            return None
        return ",".join(served) or None

    def _complete(self, user: str) -> tuple[TopLogprobs, Usage]:
        payload = {
            "model": self.model,
            "messages": self.prompts.messages(user),
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        body = post_json(self._client, self.url, payload, bearer_headers(self.api_key_env), self.policy)
        top = _top_logprobs(body, self.top_logprobs)
        return top, _usage(body, output_tokens=1)  # one token asked for; a server that says otherwise is not believed

    def _read(self, task: str, question: Question, order: list[str] | None) -> tuple[list[float], Usage]:
        user, labels = self.prompts.render(task, question, order)
        top, usage = self._complete(user)
        return _distribution(top, self.prompts.label_groups(question, labels), question.type == "noul"), usage

    def _answer_one(self, task: str, question: Question) -> tuple[Answer, Usage]:
        return answer_question(question, lambda q, order: self._read(task, q, order), self.choice_orders)

    def answer(self, request: Request) -> Response:
        task = request.state.get("task")
        if not isinstance(task, str) or not task.strip():
            raise MissingTaskTextError("openai_logprobs System One needs the task text in state['task']")
        keys = list(request.questions)
        with ThreadPoolExecutor(max_workers=min(self.parallel_questions, len(keys))) as pool:
            results = list(pool.map(lambda k: self._answer_one(task, request.questions[k]), keys))
        answers = {k: answer for k, (answer, _) in zip(keys, results)}
        # one generated token per chat call: a choice asked in two orders is two calls
        usage = sum((usage for _, usage in results), Usage(input_tokens=0, output_tokens=0))
        return Response(model=self.model, answers=answers, usage=usage)

    def generate(self, request: GenerationRequest) -> Generation:
        """Greedy text (temperature 0) from the same chat endpoint."""
        payload = {"model": self.model, "messages": request.messages, "max_tokens": request.max_tokens, "temperature": 0}
        body = post_json(self._client, self.url, payload, bearer_headers(self.api_key_env), self.policy)
        try:
            text = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise InvalidAnswerError("chat completion has no message content") from None
        return Generation(model=self.model, text=str(text or ""),
                          usage=_usage(body, output_tokens=int((body.get("usage") or {}).get("completion_tokens", 0))))
