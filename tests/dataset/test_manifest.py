from __future__ import annotations

import re

import json

import pytest

from dataset.manifest import ManifestError, ManifestHashError, load_manifest, write_manifest
from experiments.manifest import compile_tasks
from experiments.job.paths import PROJECT_ROOT

DEMO = PROJECT_ROOT / "datasets" / "demo" / "manifest.jsonl"


def test_demo_manifest_loads_with_a_verified_hash():
    manifest = load_manifest(DEMO)
    assert manifest.header.name == "demo" and len(manifest.rows) == 13
    assert len({r.task.subject.repository for r in manifest.rows}) == 3
    assert all(r.gold.entities for r in manifest.rows)


def test_demo_manifest_is_compiled_from_its_source():
    compiled = compile_tasks(PROJECT_ROOT / "datasets" / "demo" / "tasks.yaml")
    assert compiled.header == load_manifest(DEMO).header


def test_tasks_carry_no_gold(tmp_path):
    for row in load_manifest(DEMO).rows:
        task = row.task
        if task.metadata.get("input") == "failure_trace":
            # an observed trace names the files of its frames: that is the input, not a label; a
            # path may appear there and nowhere else
            frames = re.sub(r'File "[^"]+"', "", task.text)
            task = task.model_copy(update={"text": frames, "metadata": task.metadata | {"reproducer": ""}})
        task_json = task.model_dump_json()
        assert not any(path in task_json for path in row.subject.verify_sha256)


def _lines():
    return DEMO.read_text(encoding="utf-8").splitlines()


def test_a_malformed_row_names_file_line_and_field(tmp_path):
    lines = _lines()
    row = json.loads(lines[3])
    row["gold"]["spans"][0]["start_line"] = "three"
    lines[3] = json.dumps(row)
    bad = tmp_path / "m.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(ManifestError, match=r"m\.jsonl:4: field gold\.spans\.0\.start_line"):
        load_manifest(bad)


def test_invalid_json_names_the_line(tmp_path):
    bad = tmp_path / "m.jsonl"
    bad.write_text(_lines()[0] + "\n{not json\n")
    with pytest.raises(ManifestError, match=r"m\.jsonl:2: not valid JSON"):
        load_manifest(bad)


def test_edited_rows_fail_the_hash_check_until_resealed(tmp_path):
    lines = _lines()
    row = json.loads(lines[1])
    row["gold"]["spans"][0]["end_line"] += 1
    lines[1] = json.dumps(row)
    edited = tmp_path / "m.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    with pytest.raises(ManifestHashError, match="reseal"):
        load_manifest(edited)
    loose = load_manifest(edited, verify_hash=False)
    assert loose.content_hash != load_manifest(DEMO).content_hash


def test_missing_file():
    with pytest.raises(ManifestError, match="dataset file not found"):
        load_manifest(PROJECT_ROOT / "nope.jsonl")


def test_duplicate_ids_are_refused(tmp_path):
    lines = _lines()
    dup = tmp_path / "m.jsonl"
    dup.write_text("\n".join(lines + [lines[1]]) + "\n")
    with pytest.raises(ManifestError, match="duplicate task ids"):
        load_manifest(dup, verify_hash=False)


def test_write_then_load_round_trip(tmp_path):
    manifest = load_manifest(DEMO)
    write_manifest(manifest, tmp_path / "copy.jsonl")
    assert load_manifest(tmp_path / "copy.jsonl").rows == manifest.rows


def test_select_by_id_and_limit():
    manifest = load_manifest(DEMO)
    assert [r.task.id for r in manifest.select(["demo-click-002"])] == ["demo-click-002"]
    assert [r.task.id for r in manifest.select("demo-click-002")] == ["demo-click-002"]  # tasks=ID, no brackets
    assert len(manifest.select(limit=3)) == 3
    with pytest.raises(ManifestError, match="unknown task ids"):
        manifest.select(["nope"])
    assert {r.task.metadata["split"] for r in manifest.select(split="dev")} == {"dev"} and len(manifest.select(split="dev")) == 4
    with pytest.raises(ManifestError, match="no task has split"):
        manifest.select(split="validation")
