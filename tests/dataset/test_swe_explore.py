"""SWE-Explore's bench rows as a data set: core regions the gold spans, optional regions a tier of
their own, the problem statement alone the task text, the repository at base_commit from a mirror."""

from __future__ import annotations

import json
import subprocess

import pytest

from dataset.manifest import ManifestError, TierRegion
from dataset.swe_explore import load_swe_explore
from dataset.swebench import RowsLeftOutWarning

CORE_PY = "".join(f"def f{i}():\n    return {i}\n" for i in range(40))  # 80 lines


def _git(repo, *args) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _truth(core, optional=None, main=("pkg/core.py",)):
    regions = [{"path": p, "start": s, "end": e} for p, s, e in core]
    truth = {"read_core_files": sorted({p for p, _, _ in core}), "read_core_regions": regions,
             "modified_core_files": list(main), "main_files": list(main)}
    if optional is not None:
        truth["read_optional_files_map"] = {m: sorted({p for p, _, _ in rs}) for m, rs in optional.items()}
        truth["read_optional_regions_map"] = {m: [{"path": p, "start": s, "end": e} for p, s, e in rs]
                                              for m, rs in optional.items()}
    return truth


def swe_explore_rows(tmp_path):
    """A SWE-Explore rows file and the mirror folder of its repository (made once per folder)."""
    repo = tmp_path / "mirrors" / "acme__widgets"
    path = tmp_path / "bench.jsonl"
    if path.is_file():
        return path, repo.parent
    (repo / "pkg").mkdir(parents=True)
    _git(repo, "init", "--quiet")
    (repo / "pkg" / "core.py").write_text(CORE_PY)
    (repo / "pkg" / "util.py").write_text("def helper():\n    return 1\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    common = {"repo": "acme/widgets", "base_commit": base, "dataset": "verified", "patch": "diff --git …",
              "read_step_info": {"pkg/core.py": [{"step_idx": 4, "start": 1, "end": -1}]}}
    rows = [
        {"instance_id": "acme__widgets-1", "problem_statement": "f7 returns the wrong number",
         "ground_truth": _truth([("pkg/core.py", 13, 16)], {"model-a": [("pkg/util.py", 1, -1)], "model-b": [("pkg/core.py", 20, 9)]}),
         **common},
        {"instance_id": "acme__widgets-2", "problem_statement": "helper is slow",
         "ground_truth": _truth([], {"model-a": []}), **common},  # no core regions: dropped, as SWE-Explore does
        {"instance_id": "acme__widgets-3", "problem_statement": "everything",
         "ground_truth": _truth([("pkg/core.py", 1, -1)]), **common},  # a whole-file core region no gold span holds
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, repo.parent


def _load(path, mirrors):
    return load_swe_explore(path, "swe_explore", "1", "d", str(mirrors), None, ".")


def test_core_regions_are_the_gold_and_optional_regions_a_tier_of_their_own(tmp_path):
    path, mirrors = swe_explore_rows(tmp_path)
    with pytest.warns(RowsLeftOutWarning, match=r"acme__widgets-2 \(row 2: no core regions.*acme__widgets-3 \(row 3: core "
                                                r"region pkg/core.py 1..-1 is not a line range"):
        [row] = _load(path, mirrors).rows
    assert row.task.text == "f7 returns the wrong number"  # the statement alone: no patch, no read steps
    assert row.gold.files == ["pkg/core.py"] and [(s.start_line, s.end_line) for s in row.gold.spans] == [(13, 16)]
    # every model's optional regions, kept as written (a whole file, an inverted range)
    assert row.gold.optional_regions == [TierRegion(path="pkg/util.py", start=1, end=-1),
                                         TierRegion(path="pkg/core.py", start=20, end=9)]
    assert row.gold.optional_files == ["pkg/core.py", "pkg/util.py"] and row.gold.main_files == ["pkg/core.py"]
    assert row.subject.revision == json.loads(path.read_text().splitlines()[0])["base_commit"]
    assert set(row.subject.verify_sha256) == {"pkg/core.py"}


def test_a_bad_row_names_its_file_line_and_field(tmp_path):
    path, mirrors = swe_explore_rows(tmp_path)
    bad = json.loads(path.read_text().splitlines()[0])
    del bad["ground_truth"]["read_core_regions"][0]["end"]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(bad) + "\n")
    with pytest.raises(ManifestError, match=rf"{broken}:1: field ground_truth.read_core_regions.0.end: Field required"):
        _load(broken, mirrors)
    with pytest.raises(ManifestError, match="no rows file: set LOCLAB_SWE_EXPLORE"):
        load_swe_explore(None, "swe_explore", "1", "d", None, None, ".", path_setting="LOCLAB_SWE_EXPLORE or dataset.loader.path")


@pytest.mark.slow
def test_a_job_on_swe_explore_rows_logs_the_optional_tier_s_coverage(tmp_path, subject_cache):
    """The tiers reach SWE-Explore's family: optional coverage is logged (absent on a gold without the tier)."""
    from tests.experiments.cli import Workspace

    path, mirrors = swe_explore_rows(tmp_path)
    ws = Workspace(tmp_path / "ws", subject_cache)
    proc = ws.run("experiments.run", "dataset=swe_explore", f"dataset.loader.path={path}",
                  f"dataset.loader.git_mirrors={mirrors}", "locator=bm25")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [job] = ws.jobs("loclab-swe_explore")
    assert job.data.metrics["1 swe_explore/instances_scored"] == 1
    assert 0 <= job.data.metrics["1 swe_explore/optional_coverage"] <= 1 and "1 swe_explore/recall_at_300" in job.data.metrics
