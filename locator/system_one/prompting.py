"""How a wire question becomes a model prompt and how the model's next-token distribution becomes an
answer, once for every backend that reads a language model (embedded `local_llm`, served
`openai_logprobs`): the same templates (YAML, `conf/system_one/prompts/`), the same labels, the
same debiasing of choices, so the two backends given the same model answer the same requests alike.

A backend supplies one thing: `read(question, order) -> (distribution over label groups, usage)`,
the model's probability of each answer label as the next token after the chat, and what that one
reading cost (its prompt tokens, of them those its prefix cache held, one output token).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Callable

from locator.system_one.wire import Answer, ChoiceAnswer, InvalidAnswerError, NoulAnswer, Question, ScoreAnswer, Usage

# A choice's labels: one token each in a BPE vocabulary. Seed 000's zoom frontier starts at 16 regions
# and gains up to 4 a round (up to 44 in its 8 rounds), past the 26 capitals; lower case follows, so a
# served backend must match a choice's labels case-sensitively (only a noul's true/false folds case).
LETTERS = string.ascii_uppercase + string.ascii_lowercase
MAX_LEVELS = 10  # level labels are the digits 0-9, one token each


@dataclass(frozen=True)
class Prompts:
    """The templates that turn a question into the model's input (YAML: part of the identity)."""

    system: str
    user: str  # {task}, {instructions}, {criteria}, {content}, {ask}
    noul: str  # the closing ask of a noul question
    choice: str  # {options}
    score: str  # {levels}
    option: str  # {label}, {text}
    level: str  # {label}, {text}
    labels_true: str  # comma-separated spellings of the answer "true"
    labels_false: str
    truncation: str  # {tokens}: the marker left where an over-long content was cut

    def label_groups(self, question: Question, labels: list[str]) -> list[list[str]]:
        """The spellings that count for each answer: true/false for a noul, one label each otherwise."""
        if question.type == "noul":
            return [self.labels_true.split(","), self.labels_false.split(",")]
        return [[label] for label in labels]

    def render(self, task: str, question: Question, order: list[str] | None = None) -> tuple[str, list[str]]:
        """The user text and the answer labels; a choice's options are listed in `order` (option keys),
        each label standing for the option at its place."""
        if question.type == "noul":
            ask, labels = self.noul, []
        elif question.type == "choice":
            options = question.options()
            if len(options) > len(LETTERS):
                raise InvalidAnswerError(f"at most {len(LETTERS)} options per choice, got {len(options)}")
            order = order or list(options)
            labels = list(LETTERS[: len(options)])
            ask = self.choice.format(options="\n".join(self.option.format(label=label, text=options[key])
                                                      for label, key in zip(labels, order)))
        else:
            levels = list(question.criteria or [])
            if len(levels) > MAX_LEVELS:
                raise InvalidAnswerError(f"at most {MAX_LEVELS} score levels, got {len(levels)}")
            labels = [str(i) for i in range(len(levels))]
            ask = self.score.format(levels="\n".join(self.level.format(label=label, text=text)
                                                    for label, text in zip(labels, levels)))
        criteria = question.criteria if isinstance(question.criteria, str) else ""
        return self.user.format(task=task, instructions=question.instructions, criteria=criteria,
                                content=question.content or "", ask=ask), labels

    def messages(self, user: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


# (question, order of a choice's option keys or None) -> (distribution over the label groups, its usage)
Reader = Callable[[Question, "list[str] | None"], tuple[list[float], Usage]]


def answer_question(question: Question, read: Reader, choice_orders: int) -> tuple[Answer, Usage]:
    """The wire answer from the model's label distribution(s), and the usage of its readings."""
    if question.type == "noul":
        (p_true, _), usage = read(question, None)
        return NoulAnswer(noul=round(p_true, 6)), usage
    if question.type == "score":
        probs, usage = read(question, None)
        return ScoreAnswer(probabilities=[round(p, 6) for p in probs]), usage
    # A small model prefers the first letter whatever it stands for (measured: "stop", listed first,
    # won all 8 files of a demo task). Each order in `choice_orders` lists the options once; the
    # distributions are averaged per option, so no option gains from its place in the list.
    keys = list(question.options())
    totals, usage = dict.fromkeys(keys, 0.0), Usage(input_tokens=0, output_tokens=0)
    orders = [keys, keys[::-1]][:choice_orders]
    for order in orders:
        probs, reading = read(question, order)
        usage += reading
        for key, p in zip(order, probs):
            totals[key] += p / len(orders)
    best = max(range(len(keys)), key=lambda i: (totals[keys[i]], -i))
    return ChoiceAnswer(choice=keys[best], probabilities={k: round(totals[k], 6) for k in keys}), usage


def check_choice_orders(value: int) -> int:
    if value not in (1, 2):
        raise ValueError(f"system_one.backend.choice_orders must be 1 (as listed) or 2 (and reversed), got {value!r}")
    return value
