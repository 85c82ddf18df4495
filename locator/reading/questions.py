"""The observation question: whether an excerpt holds the code the task is about. Asked of every read
(effects), of every part of a span being narrowed (narrowing), and the seed's template reason of
every evidence span (evidence); so it is written once, here."""

from __future__ import annotations

from locator.system_one.wire import Question
from locator.windows import LineRange

OBSERVATION_INSTRUCTIONS = "Does this excerpt contain the code the task is about?"


def observation_question(path: str, span: LineRange, text: str) -> Question:
    return Question(type="noul", instructions=OBSERVATION_INSTRUCTIONS, criteria=f"{path} {span.label()}", content=text)
