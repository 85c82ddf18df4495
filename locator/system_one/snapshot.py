"""A run's decision snapshot: the System One answers it used, and a backend that serves only those.

The snapshot is read from the run's traces (every request is traced with its decision key, every
answer with its response), so it holds exactly the entries the run touched — the same entries the
decision cache holds for them, reused results included — and replays without the cache. Serving
from it, a request the run never asked is an error, never a new call.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from locator.system_one.cache import decision_key, generation_key
from locator.system_one.wire import Generation, GenerationRequest, Request, Response
from locator.task import Record
from locator.trace import EventKind, TraceEvent

SNAPSHOT_VERSION = 1


class SnapshotError(ValueError):
    """A snapshot that cannot be read, or traces that cannot make one (the message names the file)."""


class SnapshotMissError(LookupError):
    """A replayed request that the recorded run never asked: the replay diverged."""


class Decision(Record):
    schema_version: Literal[1] = SNAPSHOT_VERSION
    key: str
    backend: str
    response: Response | None = None  # a decision's answers, or
    generation: Generation | None = None  # a generation's text (agentless_style, the blind review)


def decisions_from_trace(events: Iterable[TraceEvent], backend: str, where: str) -> list[Decision]:
    found = []
    for event in events:
        if event.kind != EventKind.ANSWER:
            continue
        data = event.data
        if not data.get("key") or "model" not in data:
            raise SnapshotError(f"{where}: answer event {event.seq} has no decision key or model "
                                "(traced by a loclab older than the decision snapshot)")
        if "text" in data:
            found.append(Decision(key=data["key"], backend=backend, generation=Generation(
                model=data["model"], text=data["text"], usage=data["usage"],
                truncated_prompt=data.get("truncated_prompt", False))))
        else:
            found.append(Decision(key=data["key"], backend=backend,
                                  response=Response(model=data["model"], answers=data["answers"], usage=data["usage"])))
    return found


def write_snapshot(decisions: Iterable[Decision]) -> str:
    """JSONL, one decision per key, sorted by key (the same run always writes the same bytes). With
    the decision cache off, a stochastic backend may have answered one request twice differently:
    the first answer is kept, and a replay reports the tasks where the other one mattered."""
    unique = {d.key: d for d in decisions}
    return "".join(unique[k].model_dump_json() + "\n" for k in sorted(unique))


def read_snapshot(path: Path) -> dict[str, Decision]:
    decisions = {}
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            decision = Decision.model_validate(json.loads(line))
        except ValueError as exc:
            raise SnapshotError(f"{path}: row {row}: not a decision record ({exc})") from None
        decisions[decision.key] = decision
    return decisions


class SnapshotBackend:
    """Answers from a recorded run's decisions, under the identity they were recorded with, so every
    request is keyed exactly as it was then."""

    def __init__(self, decisions: dict[str, Decision], identity: str, source: Path | None = None):
        self._decisions = decisions
        self._identity = identity
        self.source = source  # the snapshot file, when read from one

    @classmethod
    def from_file(cls, path: str, identity: str) -> "SnapshotBackend":
        return cls(read_snapshot(Path(path)), identity, Path(path))

    def spec(self) -> dict[str, str] | None:
        """How another process builds the same backend (`hydra.utils.instantiate`), when it was read from a file."""
        if self.source is None:
            return None
        return {"_target_": f"{__name__}.SnapshotBackend.from_file", "path": str(self.source), "identity": self._identity}

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def decisions(self) -> dict[str, Decision]:
        return self._decisions

    def answer(self, request: Request) -> Response:
        key = decision_key(self._identity, request)
        return self._recorded(key, "response", f"request {key[:16]} (questions {sorted(request.questions)[:4]})")

    def generate(self, request: GenerationRequest) -> Generation:
        key = generation_key(self._identity, request)
        return self._recorded(key, "generation", f"generation {key[:16]}")

    def _recorded(self, key: str, field: str, what: str):
        found = getattr(self._decisions.get(key), field, None)
        if found is None:
            raise SnapshotMissError(f"System One {what} is not in the recorded run's decision snapshot: the replay "
                                    "asked something the run never did")
        return found
