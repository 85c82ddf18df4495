"""The runtimes' shared parts: geometry-only actions, deconfliction, the DecisionView."""

from __future__ import annotations

import itertools

from locator.discovery import Candidate
from locator.reading.actions import Provenance, ReadRange
from locator.reading.selection import ScoredRead, best, deconflict
from locator.reading.state import FileState, RawRead
from locator.reading.view import DecisionView, Seen
from locator.repository import FileInfo
from locator.windows import LineRange
from tests.configs import locator as compose_locator


def _state(lines: int, read: list[tuple[int, int]] = (), path: str = "pkg/a.py") -> FileState:
    s = FileState(Candidate(FileInfo(path=path, size_bytes=lines * 10, line_count=lines), 0.5), None)
    for a, b in read:
        s.read.append(LineRange(a, b))
        s.raw.append(RawRead(LineRange(a, b), tuple(f"line {i}\n" for i in range(a, b + 1)), 1))
    return s


def _geometry(**params):
    return compose_locator("range_runtime", reader={"actions": params}).reader.actions


def _spans(actions: list[ReadRange]) -> dict[str, tuple[int, int]]:
    return {a.provenance.value: (a.span.start_line, a.span.end_line) for a in actions}


def test_nothing_read_offers_head_middle_and_tail():
    actions = _geometry(window_lines=100).propose(_state(1000))
    assert _spans(actions) == {"seed_head": (1, 100), "seed_middle": (451, 550), "seed_tail": (901, 1000)}


def test_a_short_file_offers_its_one_window_once():
    actions = _geometry(window_lines=100).propose(_state(60))
    assert [(a.provenance, a.span) for a in actions] == [(Provenance.SEED_HEAD, LineRange(1, 60))]


def test_after_a_read_same_size_neighbours_and_jumps_beyond_their_reach():
    actions = _geometry(window_lines=100, max_jumps=2).propose(_state(1000, [(451, 550)]))
    by_kind = {}
    for a in actions:
        by_kind.setdefault(a.provenance, []).append((a.span.start_line, a.span.end_line))
    assert by_kind[Provenance.EXPAND_BEFORE] == [(351, 450)] and by_kind[Provenance.EXPAND_AFTER] == [(551, 650)]
    # jumps land in what the expansions cannot reach: 1-350 and 651-1000, centred
    assert by_kind[Provenance.JUMP] == [(126, 225), (776, 875)]
    assert Provenance.SEED_HEAD not in by_kind


def test_actions_are_geometry_only_and_only_unread():
    a = _state(500, [(1, 100)], path="pkg/a.py")
    b = _state(500, [(1, 100)], path="pkg/b.py")
    b.raw[0] = RawRead(LineRange(1, 100), tuple("totally different code\n" for _ in range(100)), 1)
    geometry = _geometry(window_lines=100, max_jumps=3)
    assert [x.span for x in geometry.propose(a)] == [x.span for x in geometry.propose(b)]
    assert all(a.unread_segments(x.span) for x in geometry.propose(a))
    assert geometry.propose(_state(300, [(1, 300)])) == []


def _read(path: str, start: int, end: int, score: float) -> ScoredRead:
    return ScoredRead(_FILES[path], ReadRange(f"k{start}", LineRange(start, end), Provenance.JUMP, ""), score)


_FILES = {p: _state(1000, path=p) for p in ("pkg/a.py", "pkg/b.py")}


def test_deconfliction_keeps_the_best_of_overlapping_reads_in_any_listing_order():
    reads = [_read("pkg/a.py", 1, 140, 0.7), _read("pkg/a.py", 100, 240, 0.9), _read("pkg/a.py", 241, 380, 0.66),
             _read("pkg/b.py", 1, 140, 0.7)]
    expected = [(r.state.path, r.action.span) for r in (reads[1], reads[0], reads[3], reads[2])]
    expected = [e for e in expected if e != ("pkg/a.py", LineRange(1, 140))]  # overlaps the 0.9 read
    for order in itertools.permutations(reads):
        kept = deconflict(list(order))
        assert [(r.state.path, r.action.span) for r in kept] == [e for e in expected]


def test_best_breaks_ties_by_geometry_not_listing_order():
    reads = [_read("pkg/b.py", 1, 140, 0.5), _read("pkg/a.py", 300, 440, 0.5), _read("pkg/a.py", 1, 140, 0.5)]
    for order in itertools.permutations(reads):
        assert (best(list(order)).state.path, best(list(order)).action.span) == ("pkg/a.py", LineRange(1, 140))


def _seen(n: int, size: int) -> list[Seen]:
    return [Seen("pkg/a.py", RawRead(LineRange(i * 10 + 1, i * 10 + 10), ("x" * size,), i + 1)) for i in range(n)]


def test_the_view_keeps_the_newest_observations_within_the_cap():
    view = DecisionView(max_chars=250)
    shown, omitted = view.project(_seen(5, 100))
    assert [s.raw.epoch for s in shown] == [4, 5] and omitted == 3
    assert sum(len(s.raw.text) for s in shown) <= 250


def test_the_newest_observation_alone_over_the_cap_is_cut_to_it():
    shown, omitted = DecisionView(max_chars=30).project(_seen(2, 100))
    assert [(s.raw.epoch, len(s.raw.text)) for s in shown] == [(2, 30)] and omitted == 1


def test_the_rendered_view_is_raw_text_not_a_summary():
    text = DecisionView(max_chars=1000).render(
        [Seen("pkg/a.py", RawRead(LineRange(3, 4), ("def f():\n", "    return 1\n"), 2))])
    assert "def f():\n    return 1\n" in text and "pkg/a.py lines 3-4" in text
