"""`system_one=openai_logprobs`: System One over any OpenAI-compatible chat endpoint (vLLM,
llama.cpp server, Ollama, hosted).

Each question becomes one single-token chat completion with top logprobs: noul = P(true) over the
true/false tokens, choice = the distribution over option letters, score = the distribution over
level digits. A request's questions are sent concurrently. An answer whose top logprobs hold none
of the expected tokens is an error, never a default.
"""

from __future__ import annotations

import math
import string
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from locator.system_one.lexical import MissingTaskTextError
from locator.redact import redact
from locator.system_one.transport import RetryPolicy, bearer_headers, post_json
from locator.system_one.wire import (
    Answer, ChoiceAnswer, InvalidAnswerError, NoulAnswer, Question, Request, Response, ScoreAnswer, Usage,
)

SYSTEM_PROMPT = "You are a fast, careful judge for code localization. Answer with exactly one token."
_LETTERS = string.ascii_uppercase


def _prompt(task: str, question: Question, tail: str) -> str:
    parts = [f"Task:\n{task}", f"Question: {question.instructions}"]
    if isinstance(question.criteria, str):
        parts.append(question.criteria)
    if question.content:
        parts.append(f"Content:\n{question.content}")
    parts.append(tail)
    return "\n\n".join(parts)


def _top_logprobs(body: dict[str, Any]) -> dict[str, float]:
    """Probability mass per normalized token (stripped, lower-cased) of the first generated token."""
    try:
        first = body["choices"][0]["logprobs"]["content"][0]
        candidates = first.get("top_logprobs") or [first]
    except (KeyError, IndexError, TypeError):
        raise InvalidAnswerError("chat completion has no logprobs for its first token (is logprobs supported?)") from None
    mass: dict[str, float] = {}
    for candidate in candidates:
        token = str(candidate["token"]).strip().lower()
        mass[token] = mass.get(token, 0.0) + math.exp(float(candidate["logprob"]))
    return mass


def _distribution(mass: dict[str, float], labels: list[str], what: str) -> list[float]:
    weights = [mass.get(label.lower(), 0.0) for label in labels]
    total = sum(weights)
    if total == 0:
        raise InvalidAnswerError(f"none of the {what} {labels} is among the model's top logprobs: {sorted(mass)[:10]}")
    return [w / total for w in weights]


class OpenAILogprobsBackend:
    def __init__(self, *, base_url: str, model: str, api_key_env: str | None, top_logprobs: int,
                 parallel_questions: int, timeout_s: float, max_attempts: int, backoff_initial_s: float,
                 backoff_max_s: float, max_connections: int):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.top_logprobs = top_logprobs
        self.parallel_questions = max(1, parallel_questions)
        self.policy = RetryPolicy(max_attempts, backoff_initial_s, backoff_max_s, timeout_s)
        self._client = httpx.Client(limits=httpx.Limits(max_connections=max_connections))

    @property
    def identity(self) -> str:
        return f"openai_logprobs:{redact(self.url)}:{self.model}:top_logprobs={self.top_logprobs}"

    def _complete(self, prompt: str) -> tuple[dict[str, float], int, int]:
        payload = {
            "model": self.model,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
        }
        body = post_json(self._client, self.url, payload, bearer_headers(self.api_key_env), self.policy)
        usage = body.get("usage") or {}
        return _top_logprobs(body), int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))

    def _answer_one(self, task: str, question: Question) -> tuple[Answer, int, int]:
        if question.type == "noul":
            mass, tin, tout = self._complete(_prompt(task, question, "Is the statement true for this item? Answer true or false."))
            p_true, _ = _distribution(mass, ["true", "false"], "answers")
            return NoulAnswer(noul=round(p_true, 6)), tin, tout
        if question.type == "choice":
            options = list(question.options())
            if len(options) > len(_LETTERS):
                raise InvalidAnswerError(f"openai_logprobs: at most {len(_LETTERS)} options per choice, got {len(options)}")
            labels = list(_LETTERS[: len(options)])
            listing = "\n".join(f"{label}. {question.options()[key]}" for label, key in zip(labels, options))
            mass, tin, tout = self._complete(_prompt(task, question, f"Options:\n{listing}\n\nAnswer with the letter of the best option."))
            probs = _distribution(mass, labels, "option letters")
            best = max(range(len(options)), key=lambda i: (probs[i], -i))
            return ChoiceAnswer(choice=options[best], probabilities={k: round(p, 6) for k, p in zip(options, probs)}), tin, tout
        levels = list(question.criteria or [])
        if len(levels) > 10:
            raise InvalidAnswerError(f"openai_logprobs: at most 10 score levels, got {len(levels)}")
        listing = "\n".join(f"{i}. {level}" for i, level in enumerate(levels))
        mass, tin, tout = self._complete(_prompt(task, question, f"Levels:\n{listing}\n\nAnswer with the level's digit."))
        probs = _distribution(mass, [str(i) for i in range(len(levels))], "level digits")
        return ScoreAnswer(probabilities=[round(p, 6) for p in probs]), tin, tout

    def answer(self, request: Request) -> Response:
        task = request.state.get("task")
        if not isinstance(task, str) or not task.strip():
            raise MissingTaskTextError("openai_logprobs System One needs the task text in state['task']")
        keys = list(request.questions)
        with ThreadPoolExecutor(max_workers=min(self.parallel_questions, len(keys))) as pool:
            results = list(pool.map(lambda k: self._answer_one(task, request.questions[k]), keys))
        answers = {k: answer for k, (answer, _, _) in zip(keys, results)}
        usage = Usage(input_tokens=sum(r[1] for r in results), output_tokens=sum(r[2] for r in results))
        return Response(model=self.model, answers=answers, usage=usage)
