"""What every in-process backend shares: how usage is counted and how a relevance probability
becomes a score distribution."""

from __future__ import annotations

import math

from locator.hashing import canonical_json
from locator.system_one.tokens import count_tokens
from locator.system_one.wire import Answer, Request, ScoreAnswer, Usage

_SCORE_SPREAD = 0.15


def wire_usage(request: Request, answers: dict[str, Answer]) -> Usage:
    """Tokens of the request and of the answers as they travel on the wire."""
    return Usage(
        input_tokens=count_tokens(canonical_json(request.model_dump(mode="json"))),
        output_tokens=count_tokens(canonical_json({k: a.model_dump(mode="json") for k, a in answers.items()})),
    )


def score_answer(p: float, levels: int) -> ScoreAnswer:
    """A distribution over ordered levels peaked at the level nearest to p."""
    dens = [math.exp(-((i / (levels - 1) - p) ** 2) / (2 * _SCORE_SPREAD**2)) for i in range(levels)]
    total = sum(dens)
    return ScoreAnswer(probabilities=[round(d / total, 6) for d in dens])
