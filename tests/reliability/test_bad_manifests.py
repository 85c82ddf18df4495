"""Probes: bad task sets and selections. Each is a clear error naming the file, line or setting,
or a task that fails closed — never a task scored against gold that does not fit its code."""

from __future__ import annotations

import json

import pytest

from dataset.gold import GoldMismatchError
from dataset.manifest import Gold, GoldSpan, ManifestError, load_manifest
from experiments.job.config import compose_config
from experiments.job.runner import JobConfigError, _check
from tests.reliability.probes import job, local_manifest


def test_malformed_json_row_names_file_and_line(tmp_path):
    path = local_manifest(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1][:40]]) + "\n")
    with pytest.raises(ManifestError, match=rf"{path}:2: not valid JSON"):
        load_manifest(path)


def test_a_row_missing_a_field_names_file_line_and_field(tmp_path):
    path = local_manifest(tmp_path)
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    del row["gold"]["files"]
    path.write_text("\n".join([lines[0], json.dumps(row)]) + "\n")
    with pytest.raises(ManifestError, match=rf"{path}:2: field gold.files"):
        load_manifest(path)


def test_an_empty_sealed_manifest_is_an_error_not_a_job_that_scores_nothing(tmp_path):
    path = local_manifest(tmp_path)
    header = json.loads(path.read_text().splitlines()[0])
    from locator.hashing import blake3_hex

    header |= {"task_count": 0, "content_hash": {"algorithm": "blake3", "hex": blake3_hex("")}}
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(ManifestError, match="holds no task"):
        load_manifest(path).select()


@pytest.mark.parametrize("limit", [0, -1, 1.5, True])
def test_a_limit_that_is_not_a_positive_count_is_refused(tmp_path, limit):
    with pytest.raises(ManifestError, match="setting limit: a positive number of tasks"):
        load_manifest(local_manifest(tmp_path, tasks=2)).select(limit=limit)


@pytest.mark.parametrize("repeats", [0, -2])
def test_repeats_below_one_are_refused(repeats):
    with pytest.raises(JobConfigError, match="repeats must be a positive number"):
        _check(compose_config(f"repeats={repeats}"))


@pytest.mark.parametrize("batch", [0, "many"])
def test_a_trace_span_batch_that_is_not_a_positive_count_is_refused(batch):
    with pytest.raises(JobConfigError, match="tracking.trace_span_batch must be a positive number of spans"):
        _check(compose_config(f"tracking.trace_span_batch={batch}"))


def test_a_gold_file_missing_from_the_subject_fails_the_task_closed(tmp_path):
    gold = Gold(files=["pkg/gone.py"], spans=[GoldSpan(path="pkg/gone.py", start_line=1, end_line=1, region=0)], rule="t")
    manifest = local_manifest(tmp_path, gold=gold)
    the_job = job(tmp_path, manifest, "locator=bm25")
    outcome = the_job.run_task(the_job.manifest.rows[0].task.id, 0)
    assert outcome.status == "failed" and "gold file 'pkg/gone.py' is not a readable text file" in outcome.error
    assert not list((tmp_path / "results").rglob("localization-result.json"))  # never localized


def test_a_gold_span_past_the_end_of_its_file_fails_the_task_closed(tmp_path):
    gold = Gold(files=["pkg/core.py"], spans=[GoldSpan(path="pkg/core.py", start_line=5, end_line=40, region=0)], rule="t")
    the_job = job(tmp_path, local_manifest(tmp_path, gold=gold), "locator=bm25")
    outcome = the_job.run_task(the_job.manifest.rows[0].task.id, 0)
    assert outcome.status == "failed" and GoldMismatchError.__name__ in outcome.error
    assert "ends past the end of the file (6 lines" in outcome.error
