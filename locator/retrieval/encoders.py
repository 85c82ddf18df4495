"""What a dense retriever needs from a text encoder: unit vectors for a task (the query) and for
code chunks (passages). Models that were trained with different prefixes for the two sides (E5)
apply them here, so a retriever never knows which model it runs."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from locator.extras import MissingExtraError

__all__ = ["Encoder", "MissingExtraError"]


@runtime_checkable
class Encoder(Protocol):
    def model_key(self) -> str:
        """The model and its weights, as the vector store keys what it encoded (a method: an
        isinstance check of the protocol reads properties, and this one may need the package)."""

    def check_installed(self) -> None: ...

    def queries(self, texts: list[str]) -> np.ndarray: ...

    def passages(self, texts: list[str]) -> np.ndarray: ...
