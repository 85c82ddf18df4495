"""Concurrent System One requests change wall time, never results."""

from __future__ import annotations

import threading
import time

import pytest

from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.task import SubjectIdentity, Task
from locator.trace import Trace
from tests.configs import backend as compose_backend
from tests.configs import locator as compose_locator
from tests.conftest import write_tree

TASK = Task(id="t", text="parse_config ignores the section argument in config_loader",
            subject=SubjectIdentity(repository="r", revision="v"))


class ShuffledLatencyBackend:
    """The lexical backend with a delay that makes later requests finish first."""

    def __init__(self):
        self.lexical = compose_backend("lexical")
        self.identity = self.lexical.identity
        self.in_flight = 0
        self.max_in_flight = 0
        self._count = 0
        self._lock = threading.Lock()

    def answer(self, request):
        with self._lock:
            self._count += 1
            delay = 0.02 * (5 - self._count % 5)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        time.sleep(delay)
        try:
            return self.lexical.answer(request)
        finally:
            with self._lock:
                self.in_flight -= 1


def _repo(tmp_path):
    files = {f"pkg/mod{i}.py": "".join(f"def f{j}(x):\n    return x\n" for j in range(60)) for i in range(8)}
    files["pkg/config_loader.py"] = "def parse_config(path, section):\n    return load(path)\n" * 40
    return RepositoryView(write_tree(tmp_path, files))


def _run(tmp_path, concurrency):
    backend = ShuffledLatencyBackend()
    locator = compose_locator("two_phase", discovery={"file_threshold": 0.0, "max_files": 9, "questions_per_request": 2},
                              reader={"schedule": {"batch_size": 1}, "sources": {"windows": {"window_lines": 30}},
                                      "action_threshold": 0.1})
    result = localize(locator, TASK, _repo(tmp_path), SystemOne(backend, "m", max_concurrency=concurrency), Trace())
    return result, backend


def test_results_do_not_depend_on_concurrency_or_completion_order(tmp_path):
    serial, serial_backend = _run(tmp_path / "a", 1)
    parallel, parallel_backend = _run(tmp_path / "b", 4)
    assert serial.files == parallel.files
    assert serial.cost.model_calls == parallel.cost.model_calls
    assert serial_backend.max_in_flight == 1 and parallel_backend.max_in_flight > 1


def test_critical_path_never_exceeds_the_summed_model_time(tmp_path):
    serial, _ = _run(tmp_path / "a", 1)
    parallel, _ = _run(tmp_path / "b", 4)
    # serially the model is busy for the whole summed call time (each call's own timer also spans validation)
    assert serial.cost.physical.model_critical_path_ms == pytest.approx(serial.cost.physical.model_wall_time_ms, rel=0.02)
    assert parallel.cost.physical.model_critical_path_ms < parallel.cost.physical.model_wall_time_ms
