"""Content-addressed decision cache: identical requests to the same backend get the same answer.

This is what lets two arms of an A/B see one answer for one question, so model noise is never
read as a policy win. SQLite in WAL mode, so several processes of a sweep can share one file.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from locator.hashing import blake3_hex, canonical_json
from locator.system_one.wire import Generation, GenerationRequest, Request, Response

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


def decision_key(backend_identity: str, request: Request) -> str:
    return blake3_hex(canonical_json({"backend": backend_identity, "request": request.model_dump(mode="json")}))


def generation_key(backend_identity: str, request: GenerationRequest) -> str:
    """A generation's key: its own namespace, never equal to a decision's."""
    return blake3_hex(canonical_json({"backend": backend_identity, "generate": request.model_dump(mode="json")}))


class DecisionCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        self._initialize()

    def _initialize(self) -> None:
        """Switching a new file to WAL takes an exclusive lock that SQLite does not wait for, so
        processes opening the same fresh cache at once retry for a while instead of failing."""
        for attempt in range(100):
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(_SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 99:
                    raise
                time.sleep(0.05)

    def _stored(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT response FROM decisions WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _insert(self, key: str, backend_identity: str, payload: str) -> str:
        """First writer wins; returns what is stored, so concurrent arms converge on one entry."""
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO decisions (key, backend, response, created_at) VALUES (?, ?, ?, ?)",
                (key, backend_identity, payload, time.time()),
            )
            return self._conn.execute("SELECT response FROM decisions WHERE key = ?", (key,)).fetchone()[0]

    def get(self, key: str) -> Response | None:
        stored = self._stored(key)
        return None if stored is None else Response.model_validate_json(stored)

    def put(self, key: str, backend_identity: str, response: Response) -> Response:
        return Response.model_validate_json(self._insert(key, backend_identity, response.model_dump_json()))

    def get_generation(self, key: str) -> Generation | None:
        """Generated text, stored in the same table under a key that hashes the generation request
        (it never collides with a decision's)."""
        stored = self._stored(key)
        return None if stored is None else Generation.model_validate_json(stored)

    def put_generation(self, key: str, backend_identity: str, generation: Generation) -> Generation:
        return Generation.model_validate_json(self._insert(key, backend_identity, generation.model_dump_json()))

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
