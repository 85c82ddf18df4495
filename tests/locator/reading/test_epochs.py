"""The progressive reader's epochs run as a dataflow (locator/reading/epochs.py): a batch's next
request waits only on its own answers, and every request, decision and result is the loop's, whatever
the concurrency and whichever request finishes first."""

from __future__ import annotations

import json
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

TASK = Task(id="t", text="parse_config in the config loader ignores the section argument of load_section",
            subject=SubjectIdentity(repository="r", revision="v"))


def _module(n: int, lines: int, every: int) -> str:
    """A module of `lines` lines whose every `every`-th function speaks of the task's words."""
    out = []
    for j in range(lines // 3):
        words = "section = load_section(config)" if j % every == 0 else "value = compute(x)"
        out.append(f"def f{n}_{j}(x):\n    {words}\n    return x\n")
    return "".join(out)


def _repo(tmp_path):
    files = {f"pkg/mod{i}/config_part.py": _module(i, 300 + 90 * i, 7 + i) for i in range(6)}
    files["pkg/config_loader.py"] = "from pkg import helpers\n" + _module(9, 600, 5)
    files["pkg/helpers.py"] = _module(10, 200, 50)
    return RepositoryView(write_tree(tmp_path, files))


class ShuffledLexical:
    """The lexical backend behind a delay that varies per request, so later requests often finish
    first; it records every request it answered."""

    def __init__(self, seed: int):
        self.lexical = compose_backend("lexical")
        self.identity = self.lexical.identity
        self.seed, self.count = seed, 0
        self.requests: list[str] = []
        self.lock = threading.Lock()

    def answer(self, request):
        with self.lock:
            self.count += 1
            delay = 0.002 * ((self.count * 7 + self.seed) % 5)
            self.requests.append(json.dumps(request.model_dump(mode="json"), sort_keys=True))
        time.sleep(delay)
        return self.lexical.answer(request)


READERS = {
    "batch": {},
    "batch_of_one": {"reader": {"schedule": {"batch_size": 1}}},
    "batch_of_three": {"reader": {"schedule": {"batch_size": 3}}},
}
GROUPS = {"global": ["locator/schedule=global"], "follow": ["locator/follow=references"]}


def _run(tmp_path, concurrency: int, seed: int, name: str):
    groups, params = GROUPS.get(name, []), READERS.get(name, {})
    params = {**params, "discovery": {"file_threshold": 0.0, "max_files": 7},
              "reader": {"action_threshold": 0.05, **params.get("reader", {})}}
    locator = compose_locator("two_phase", *groups, **params)
    backend = ShuffledLexical(seed)
    result = localize(locator, TASK, _repo(tmp_path), SystemOne(backend, "m", max_concurrency=concurrency), Trace())
    return result, backend


@pytest.mark.parametrize("name", [*READERS, *GROUPS])
def test_requests_and_results_are_the_loops_at_every_concurrency(tmp_path, name):
    serial, serial_backend = _run(tmp_path / "c1", 1, 0, name)
    reading = next(s for s in serial.cost.stages if s.name == "reading")
    assert reading.details["epochs"] >= 2, "the case must run several epochs to test anything"
    for concurrency, seed in ((3, 1), (8, 3)):
        parallel, backend = _run(tmp_path / f"c{concurrency}", concurrency, seed, name)
        assert parallel.files == serial.files
        assert sorted(backend.requests) == sorted(serial_backend.requests)
        assert [s.details for s in parallel.cost.stages] == [s.details for s in serial.cost.stages]


class HeldBatch:
    """The lexical backend that holds the first request about `held` until a second Choice request
    about `other` arrives (that file's next epoch), or `timeout` passes: under an epoch barrier that
    request would wait for the held one, so it never comes in time."""

    def __init__(self, held: str, other: str, timeout: float):
        self.lexical = compose_backend("lexical")
        self.identity = self.lexical.identity
        self.held, self.other, self.timeout = held, other, timeout
        self.released = threading.Event()
        self.other_choices = 0
        self.lock = threading.Lock()
        self.waited_out = False

    def answer(self, request):
        files = request.state.get("reader", {})
        is_choice = any(q.type == "choice" for q in request.questions.values())
        with self.lock:
            if self.other in files and is_choice:
                self.other_choices += 1
                if self.other_choices == 2:
                    self.released.set()
            hold = self.held in files and not self.released.is_set()
        if hold:
            self.waited_out = not self.released.wait(self.timeout)
        return self.lexical.answer(request)


def test_a_batchs_next_epoch_does_not_wait_for_a_slower_batch(tmp_path):
    backend = HeldBatch("pkg/mod0/config_part.py", "pkg/config_loader.py", timeout=10)
    locator = compose_locator("two_phase", discovery={"file_threshold": 0.0, "max_files": 7},
                              reader={"action_threshold": 0.05, "schedule": {"batch_size": 1}})
    result = localize(locator, TASK, _repo(tmp_path), SystemOne(backend, "m", max_concurrency=4), Trace())
    assert backend.other_choices >= 2 and not backend.waited_out
    assert result.files
