"""Helpers of the reliability suite: small local task sets built on the spot."""

from __future__ import annotations

from pathlib import Path

from dataset.manifest import Gold, GoldSpan, LocalSubject, ManifestRow, build_manifest, load_manifest, write_manifest
from experiments.job.config import compose_config
from experiments.job.pipeline import Job
from locator.task import SubjectIdentity, Task
from tests.conftest import write_tree

CORE = "def parse_config(path, section):\n    return path\n\n\ndef unrelated():\n    return 0\n"
FILES = {"pkg/core.py": CORE, "pkg/util.py": "def helper():\n    return 1\n"}
TEXT = "parse_config returns the path instead of the section of the config"


def local_manifest(tmp_path: Path, files: dict[str, str | bytes] | None = None, gold: Gold | None = None,
                   tasks: int = 1) -> Path:
    rows = []
    for n in range(tasks):
        root = write_tree(tmp_path / f"subject{n}", files or FILES)
        rows.append(ManifestRow(
            task=Task(id=f"task-{n}", text=TEXT, subject=SubjectIdentity(repository=f"local/r{n}", revision="1")),
            subject=LocalSubject(path=str(root)),
            gold=gold or Gold(files=["pkg/core.py"], spans=[GoldSpan(path="pkg/core.py", start_line=2, end_line=2,
                                                                      region=0)], rule="t"),
        ))
    path = tmp_path / "manifest.jsonl"
    write_manifest(build_manifest("local", "1", "d", "t", rows, str(path)), path)
    return path


def job(tmp_path: Path, manifest: Path, *overrides: str) -> Job:
    """A job composed from the YAML, its results and caches under tmp_path; no MLflow."""
    cfg = compose_config(*overrides, f"paths.results_dir={tmp_path / 'results'}", f"paths.cache_dir={tmp_path / 'cache'}")
    loaded = load_manifest(manifest)
    locator = next((o.split("=", 1)[1] for o in overrides if o.startswith("locator=")), "two_phase")
    return Job(cfg, loaded, locator)
