"""locator=semantic_zoom (seed 000's Algorithm B): the mass cut-off, the exploration slot, the
recursion and the convergence rule, each driven exactly."""

from __future__ import annotations

import pytest

from locator.discovery import Candidate
from locator.reading.state import FileState
from locator.reading.zoom import Region, ZoomFile
from locator.repository import FileInfo, RepositoryView
from locator.system_one.wire import ChoiceAnswer, Response, Usage
from locator.windows import LineRange
from tests.conftest import write_tree
from tests.locator.reading.runtime_helpers import DISCOVER, reading, reads, run, runtime, terminations
from tests.locator.scripted import ScriptedBackend


def _zoom(**reader):
    return runtime("semantic_zoom", **reader).reader


def _region(a: int, b: int, root: int = 0) -> Region:
    return Region(LineRange(a, b), root, LineRange(a, min(b, a + 3)))


FRONTIER = [_region(1, 10), _region(11, 20, 1), _region(21, 30, 2), _region(31, 40, 3)]


def test_exploit_keeps_regions_until_the_mass_is_reached():
    zoom = _zoom(mass=0.8, max_selected=3)
    assert zoom.exploit(FRONTIER, {0: 0.05, 1: 0.5, 2: 0.35, 3: 0.1}) == [FRONTIER[1], FRONTIER[2]]
    assert zoom.exploit(FRONTIER, {0: 0.9, 1: 0.05, 2: 0.05}) == [FRONTIER[0]]


def test_exploit_keeps_at_most_max_selected():
    assert _zoom(mass=1.0, max_selected=3).exploit(FRONTIER, {i: 0.25 for i in range(4)}) == FRONTIER[:3]


def _file(lines: int, probed: list[int]) -> ZoomFile:
    z = ZoomFile(FileState(Candidate(FileInfo(path="a.py", size_bytes=1, line_count=lines), 0.9), None))
    z.text = {n: f"{n}\n" for n in probed}
    return z


def test_the_exploration_slot_goes_to_the_least_explored_region_by_geometry():
    z = _file(40, probed=[*range(1, 9), *range(11, 13), *range(21, 30)])  # region 31-40 never probed
    assert _zoom(explore_slots=1).explore(z, FRONTIER) == [FRONTIER[3]]
    assert _zoom(explore_slots=2).explore(z, FRONTIER) == [FRONTIER[3], FRONTIER[1]]
    assert _zoom(explore_slots=0).explore(z, FRONTIER) == []


def test_exploration_ties_are_broken_by_the_seed_deterministically():
    z = _file(40, probed=[])
    picks = {s: _zoom(seed=s).explore(z, FRONTIER)[0] for s in range(12)}
    assert picks == {s: _zoom(seed=s).explore(z, FRONTIER)[0] for s in range(12)}  # reproducible
    assert len(set(picks.values())) > 1  # and the seed, not the listing order, decides


@pytest.fixture
def repo(tmp_path):
    # 640 lines, the marker at line 250: coarse regions of 160 lines, 32-line probes at their middles
    text = "".join("NEEDLE = 1\n" if i == 250 else f"x{i} = {i}\n" for i in range(1, 641))
    return RepositoryView(write_tree(tmp_path, {"pkg/a.py": text}))


class _ZoomDouble(ScriptedBackend):
    """The scripted double (not a model); a zoom Choice picks the region whose span holds `line` (0.9)."""

    def __init__(self, line: int | None, by_round: dict[int, int] | None = None):
        super().__init__(DISCOVER)
        self.line, self.by_round = line, by_round or {}

    def answer(self, request):
        if request.state.get("stage") != "semantic_zoom":
            return super().answer(request)
        self.requests.append(request)
        [(key, question)] = request.questions.items()
        options = question.options()
        line = self.by_round.get(request.state["round"], self.line)
        spans = {k: [int(x) for x in d.split(" ", 2)[1].split("-")] for k, d in options.items()}
        best = next(k for k, (a, b) in spans.items() if a <= line <= b)
        rest = 0.1 / (len(options) - 1) if len(options) > 1 else 0.0
        probabilities = {k: 0.9 if k == best else rest for k in options}
        return Response(model="zoom-double", answers={key: ChoiceAnswer(choice=best, probabilities=probabilities)},
                        usage=Usage(input_tokens=10, output_tokens=2))


def test_selected_regions_split_recursively_and_converge_on_the_marker(repo):
    locator = runtime("semantic_zoom", regions=4, probe_lines=32, explore_slots=0, converge_lines=40, round_budget=8)
    result, backend, trace = run(repo, [], locator, backend=_ZoomDouble(250))
    probes = [(a, b) for _, a, b in reads(trace)]
    # coarse probes at the middles of 1-160, 161-320, 321-480, 481-640; then 161-320 splits (161-240,
    # 241-320), 241-320 splits (241-280, 281-320); in round 3 the chosen 241-280 is small and its root
    # unchanged: converged
    assert probes[:4] == [(65, 96), (225, 256), (385, 416), (545, 576)]
    assert any(161 <= a and b <= 240 for a, b in probes[4:]) and any(281 <= a and b <= 320 for a, b in probes[4:])
    assert terminations(result) == {"pkg/a.py": "converged"}
    [cost] = reading(result).files
    assert cost.final_region_lines == [40] and cost.rounds == 3
    kept = [(e.start_line, e.end_line) for f in result.files for e in f.evidence]
    assert kept in ([], [(241, 280)])  # the final region, read whole, scored after navigation


def test_small_regions_converge_only_when_their_roots_are_stable(repo):
    locator = runtime("semantic_zoom", regions=16, probe_lines=32, explore_slots=0, converge_lines=40, round_budget=3)
    # every coarse region is 40 lines (small), but the chosen one moves between roots each round
    result, _, _ = run(repo, [], locator, backend=_ZoomDouble(250, by_round={1: 20, 2: 250, 3: 620}))
    assert terminations(result) == {"pkg/a.py": "budget_exhausted"}
    steady, _, _ = run(repo, [], locator, backend=_ZoomDouble(250))
    assert terminations(steady) == {"pkg/a.py": "converged"} and reading(steady).files[0].rounds == 2


def test_the_exploration_slot_is_split_and_probed(repo):
    locator = runtime("semantic_zoom", regions=4, probe_lines=32, explore_slots=1, converge_lines=40, round_budget=2)
    _, _, trace = run(repo, [], locator, backend=_ZoomDouble(250))
    round_two = [(a, b) for _, a, b in reads(trace)][4:]
    explored = [span for span in round_two if not 161 <= span[0] <= 320]
    assert explored, "the exploration slot's region was not split and probed"
