"""Sampled decisions: what a decoder at temperature > 0 would have answered, drawn from the answer
distribution the backend gives, so repeatability studies see the model's own noise.

A backend answers with a distribution (noul = P(true); a choice's and a score's probabilities,
already tempered by the backend's `temperature`). With `sampling.seed` set, each answer is one
draw from it: a noul becomes 1.0 or 0.0, a choice the drawn option with all its probability, a
score the drawn level. The draw is seeded by (seed, repeat, the request's decision key, the
question's key): the same repeat of the same job draws the same decisions (a rerun reproduces
it; the decision cache still holds the distribution), and repeats differ as samples do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from locator.hashing import blake3_hex
from locator.system_one.wire import Answer, ChoiceAnswer, NoulAnswer, Response, ScoreAnswer


@dataclass(frozen=True)
class Sampler:
    seed: int
    repeat: int

    def _rng(self, decision_key: str, question: str) -> random.Random:
        return random.Random(int(blake3_hex(f"{self.seed}:{self.repeat}:{decision_key}:{question}")[:16], 16))

    def draw(self, decision_key: str, response: Response) -> Response:
        answers = {key: self._draw(self._rng(decision_key, key), answer) for key, answer in response.answers.items()}
        return response.model_copy(update={"answers": answers})

    @staticmethod
    def _draw(rng: random.Random, answer: Answer) -> Answer:
        if isinstance(answer, NoulAnswer):
            return NoulAnswer(noul=1.0 if rng.random() < answer.noul else 0.0)
        if isinstance(answer, ChoiceAnswer):
            options = list(answer.probabilities)
            if sum(answer.probabilities.values()) <= 0:
                return answer  # no distribution given: nothing to draw from
            drawn = rng.choices(options, weights=[answer.probabilities[o] for o in options])[0]
            return ChoiceAnswer(choice=drawn, probabilities={o: float(o == drawn) for o in options})
        if isinstance(answer, ScoreAnswer):
            levels = range(len(answer.probabilities))
            if sum(answer.probabilities) <= 0:
                return answer
            drawn = rng.choices(levels, weights=answer.probabilities)[0]
            return ScoreAnswer(probabilities=[float(i == drawn) for i in levels])
        raise TypeError(f"no draw for {type(answer).__name__}")
