from __future__ import annotations

import pytest

from locator.result import Confidence, Cost, Evidence, LocalizationResult, Producer, ResultFile, Role, Tokens
from locator.task import SubjectIdentity
from metrics.comparator import ComparatorError, compare_results, mirrored

SUBJECT = SubjectIdentity(repository="org/repo", revision="abc")


def _result(system, files, subject=SUBJECT, task="t1"):
    return LocalizationResult(
        task=task, subject=subject, producer=Producer(system=system),
        files=[ResultFile(path=p, role=role, confidence=Confidence.of(score, "noul", "t"),
                          evidence=[Evidence(id=f"{p}{s}", start_line=s, end_line=e) for s, e in spans])
               for p, role, score, spans in files],
        cost=Cost(model_calls=3 if system == "A" else None, tokens=Tokens(input=10)),
    )


LEFT = _result("A", [("a.py", Role.PRIMARY, 0.9, [(1, 10)]), ("b.py", Role.RELEVANT, 0.7, [(5, 6)])])
RIGHT = _result("B", [("a.py", Role.SUPPORTING, 0.6, [(6, 15), (40, 41)]), ("c.py", Role.RELEVANT, 0.8, [])])


def test_comparison_content():
    c = compare_results(LEFT, RIGHT)
    assert (c.shared_files, c.left_only_files, c.right_only_files) == (["a.py"], ["b.py"], ["c.py"])
    assert c.file_jaccard == pytest.approx(1 / 3)
    assert [(d.path, d.left_role, d.right_role) for d in c.role_differences] == [("a.py", "primary", "supporting")]
    # left lines: a 1-10, b 5-6 (12); right lines: a 6-15, 40-41 (12); shared a 6-10 (5)
    assert c.left_lines_covered_by_right == pytest.approx(5 / 12)
    assert c.right_lines_covered_by_left == pytest.approx(5 / 12)
    assert c.evidence_line_jaccard == pytest.approx(5 / 19)
    assert c.left_regions_missed_by_right == ["b.py:5-6"] and c.right_regions_missed_by_left == ["a.py:40-41"]
    assert (c.left_cost.model_calls, c.right_cost.model_calls) == (3, None)


def test_comparison_is_symmetric():
    assert compare_results(RIGHT, LEFT) == mirrored(compare_results(LEFT, RIGHT))
    assert mirrored(mirrored(compare_results(LEFT, RIGHT))) == compare_results(LEFT, RIGHT)


def test_fails_closed_on_different_or_missing_subjects():
    other_revision = _result("B", [], subject=SubjectIdentity(repository="org/repo", revision="def"))
    with pytest.raises(ComparatorError, match="different code"):
        compare_results(LEFT, other_revision)
    with pytest.raises(ComparatorError, match="no subject identity"):
        compare_results(LEFT, LEFT.model_copy(update={"subject": None}))
    with pytest.raises(ComparatorError, match="different tasks"):
        compare_results(LEFT, _result("B", [], task="t2"))
