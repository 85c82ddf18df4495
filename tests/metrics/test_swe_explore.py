"""SWE-Explore's metric family, reproduced exactly: CoSIL's stored per-instance values recomputed from
its predicted regions and the ground truth (10 instances, 4 with whole-file regions resolved with line
counts at base_commit), and each trap of the evaluator (../shared/design/swe-explore-metrics.md) pinned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics.swe_explore import ExploreTruth, Region, explore_metrics, macro_mean, resolve

FIXTURE = Path(__file__).parent / "fixtures" / "swe_explore_cosil.json"
INSTANCES = json.loads(FIXTURE.read_text(encoding="utf-8"))["instances"]


def _regions(items) -> list[Region]:
    return [Region(r["path"], r["start"], r["end"]) for r in items]


def _truth(row) -> ExploreTruth:
    return ExploreTruth(tuple(_regions(row["core_regions"])), frozenset(row["core_files"]), tuple(_regions(row["optional_regions"])),
                        frozenset(row["optional_files"]), frozenset(row["main_files"]))


@pytest.mark.parametrize("row", INSTANCES, ids=[r["instance_id"] for r in INSTANCES])
def test_cosil_s_stored_values_are_recomputed_exactly(row):
    got = explore_metrics(_regions(row["predicted_regions"]), _truth(row), row["line_counts"])
    assert set(got) == set(row["stored_metrics"])
    for name, stored in row["stored_metrics"].items():
        assert got[name] == pytest.approx(stored, abs=1e-9), name


def test_the_reproduction_covers_whole_file_regions_that_need_line_counts():
    whole = [r for r in INSTANCES if any(p["end"] == -1 for p in r["predicted_regions"])
             and any(p["end"] == -1 and p["path"] in r["line_counts"] for p in r["predicted_regions"])]
    assert len(INSTANCES) >= 10 and len(whole) >= 3
    for row in whole:  # without the counts a whole-file region resolves to nothing, and the values change
        blind = explore_metrics(_regions(row["predicted_regions"]), _truth(row), {})
        assert any(abs(blind[k] - v) > 1e-9 for k, v in row["stored_metrics"].items()), row["instance_id"]


def test_the_macro_means_of_the_reproduced_rows():
    rows = [explore_metrics(_regions(r["predicted_regions"]), _truth(r), r["line_counts"]) for r in INSTANCES]
    mean = macro_mean(rows)
    expected = sum(r["stored_metrics"]["f1_score"] for r in INSTANCES) / len(INSTANCES)
    assert mean.scored == 10 and mean.skipped == 0 and mean.means["f1_score"] == pytest.approx(expected, abs=1e-12)


TRUTH = ExploreTruth((Region("a.py", 10, 19),), frozenset({"a.py"}), main_files=frozenset({"a.py"}), has_optional=False)


def test_an_explicit_end_is_not_clamped_to_the_file():
    assert resolve(Region("a.py", 5, 500), {"a.py": 100}) == (5, 500)  # lines past the end count
    assert resolve(Region("a.py", 1, -1), {"a.py": 100}) == (1, 100)
    assert resolve(Region("a.py", -8, -1), {"a.py": 100}) == (93, 100)
    assert resolve(Region("a.py", 1, -1), {}) is None  # no count: unresolvable, ignored
    assert resolve(Region("a.py", 0, 0), {"a.py": 100}) is None


def test_the_line_budget_counts_a_repeated_region_again():
    """recall@K walks every predicted line, repeats included: the second copy of a region spends the
    budget without finding anything new (a budget counting distinct lines would reach the gold)."""
    preds = [Region("a.py", 1, 9)] * 12 + [Region("a.py", 10, 19)]
    assert explore_metrics(preds, TRUTH, {}, budgets=(100,))["recall_at_100"] == 0.0
    assert explore_metrics(preds[-2:], TRUTH, {}, budgets=(100,))["recall_at_100"] == 1.0


def test_ndcg_s_ideal_order_is_over_the_predicted_regions():
    """A well-ordered set scores 1 whatever it missed: the ideal re-sorts the predictions, not the gold."""
    preds = [Region("a.py", 10, 12)]  # 3 of 10 core lines, first
    assert explore_metrics(preds, TRUTH, {}, budgets=(100,))["ndcg_at_100"] == 1.0
    worse_first = [Region("a.py", 1, 5), Region("a.py", 10, 12)]
    assert explore_metrics(worse_first, TRUTH, {}, budgets=(100,))["ndcg_at_100"] == pytest.approx((4.5 / 1.584962500721156) / 4.5)


def test_an_inverted_region_is_empty_but_still_overlaps():
    truth = ExploreTruth((Region("a.py", 10, 19),), frozenset({"a.py"}), (Region("b.py", 203, 92),), frozenset({"b.py"}))
    got = explore_metrics([Region("b.py", 50, 300)], truth, {})  # 50 <= 92 and 203 <= 300
    assert got["noise_region_rate"] == 0.0  # it overlaps the inverted optional region by interval
    assert got["context_efficiency"] == 0.0 and got["optional_coverage"] == 0.0  # which holds no line


def test_without_an_optional_tier_optional_coverage_is_absent_not_zero():
    assert "optional_coverage" not in explore_metrics([Region("a.py", 10, 12)], TRUTH, {})
    assert explore_metrics([], TRUTH, {})["precision"] == 0.0  # an empty prediction is scored


def test_a_failed_prediction_is_skipped_and_counted_apart():
    mean = macro_mean([{"recall": 1.0}, None, {"recall": 0.0}])
    assert mean.means["recall"] == 0.5 and mean.scored == 2 and mean.skipped == 1


def test_a_result_becomes_its_ranked_regions_with_whole_file_fallbacks():
    """Files in rank order, each file's evidence in the locator's order, a file without evidence whole,
    then the first k: what a downstream agent would read first."""
    from locator.result import Cost, Evidence, LocalizationResult, Producer, ResultFile
    from metrics.explore_regions import predicted_regions

    result = LocalizationResult(task="t", subject=None, producer=Producer(system="x"), cost=Cost(), files=[
        ResultFile(path="b.py", evidence=[Evidence(id="e1", start_line=30, end_line=40), Evidence(id="e2", start_line=1, end_line=5)]),
        ResultFile(path="a.py"),
        ResultFile(path="c.py", evidence=[Evidence(id="e3", start_line=7, end_line=7)])])
    assert predicted_regions(result, 5) == [Region("b.py", 30, 40), Region("b.py", 1, 5), Region("a.py", 1, -1), Region("c.py", 7, 7)]
    assert predicted_regions(result, 2) == [Region("b.py", 30, 40), Region("b.py", 1, 5)]


def test_loclab_gold_is_the_core_tier_and_counts_lines_of_its_own_paths_only():
    from dataset.manifest import Gold, GoldSpan, TierRegion
    from metrics.explore_regions import gold_truth, line_counts

    gold = Gold(files=["a.py"], spans=[GoldSpan(path="a.py", start_line=3, end_line=4, region=0)], rule="r")
    truth = gold_truth(gold)
    assert truth.core_regions == (Region("a.py", 3, 4),) and truth.main_files == {"a.py"} and not truth.has_optional
    sources = {"a.py": "x\ny\nz\f\nw\n", "other.py": "1\n2\n"}
    assert line_counts(truth, sources.get) == {"a.py": 5}  # splitlines() breaks at \f too; other.py is no GT path
    tiered = gold.model_copy(update={"optional_regions": [TierRegion(path="b.py", start=1, end=-1)], "optional_files": ["b.py"]})
    assert gold_truth(tiered).has_optional and gold_truth(tiered).optional_regions == (Region("b.py", 1, -1),)
