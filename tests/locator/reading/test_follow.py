"""FollowFile (`locator/follow=references`): references found in what was read, resolved against the
listing; followed files entering file_runtime and two_phase with their own state, within the bounds,
deterministically at any concurrency; and the recorded funnel."""

from __future__ import annotations

import pytest

from locator.languages.references import FileIndex
from locator.reading.follow import references
from locator.repository import FileInfo, RepositoryView
from tests.configs import locator as compose_locator
from tests.conftest import write_tree
from tests.locator.reading.runtime_helpers import FLAT, lines, reading, reads, run, runtime
from tests.locator.scripted import ScriptedBackend

HANDOFF_A = [("path: pkg/a.py", 0.9), ("path: ", 0.0)]  # Phase 1 hands off pkg/a.py alone
CONTINUE = ("continue_file", 0.5)
HEAD = ("seed_head", 0.9)
FOLLOW = ("follow: open", 0.9)
STOP_AFTER_A_READ = ("read so far:\n---", 0.9)


def _index(*paths: str) -> FileIndex:
    return FileIndex([FileInfo(p, 1, 1) for p in paths])


@pytest.mark.parametrize(("path", "line", "expected"), [
    ("pkg/a.py", "import pkg.util\n", [("pkg/util.py", "pkg.util")]),
    ("pkg/a.py", "import os, pkg.util as u  # the parser\n", [("pkg/util.py", "pkg.util")]),
    ("pkg/a.py", "from pkg import (util as u,\n", [("pkg/util.py", "pkg.util"), ("pkg/__init__.py", "pkg")]),
    ("pkg/a.py", "from pkg import util, helpers\n", [("pkg/util.py", "pkg.util"), ("pkg/__init__.py", "pkg")]),
    ("pkg/a.py", "from .util import helper\n", [("pkg/util.py", ".util")]),
    ("pkg/sub/b.py", "from ..util import helper\n", [("pkg/util.py", "..util")]),
    ("pkg/sub/b.py", "from . import c\n", [("pkg/sub/c.py", ".c"), ("pkg/sub/__init__.py", ".")]),
    ("pkg/a.py", "    return pkg.util.helper(x)\n", [("pkg/util.py", "pkg.util.helper")]),
    ("pkg/a.py", "# see pkg/sub/c.py for the parser\n", [("pkg/sub/c.py", "pkg/sub/c.py")]),
    ("pkg/a.py", "from sub.c import parse\n", [("pkg/sub/c.py", "sub.c")]),  # a unique dotted suffix (src layouts)
    ("pkg/a.py", "x = self.value.strip()\n", []),
    ("pkg/a.py", "from pkg import missing\n", [("pkg/__init__.py", "pkg")]),
])
def test_references_resolve_against_the_listing_only(path, line, expected):
    index = _index("pkg/__init__.py", "pkg/a.py", "pkg/util.py", "pkg/sub/b.py", "pkg/sub/c.py", "pkg/sub/__init__.py")
    assert references(path, line, index) == expected


def test_a_dotted_suffix_two_files_share_resolves_to_neither():
    index = _index("one/models/base.py", "two/models/base.py")
    assert references("x.py", "from models.base import Model\n", index) == []
    assert references("x.py", "from one.models.base import Model\n", index) == [("one/models/base.py", "one.models.base")]


def _repo(tmp_path, **extra):
    tree = {"pkg/a.py": "from pkg import b\n" + lines(30), "pkg/b.py": lines(30, "b"), "pkg/c.py": lines(30, "c")}
    return RepositoryView(write_tree(tmp_path, tree | extra))


def _file_runtime(follow: str = "references", **reader):
    return runtime("file_runtime", **reader) if follow == "fixed" else _with_follow("file_runtime", **reader)


def _with_follow(name: str, follow_bounds: dict | None = None, **reader):
    """The YAML's `name` with locator/follow=references (bounds overridden by `follow_bounds`)."""
    geometry = {"actions": {"window_lines": 20}} if name == "file_runtime" else {}
    bounds = {"follow": follow_bounds} if follow_bounds else {}
    return compose_locator(name, "locator/follow=references", discovery=FLAT, reader=geometry | reader | bounds)


def test_file_runtime_follows_an_import_into_a_runtime_of_its_own(tmp_path):
    rules = HANDOFF_A + [CONTINUE, HEAD, FOLLOW, ("lines", 0.1)]
    result, _, trace = run(_repo(tmp_path), [], _file_runtime(safety_epochs=2), backend=ScriptedBackend(rules))
    assert reads(trace, "pkg/b.py")  # the followed file was read, through the metered context
    costs = {f.path: f for f in reading(result).files}
    assert costs["pkg/b.py"].entered_by == "follow" and costs["pkg/b.py"].followed_from == "pkg/a.py"
    assert costs["pkg/a.py"].entered_by == "handoff"
    assert result.handoff.handed_off == ["pkg/a.py"] and result.handoff.followed == ["pkg/b.py"]
    details = reading(result).details
    assert details["files_followed"] == 1 and details["follows_wanted"] == 1 and details["files_handed_off"] == 1
    assert "files_followed" in reading(result).counted


def test_without_follow_the_file_set_stays_what_phase_1_handed_off(tmp_path):
    rules = HANDOFF_A + [CONTINUE, HEAD, FOLLOW, ("lines", 0.1)]
    result, _, trace = run(_repo(tmp_path), [], _file_runtime("fixed", safety_epochs=2), backend=ScriptedBackend(rules))
    assert not reads(trace, "pkg/b.py") and result.handoff.followed == []
    assert "files_followed" not in reading(result).details


def test_a_follow_below_the_read_threshold_is_not_taken(tmp_path):
    rules = HANDOFF_A + [CONTINUE, HEAD, ("follow: open", 0.3), ("lines", 0.1)]
    result, _, trace = run(_repo(tmp_path), [], _file_runtime(safety_epochs=2), backend=ScriptedBackend(rules))
    assert not reads(trace, "pkg/b.py") and reading(result).details["follows_offered"] == 1


def test_a_file_that_ends_right_after_reading_still_asks_its_follows_once(tmp_path):
    rules = HANDOFF_A + [CONTINUE, HEAD, FOLLOW, ("lines", 0.1)]
    result, backend, trace = run(_repo(tmp_path), [], _file_runtime(safety_epochs=1), backend=ScriptedBackend(rules))
    follow_requests = [r for r in backend.requests if r.state.get("stage") == "follow"]
    assert len(follow_requests) == 1 and reads(trace, "pkg/b.py")
    assert reading(result).details["follows_offered"] == 1 and reading(result).details["requests"] == 2 + 1 + 2


def test_bounds_per_file_and_per_task_and_depth(tmp_path):
    tree = {"pkg/a.py": "from pkg import b, c, d\n" + lines(30), "pkg/d.py": lines(30, "d"),
            "pkg/b.py": "from pkg import e\n" + lines(30, "b"), "pkg/e.py": lines(30, "e")}
    repo = _repo(tmp_path, **tree)
    rules = HANDOFF_A + [STOP_AFTER_A_READ, CONTINUE, HEAD, FOLLOW, ("lines", 0.1)]
    bounds = {"max_per_file": 2, "max_per_task": 6, "max_depth": 1}
    result, _, _ = run(repo, [], _with_follow("file_runtime", bounds), backend=ScriptedBackend(rules))
    assert result.handoff.followed == ["pkg/b.py", "pkg/c.py"]  # in reference order, two per file; e is depth 2
    assert reading(result).details["follows_refused_by_bound"] == 1  # d: System One wanted it, the bound refused
    result, _, _ = run(repo, [], _with_follow("file_runtime", bounds | {"max_depth": 2}), backend=ScriptedBackend(rules))
    assert result.handoff.followed == ["pkg/b.py", "pkg/c.py", "pkg/e.py"]
    result, _, _ = run(repo, [], _with_follow("file_runtime", bounds | {"max_depth": 2, "max_per_task": 1}),
                       backend=ScriptedBackend(rules))
    assert result.handoff.followed == ["pkg/b.py"]


def test_admission_does_not_depend_on_which_runtime_finished_first(tmp_path):
    tree = {"pkg/a.py": "from pkg import c\n" + lines(30), "pkg/b.py": "from pkg import d\n" + lines(90, "b"),
            "pkg/d.py": lines(30, "d")}
    repo = _repo(tmp_path, **tree)
    rules = [("path: pkg/a.py", 0.9), ("path: pkg/b.py", 0.9), STOP_AFTER_A_READ, CONTINUE, HEAD, FOLLOW, ("lines", 0.1)]
    locator = _with_follow("file_runtime", {"max_per_file": 2, "max_per_task": 1, "max_depth": 1})
    # b (the longest) runs first and asks first; the task's one follow still goes to a, first in Phase 1's order
    results = [run(repo, [], locator, backend=ScriptedBackend(rules), max_concurrency=n)[0] for n in (1, 2, 4, 4)]
    assert all(r.handoff.handed_off == ["pkg/a.py", "pkg/b.py"] for r in results)
    assert all(r.handoff.followed == ["pkg/c.py"] for r in results)
    assert len({r.model_dump_json(exclude={"cost"}) for r in results}) == 1


def test_two_phase_a_followed_file_joins_the_frontier(tmp_path):
    rules = HANDOFF_A + [FOLLOW, ("lines", 0.5), ("b1 = 1", 0.9)]
    result, _, trace = run(_repo(tmp_path), [], _with_follow("two_phase"), backend=ScriptedBackend(rules))
    assert reads(trace, "pkg/b.py") and result.handoff.followed == ["pkg/b.py"]
    costs = {f.path: f for f in reading(result).files}
    assert costs["pkg/b.py"].entered_by == "follow" and costs["pkg/b.py"].rounds == 1
    b = next(f for f in result.files if f.path == "pkg/b.py")
    assert b.evidence and "followed from pkg/a.py" in b.reason
    result, _, trace = run(_repo(tmp_path), [], compose_locator("two_phase", discovery=FLAT), backend=ScriptedBackend(rules))
    assert not reads(trace, "pkg/b.py") and result.handoff.followed == []


def test_two_phase_a_follow_chosen_below_the_action_threshold_ends_the_file(tmp_path):
    # a's one window is read (0.5); then only the follow is left, chosen at 0.1 < the action threshold
    rules = HANDOFF_A + [("follow: open", 0.1), ("0% of the file read", 0.5)]
    result, _, trace = run(_repo(tmp_path), [], _with_follow("two_phase"), backend=ScriptedBackend(rules))
    assert reads(trace, "pkg/a.py") and not reads(trace, "pkg/b.py")
    assert {f.path: f.termination for f in reading(result).files} == {"pkg/a.py": "no_action_above_threshold"}
