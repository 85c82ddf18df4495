"""`elided_wanted_spans`, the measurement completeness rests on (seed 002's coverage list)."""

from __future__ import annotations

import pytest

from render.labels import shortest_unique_suffixes
from render.spans import InvalidSpanError, LineRange, WantedSpan, elided_wanted_spans, merge, subtract

R = LineRange


def _w(start, end, name="w"):
    return WantedSpan(R(start, end), name)


def test_a_span_sent_only_in_part_is_elided():
    assert elided_wanted_spans([_w(10, 20)], [R(10, 15)]) == [_w(10, 20)]


def test_an_absent_span_is_elided_and_a_fully_sent_one_is_not():
    assert elided_wanted_spans([_w(10, 20, "a"), _w(40, 41, "b")], [R(1, 30)]) == [_w(40, 41, "b")]


def test_adjacent_sent_ranges_join_to_cover_a_span():
    assert elided_wanted_spans([_w(5, 15)], [R(1, 10), R(11, 20)]) == []
    assert elided_wanted_spans([_w(5, 15)], [R(1, 9), R(11, 20)]) == [_w(5, 15)]  # line 10 is missing


def test_back_referenced_ranges_count_as_sent():
    assert elided_wanted_spans([_w(5, 15)], [R(11, 20)], back_referenced=[R(1, 10)]) == []
    assert elided_wanted_spans([_w(5, 15)], [R(11, 20)]) == [_w(5, 15)]


def test_elided_spans_come_back_in_line_order():
    found = elided_wanted_spans([_w(30, 31, "late"), _w(3, 4, "early"), _w(10, 12, "mid")], [])
    assert [w.name for w in found] == ["early", "mid", "late"]


@pytest.mark.parametrize("start,end", [(0, 3), (5, 4), (-1, 2)])
def test_invalid_spans_are_errors(start, end):
    with pytest.raises(InvalidSpanError):
        _w(start, end)


def test_merge_and_subtract():
    assert merge([R(5, 9), R(1, 3), R(4, 4), R(20, 21)]) == [R(1, 9), R(20, 21)]
    assert subtract([R(1, 20)], [R(5, 6), R(10, 30)]) == [R(1, 4), R(7, 9)]
    assert subtract([R(1, 5)], []) == [R(1, 5)]


def test_shortest_unique_suffixes():
    labels = shortest_unique_suffixes(["src/a/core.py", "src/b/core.py", "src/util.py", "core.py"])
    assert labels == {"src/a/core.py": "a/core.py", "src/b/core.py": "b/core.py", "src/util.py": "util.py",
                      "core.py": "core.py"}
    assert len(set(labels.values())) == len(labels)
