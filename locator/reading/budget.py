"""Per-file round budgets."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field, model_validator

from locator.reading.state import FileState, Observation, Termination
from locator.settings import Settings


class RoundBudget(Settings):
    """After `soft_rounds` a file earns a further round only if its last round produced new
    evidence; no file reads more than `hard_rounds` rounds."""

    soft_rounds: int = Field(ge=1)
    hard_rounds: int = Field(ge=1)

    @model_validator(mode="after")
    def _ordered(self) -> "RoundBudget":
        if self.hard_rounds < self.soft_rounds:
            raise ValueError(f"hard_rounds ({self.hard_rounds}) must be >= soft_rounds ({self.soft_rounds})")
        return self

    def account(self, state: FileState, is_evidence: Callable[[Observation], bool]) -> None:
        new_evidence = any(o.round == state.rounds and is_evidence(o) for o in state.observations)
        if state.rounds >= self.hard_rounds:
            state.termination = Termination.BUDGET_EXHAUSTED
        elif state.rounds >= self.soft_rounds and not new_evidence:
            state.termination = Termination.NO_NEW_EVIDENCE
