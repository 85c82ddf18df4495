"""Probes: imported results that are wrong in form. Each is an error naming the file, the line and
the field, raised before any subject is fetched; ranges past a file's end are clipped, with a
warning, so lines that do not exist are never scored."""

from __future__ import annotations

import json

import pytest

from locator.imported import ImportedRangeWarning, ImportedResultError
from tests.configs import locator
from tests.experiments.cli import Workspace
from tests.reliability.probes import job, local_manifest


def _imported(tmp_path, lines: list[str], fmt: str = "generic", suffix: str = ".jsonl"):
    path = tmp_path / f"peer{suffix}"
    path.write_text("\n".join(lines) + "\n")
    return locator("imported", path=path, format=fmt, system="Peer"), path


def _row(task="task-0", ranges=((2, 2),), path="pkg/core.py"):
    return json.dumps({"task": task, "files": [{"path": path, "ranges": [list(r) for r in ranges]}]})


def test_two_rows_for_one_task_are_an_error_naming_both_lines(tmp_path):
    imported, path = _imported(tmp_path, [_row(), _row(path="wrong/file.py")])
    with pytest.raises(ImportedResultError, match=rf"task task-0 has two rows: {path}:1 and {path}:2"):
        imported.check_inputs()


@pytest.mark.parametrize("ranges, message", [
    (((5, 2),), r"files\[0\].ranges\[0\]: need 1 <= start_line <= end_line, got \[5, 2\]"),
    (((-3, 2),), r"files\[0\].ranges\[0\]: need 1 <= start_line <= end_line, got \[-3, 2\]"),
    ((("a", 2),), r"files\[0\].ranges\[0\]: a range is \[start_line, end_line\] of integers"),
])
def test_bad_ranges_name_file_line_and_field(tmp_path, ranges, message):
    imported, path = _imported(tmp_path, [_row(task="other"), _row(ranges=ranges)])
    with pytest.raises(ImportedResultError, match=rf"{path}:2: field {message}"):
        imported.check_inputs()


@pytest.mark.parametrize("line, message", [
    ('{"task": "task-0", "files": [', "not valid JSON"),
    ('["task-0", "pkg/core.py"]', "expected a JSON object, got list"),
    ('{"files": []}', "field instance_id \\(or task\\): missing"),
    ('{"task": "task-0", "files": [{"path": "../../etc/passwd"}]}', "field files\\[0\\].path: rejected path"),
])
def test_malformed_rows_name_file_and_line(tmp_path, line, message):
    imported, path = _imported(tmp_path, [_row(task="other"), line])
    with pytest.raises(ImportedResultError, match=rf"{path}:2: .*{message}" if "JSON" in message else rf"{path}:2: {message}"):
        imported.check_inputs()


def test_a_json_array_import_names_the_item(tmp_path):
    path = tmp_path / "peer.json"
    path.write_text(json.dumps([{"task": "a", "files": []}, {"task": "b", "files": [{"path": "x.py", "ranges": [[3, 1]]}]}]))
    with pytest.raises(ImportedResultError, match=rf"{path}: item 2: field files\[0\].ranges\[0\]"):
        locator("imported", path=path, format="generic", system="Peer").check_inputs()


def test_a_range_past_the_end_of_the_file_is_clipped_with_a_warning(tmp_path):
    manifest = local_manifest(tmp_path)
    imported, _ = _imported(tmp_path, [_row(ranges=((2, 400), (50, 60)))])
    the_job = job(tmp_path, manifest, "locator=imported", f"locator.path={tmp_path / 'peer.jsonl'}",
                  "locator.system=Peer", "locator.format=generic")
    with pytest.warns(ImportedRangeWarning) as caught:
        outcome = the_job.run_task(the_job.manifest.rows[0].task.id, 0)
    assert outcome.status == "ok"
    assert ["clipped to [2, 6]" in str(w.message) for w in caught] == [True, False]
    assert "dropped" in str(caught[1].message)
    result = json.loads((outcome.result_dir / "localization-result.json").read_text())
    assert [(e["start_line"], e["end_line"]) for e in result["files"][0]["evidence"]] == [(2, 6)]
    assert outcome.scores["line_precision"] == pytest.approx(1 / 5)  # 5 real lines, not 399 + 11 imagined


@pytest.mark.network
def test_a_bad_import_fails_the_job_before_any_subject_is_fetched(tmp_path, subject_cache):
    manifest = local_manifest(tmp_path)
    (tmp_path / "subject0").rename(tmp_path / "moved")  # a subject fetch would fail with another error
    _, path = _imported(tmp_path, [_row(), _row()])
    ws = Workspace(tmp_path / "ws", subject_cache)
    proc = ws.run("experiments.run", "locator=imported", f"locator.path={path}", "locator.system=Peer",
                  f"dataset.loader.path={manifest}", "dataset.name=local")
    assert proc.returncode != 0 and "has two rows" in proc.stderr and "not a directory" not in proc.stderr
    # a single job refused its input before it started: one line, no run (a sweep's job would be FAILED)
    assert proc.returncode == 2 and ws.jobs("loclab-local") == []
    assert not ws.runs("loclab-local", "tags.`loclab.kind` = 'task'")


def test_a_path_named_twice_keeps_the_ranges_of_both_entries(tmp_path):
    manifest = local_manifest(tmp_path)
    row = {"task": "task-0", "files": [{"path": "pkg/core.py", "ranges": [[2, 3]]},
                                       {"path": "pkg/core.py", "ranges": [[5, 6]]}]}
    (tmp_path / "peer.jsonl").write_text(json.dumps(row) + "\n")
    the_job = job(tmp_path, manifest, "locator=imported", f"locator.path={tmp_path / 'peer.jsonl'}",
                  "locator.system=Peer", "locator.format=generic")
    outcome = the_job.run_task(the_job.manifest.rows[0].task.id, 0)
    result = json.loads((outcome.result_dir / "localization-result.json").read_text())
    assert [f["path"] for f in result["files"]] == ["pkg/core.py"]
    assert [(e["start_line"], e["end_line"]) for e in result["files"][0]["evidence"]] == [(2, 3), (5, 6)]


def test_a_path_not_in_the_subject_is_named_not_reported_as_zero_lines(tmp_path):
    manifest = local_manifest(tmp_path)
    imported, _ = _imported(tmp_path, [_row(path="pkg/gone.py")])
    the_job = job(tmp_path, manifest, "locator=imported", f"locator.path={tmp_path / 'peer.jsonl'}",
                  "locator.system=Peer", "locator.format=generic")
    with pytest.warns(ImportedRangeWarning, match="pkg/gone.py is not a file of the subject: its 1 ranges dropped"):
        outcome = the_job.run_task(the_job.manifest.rows[0].task.id, 0)
    assert outcome.status == "ok"


def test_a_hand_edited_saved_result_is_checked_against_its_subject_when_scored_again(tmp_path):
    """`experiments.score` re-scores saved results, which anyone can edit: a range to line 100000 is
    clipped, a file the subject lacks dropped (each named), a path out of the subject rejected."""
    from experiments.job.pipeline import ResultAdjustedWarning

    manifest = local_manifest(tmp_path)
    the_job = job(tmp_path, manifest, "locator=bm25")
    try:
        first = the_job.run_task("task-0", 0)
        saved = first.result_dir / "localization-result.json"
        result = json.loads(saved.read_text())
        result["files"][0]["evidence"] = [{"id": "e", "start_line": 2, "end_line": 100000}]
        result["files"].append({"path": "pkg/gone.py", "role": "relevant", "evidence": []})
        saved.write_text(json.dumps(result))
        with pytest.warns(ResultAdjustedWarning) as caught:
            edited = the_job.run_task("task-0", 0, localize_missing=False)
        assert edited.status == "ok" and edited.reused and edited.adjustments == 2
        messages = " ".join(str(w.message) for w in caught)
        assert "2-100000 clipped to 2-6: the file has 6 lines" in messages and "pkg/gone.py is not a readable" in messages
        assert edited.scores["line_precision"] == pytest.approx(1 / 5)  # over the 5 lines that exist
        result["files"][0]["path"] = "../../etc/passwd"
        saved.write_text(json.dumps(result))
        escaped = the_job.run_task("task-0", 0, localize_missing=False)
    finally:
        the_job.close()
    assert escaped.status == "failed" and "ResultOutsideSubjectError" in escaped.error
    assert "field files[0].path: rejected path" in escaped.error and "etc/passwd" in escaped.error
