"""Reference-relative metrics (seed 000): a result judged against a reference localization's tiers."""

from __future__ import annotations

import pytest

from locator.result import Cost, Evidence, LocalizationResult, Producer, ResultFile, Role
from metrics.reference import ReferenceError, primary_files, reference_metrics


def _result(*files, task="t") -> LocalizationResult:
    return LocalizationResult(task=task, subject=None, producer=Producer(system="x"), cost=Cost(), files=[
        ResultFile(path=path, role=role, evidence=[Evidence(id=f"{path}{i}", start_line=s, end_line=e)
                                                   for i, (s, e) in enumerate(spans)]) for path, role, spans in files])


REFERENCE = _result(("a.py", Role.PRIMARY, [(10, 19), (40, 49)]), ("b.py", Role.PRIMARY, [(1, 10)]),
                    ("c.py", Role.SUPPORTING, [(5, 5)]), ("d.py", Role.CONTEXT, []))


def test_a_result_is_judged_in_the_reference_s_primary_tier():
    candidate = _result(("a.py", Role.RELEVANT, [(15, 24)]), ("c.py", Role.RELEVANT, [(5, 6)]), ("z.py", Role.RELEVANT, [(1, 3)]))
    got = reference_metrics(candidate, REFERENCE)
    assert got["ref_primary_file_recall"] == 0.5  # a.py of a.py, b.py
    assert got["ref_primary_region_recall"] == pytest.approx(1 / 3)  # a.py 10-19 of three primary regions
    assert got["ref_primary_line_coverage"] == pytest.approx(5 / 30)  # lines 15-19
    assert got["ref_precision_proxy"] == pytest.approx(2 / 3)  # a.py 15-24 and c.py 5-6 touch the reference; z.py not


def test_an_untiered_reference_is_all_primary_and_a_self_judgement_is_perfect():
    untiered = _result(("a.py", Role.RELEVANT, [(1, 5)]), ("b.py", Role.UNKNOWN, []))
    assert primary_files(untiered) == ["a.py", "b.py"] and primary_files(REFERENCE) == ["a.py", "b.py"]
    assert set(reference_metrics(REFERENCE, REFERENCE).values()) == {1.0}
    with pytest.raises(ReferenceError, match="the reference is for t"):
        reference_metrics(_result(("a.py", Role.PRIMARY, []), task="other"), REFERENCE)
