"""Content-addressed decision cache: identical requests to the same backend get the same answer.

This is what lets two arms of an A/B see one answer for one question, so model noise is never
read as a policy win. SQLite in WAL mode, so several processes of a sweep can share one file.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


class DecisionCacheError(RuntimeError):
    """The cache file cannot be read or written as a cache; the message names it and what to do."""


class DecisionCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        self._written: dict[str, None] = {}  # every key this process stored, in order (`check_kept`)
        with self._sql():
            self._initialize()

    @contextmanager
    def _sql(self) -> Iterator[None]:
        """Every statement: a damaged file is an error naming it, never a miss that is silently re-asked
        (a cache garbled mid-run would lose its entries) nor SQLite's bare "disk image is malformed"."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise DecisionCacheError(
                f"decision cache {self.path}: {exc} — move the file aside to start an empty cache (the answers "
                "in it are lost), or point system_one.cache.path elsewhere") from exc

    def _initialize(self) -> None:
        """Switching a new file to WAL takes an exclusive lock that SQLite does not wait for, so
        processes opening the same fresh cache at once retry for a while instead of failing. The file
        is checked whole (quick_check) before a job relies on it."""
        for attempt in range(100):
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(_SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 99:
                    raise
                time.sleep(0.05)
        report = [line.strip() for row in self._conn.execute("PRAGMA quick_check(3)") for line in row[0].splitlines()]
        if report != ["ok"]:
            problems = [line for line in report if line and not line.startswith("***")]
            raise sqlite3.DatabaseError(f"damaged ({'; '.join(problems)})")

    def _stored(self, key: str) -> str | None:
        with self._lock, self._sql():
            row = self._conn.execute("SELECT response FROM decisions WHERE key = ?", (key,)).fetchone()
            lost = row is None and key in self._written
        if lost:  # this process stored it: a miss now is a loss, not a question never asked
            self.check_kept()
        return None if row is None else row[0]

    def _insert(self, key: str, backend_identity: str, payload: str) -> str:
        """First writer wins; returns what is stored, so concurrent arms converge on one entry."""
        with self._lock, self._sql():
            self._conn.execute(
                "INSERT OR IGNORE INTO decisions (key, backend, response, created_at) VALUES (?, ?, ?, ?)",
                (key, backend_identity, payload, time.time()),
            )
            stored = self._conn.execute("SELECT response FROM decisions WHERE key = ?", (key,)).fetchone()[0]
            self._written[key] = None
            return stored

    def check_kept(self) -> None:
        """Every decision this process stored is still in the file. A write-ahead log garbled or removed
        while a job runs loses the entries SQLite had not yet copied into the database, with no error
        on any later statement: the job would finish with its answers silently gone (122 of 163 in one
        audit). Raises naming how many are gone."""
        with self._lock:
            written = list(self._written)
        if not written:
            return
        found = 0
        with self._lock, self._sql():
            for i in range(0, len(written), 500):
                batch = written[i : i + 500]
                found += self._conn.execute(f"SELECT COUNT(*) FROM decisions WHERE key IN ({','.join('?' * len(batch))})",
                                            batch).fetchone()[0]
        if found < len(written):
            raise DecisionCacheError(
                f"decision cache {self.path}: {len(written) - found} of the {len(written)} decisions this job stored "
                "are gone from it (its write-ahead log was damaged or removed while the job ran): the answers were "
                "lost, not only the file; the job's tasks fail rather than finish on answers nobody can replay")

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
        with self._lock, self._sql():
            return self._conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
