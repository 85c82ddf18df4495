"""Shared fixtures of the runtime tests: small repositories, the YAML's runtimes with the test's
settings, and the ScriptedBackend (a test double of the model, not a model)."""

from __future__ import annotations

from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, ReadKind, Trace
from tests.configs import locator as compose_locator
from tests.locator.scripted import ScriptedBackend

TASK = Task(id="t", text="the task", subject=SubjectIdentity(repository="r", revision="v"))
FLAT = dict(file_threshold=0.5, recall_guard_fraction=0.0)
DISCOVER = [("path: pkg", 0.9)]  # discovery hands off every pkg/ file


def lines(n: int, prefix: str = "x") -> str:
    return "".join(f"{prefix}{i} = {i}\n" for i in range(1, n + 1))


def runtime(name: str, window_lines: int = 20, **reader):
    """The YAML's runtime with the test's reader settings (geometry windows of `window_lines`)."""
    geometry = {} if name == "semantic_zoom" else {"actions": {"window_lines": window_lines}}
    return compose_locator(name, discovery=FLAT, reader=geometry | reader)


def run(repo: RepositoryView, rules, locator, backend=None, max_concurrency: int = 1):
    backend = backend or ScriptedBackend(DISCOVER + rules)
    trace = Trace()
    result = localize(locator, TASK, repo, SystemOne(backend, "scripted", max_concurrency=max_concurrency), trace)
    return result, backend, trace


def reads(trace: Trace, path: str | None = None) -> list[tuple[str, int, int]]:
    return [(e.data["path"], e.data["start_line"], e.data["end_line"]) for e in trace.events
            if e.kind == EventKind.READ and e.data["what"] == ReadKind.RANGE and e.data["lines"] > 0
            and (path is None or e.data["path"] == path)]


def reads_by_request(trace: Trace, prefix: str = "a") -> list[list[tuple[str, int, int]]]:
    """The reads that followed each navigation request (its question keys start with `prefix`), in order."""
    groups: list[list] = []
    for e in trace.events:
        if e.kind == EventKind.REQUEST and all(k.startswith(prefix) for k in e.data["questions"]):
            groups.append([])
        elif e.kind == EventKind.READ and e.data["what"] == ReadKind.RANGE and e.data["lines"] > 0 and groups:
            groups[-1].append((e.data["path"], e.data["start_line"], e.data["end_line"]))
    return groups


def reading(result):
    return next(s for s in result.cost.stages if s.name == "reading")


def terminations(result) -> dict[str, str]:
    return {f.path: f.termination for f in reading(result).files}
