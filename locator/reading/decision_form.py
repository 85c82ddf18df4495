"""Noul vs Choice at equivalent decision points (a seed 000 research follow-up): the same options
asked as one Choice (the seed) or as one Noul per option, the most probable taken. For two options
(stop vs continue) the Noul is of the first, taken at even odds, exactly where a two-way Choice flips."""

from __future__ import annotations

from enum import StrEnum

EVEN_ODDS = 0.5


class DecisionForm(StrEnum):
    CHOICE = "choice"  # the seed: one Choice over the options
    NOUL = "noul"  # a Noul per option; the most probable taken, its Noul the decision's probability


def most_probable(nouls: dict[str, float]) -> tuple[str, float]:
    """The option with the highest Noul (the first listed on ties) and its Noul."""
    key = max(nouls, key=lambda k: nouls[k])
    return key, nouls[key]
