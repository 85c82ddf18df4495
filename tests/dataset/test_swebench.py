from __future__ import annotations

import json

import pytest

from dataset.manifest import ManifestError
from dataset.swebench import load_swebench

ROW = {
    "instance_id": "org__pkg-1",
    "repo": "org/pkg",
    "base_commit": "abc123",
    "patch": "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,2 +1,2 @@\n-a = 1\n+a = 2\n b = 3\n",
    "problem_statement": "a should be 2",
    "hints_text": "look at m.py",
    "FAIL_TO_PASS": "[\"tests/test_m.py::test_a\"]",
    "split": "dev",
    "version": "1.0",
    "subject": {"kind": "pypi", "requirement": "pkg==1.0", "artifact": "wheel",
                "artifact_filename": "pkg-1.0-py3-none-any.whl", "artifact_sha256": "00", "path_map": {"": ""}},
    "gold_file_sha256": {"pkg/m.py": "ff"},
}


def _write(tmp_path, rows, suffix=".jsonl"):
    path = tmp_path / f"rows{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(rows))
    else:
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _load(path):
    return load_swebench(path, "t", "1", "d")


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_rows_become_tasks_with_gold_from_the_patch(tmp_path, suffix):
    manifest = _load(_write(tmp_path, [ROW], suffix))
    row = manifest.rows[0]
    assert row.task.id == "org__pkg-1" and row.task.text == "a should be 2"
    assert row.task.subject.revision == "abc123"
    assert "look at m.py" not in row.task.model_dump_json()
    assert "test_a" not in row.task.model_dump_json()
    assert row.gold.files == ["pkg/m.py"] and (row.gold.spans[0].start_line, row.gold.spans[0].end_line) == (1, 1)
    assert row.subject.verify_sha256 == {"pkg/m.py": "ff"}


def test_missing_field_names_file_line_and_field(tmp_path):
    broken = {k: v for k, v in ROW.items() if k != "patch"}
    path = _write(tmp_path, [ROW | {"instance_id": "ok-1"}, broken])
    with pytest.raises(ManifestError, match=r"rows\.jsonl:2: field patch: Field required"):
        _load(path)


def test_gold_file_without_hash_is_refused(tmp_path):
    path = _write(tmp_path, [ROW | {"gold_file_sha256": {}}])
    with pytest.raises(ManifestError, match="without gold_file_sha256"):
        _load(path)


def test_missing_file(tmp_path):
    with pytest.raises(ManifestError, match="not found"):
        _load(tmp_path / "absent.jsonl")


def test_the_shared_subset(swebench_file):
    manifest = _load(swebench_file)
    assert len(manifest.rows) == 50
    assert manifest.content_hash == _load(swebench_file).content_hash
    row = next(r for r in manifest.rows if r.task.id == "astropy__astropy-14182")
    # Checked by hand against the gold patch: "-    start_line = 3" is old line 30 of rst.py.
    assert (row.gold.spans[0].start_line, row.gold.spans[0].end_line) == (30, 30)
    assert {r.task.metadata["split"] for r in manifest.rows} == {"test", "dev"}
    assert (len(manifest.select(split="dev")), len(manifest.select(split="test"))) == (13, 37)
