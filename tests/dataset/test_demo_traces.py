"""The demo set's trace tasks carry REAL traces: each task's reproducer, run against its pinned
package in a subprocess, still produces exactly the trace that is the task's input."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from dataset.manifest import load_manifest
from dataset.subjects import SubjectStore
from dataset.traces import extract_trace
from experiments.job.paths import PROJECT_ROOT

pytestmark = pytest.mark.network

_CARETS = re.compile(r"^\s*[~^]+\s*$")  # Python 3.11+ position markers: version-dependent, not recorded
ROWS = [r for r in load_manifest(PROJECT_ROOT / "datasets" / "demo" / "manifest.jsonl").rows
        if r.task.metadata.get("input") == "failure_trace"]


def run_reproducer(snippet: str, root: Path) -> str:
    """The trace `snippet` produces with the subject first on the path, paths made relative (the
    snippet as `snippet.py`, subject files as repository paths). No bytecode is written into the
    verified subject tree."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "snippet.py").write_text(snippet, encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.run([sys.executable, "-B", "snippet.py"], cwd=tmp, env=env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode != 0, "the reproducer no longer fails"
        text = proc.stderr.replace(f"{root}/", "").replace(f"{Path(tmp).resolve()}/", "").replace(f"{tmp}/", "")
    return "\n".join(line for line in text.rstrip("\n").split("\n") if not _CARETS.match(line))


def test_there_are_trace_tasks():
    assert len(ROWS) >= 3 and {r.task.metadata["package"] for r in ROWS} == {"click", "itsdangerous", "packaging"}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.task.id)
def test_the_recorded_trace_is_what_the_reproducer_produces(row, subject_cache):
    root = SubjectStore(subject_cache).materialize(row.subject, row.task.id)
    assert run_reproducer(row.task.metadata["reproducer"], root) == row.task.text
    assert extract_trace(row.task.text, 16384).text == row.task.text  # it is a whole traceback
    assert all(path in row.task.text for path in row.gold.files)  # the gold file is in the trace
