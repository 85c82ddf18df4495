"""Wire types of the System One contract, and the validation every answer must pass."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from locator.task import Record

QuestionType = Literal["noul", "choice", "score"]


class Question(Record):
    """One decision. `criteria`: noul — optional text; choice — option key -> description
    (a list means the keys describe themselves); score — the ordered level descriptions."""

    type: QuestionType
    instructions: str
    criteria: str | list[str] | dict[str, str] | None = None
    content: str | None = None

    @model_validator(mode="after")
    def _criteria_fit_type(self) -> "Question":
        if self.type == "choice" and not self.options():
            raise ValueError("a choice question needs at least one option in criteria")
        if self.type == "score" and not (isinstance(self.criteria, list) and len(self.criteria) >= 2):
            raise ValueError("a score question needs criteria: a list of at least two levels")
        return self

    def options(self) -> dict[str, str]:
        if isinstance(self.criteria, dict):
            return dict(self.criteria)
        if isinstance(self.criteria, list):
            return {key: key for key in self.criteria}
        return {}


class NoulAnswer(Record):
    type: Literal["noul"] = "noul"
    noul: float = Field(ge=0.0, le=1.0)


class ChoiceAnswer(Record):
    type: Literal["choice"] = "choice"
    choice: str
    probabilities: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]]


class ScoreAnswer(Record):
    type: Literal["score"] = "score"
    probabilities: list[Annotated[float, Field(ge=0.0, le=1.0)]]


Answer = Annotated[NoulAnswer | ChoiceAnswer | ScoreAnswer, Field(discriminator="type")]


class Usage(Record):
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    # of input_tokens, those the backend did not encode because its prefix (key/value) cache held them:
    # OpenAI's usage.prompt_tokens_details.cached_tokens; 0 where a backend does not say
    cached_input_tokens: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _cached_within_input(self) -> "Usage":
        if self.cached_input_tokens > self.input_tokens:
            raise ValueError(f"usage.cached_input_tokens {self.cached_input_tokens} exceeds input_tokens {self.input_tokens}")
        return self

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(input_tokens=self.input_tokens + other.input_tokens, output_tokens=self.output_tokens + other.output_tokens,
                     cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens)


class Request(Record):
    state: dict[str, Any]
    model: str
    questions: dict[str, Question]


class Response(Record):
    model: str
    answers: dict[str, Answer]
    usage: Usage


class GenerationRequest(Record):
    """Free text from a backend that can generate (local_llm, openai_logprobs): for locators whose
    peer prompts a model for text (Agentless-style) and for the blind quality review. Not part of
    the decision contract: a System One that only scores (lexical, loclab's http server) refuses it."""

    model: str
    messages: list[dict[str, str]]  # chat messages: role + content
    max_tokens: int = Field(ge=1)


class Generation(Record):
    model: str
    text: str
    usage: Usage
    truncated_prompt: bool = False  # the prompt was cut to fit the model's context (the backend says how)


class GenerationUnsupportedError(TypeError):
    """The configured backend cannot generate text; the message names the backends that can."""


class InvalidAnswerError(ValueError):
    """A backend answered something the contract does not allow; never replaced by a default."""


def validate_response(request: Request, response: Response) -> Response:
    missing = sorted(set(request.questions) - set(response.answers))
    if missing:
        raise InvalidAnswerError(f"System One left questions unanswered: {missing}")
    for key, question in request.questions.items():
        answer = response.answers[key]
        if answer.type != question.type:
            raise InvalidAnswerError(f"question {key!r}: asked {question.type}, answered {answer.type}")
        if isinstance(answer, ChoiceAnswer):
            options = question.options()
            if answer.choice not in options:
                raise InvalidAnswerError(
                    f"question {key!r}: choice {answer.choice!r} is not among the options {sorted(options)}"
                )
            stray = sorted(set(answer.probabilities) - set(options))
            if stray:
                raise InvalidAnswerError(f"question {key!r}: probabilities for unknown options {stray}")
        if isinstance(answer, ScoreAnswer) and len(answer.probabilities) != len(question.criteria or []):
            raise InvalidAnswerError(
                f"question {key!r}: {len(answer.probabilities)} probabilities for "
                f"{len(question.criteria or [])} levels"
            )
    return response


ANSWER_TYPES: dict[str, type] = {"noul": NoulAnswer, "choice": ChoiceAnswer, "score": ScoreAnswer}


def expect_answer(answer: Answer, expected: type, key: str):
    """The answer, if it is of the expected type; else an error naming the question (never an assert)."""
    if not isinstance(answer, expected):
        raise InvalidAnswerError(f"question {key!r}: expected a {expected.__name__}, got a {answer.type} answer")
    return answer
