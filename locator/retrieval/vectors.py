"""Embeddings kept on disk by (model, content hash): a chunk that is the same in two tasks or two
revisions of a repository is encoded once, ever. A SQLite file, safe for the threads of one job
and for the processes of a parallel sweep (WAL)."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import numpy as np

from locator.hashing import blake3_hex

_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vector BLOB, PRIMARY KEY (model, key))"


class VectorStore:
    def __init__(self, path: str | Path, model: str):
        self.path = Path(path)
        self.model = model
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=60)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(_SCHEMA)
        return db

    def get_or_encode(self, texts: list[str], encode) -> tuple[np.ndarray, int]:
        """Unit vectors for `texts` (rows in order) and how many had to be encoded now."""
        keys = [blake3_hex(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock, closing(self._connect()) as db:  # a store per task: nothing left open between tasks
            unique = list(dict.fromkeys(keys))
            for i in range(0, len(unique), 500):
                batch = unique[i : i + 500]
                marks = ",".join("?" * len(batch))
                for key, blob in db.execute(f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                                            [self.model, *batch]):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing:
            by_key = dict(zip(keys, texts))
            vectors = np.asarray(encode([by_key[k] for k in missing]), dtype=np.float32)
            with self._lock, closing(self._connect()) as db:
                db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)",
                               [(self.model, k, v.tobytes()) for k, v in zip(missing, vectors)])
                db.commit()
            found.update(zip(missing, vectors))
        dim = next(iter(found.values())).shape[0] if found else 0
        return (np.stack([found[k] for k in keys]) if keys else np.zeros((0, dim), dtype=np.float32)), len(missing)
