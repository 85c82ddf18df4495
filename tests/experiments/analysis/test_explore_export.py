"""`experiments.analysis.explore_export`: a job's results in SWE-Explore's forms, the regions loclab scored."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from experiments.analysis import explore_export
from metrics.swe_explore import Region
from tests.experiments.cli import Workspace


def _parsed(block: str) -> list[Region]:
    """SWE-Explore's RELEVANT_FILES lines as its README gives them: path:a-b, path:a, path (whole file)."""
    regions = []
    for line in block.splitlines()[1:]:
        found = re.fullmatch(r"(.+?)(?::(\d+)(?:-(\d+))?)?", line)
        start, end = found.group(2), found.group(3)
        regions.append(Region(found.group(1), int(start), int(end or start)) if start else Region(found.group(1), 1, -1))
    return regions


@pytest.mark.slow
def test_the_export_is_the_regions_the_job_scored(tmp_path, subject_cache):
    ws = Workspace(tmp_path / "ws", subject_cache)
    proc = ws.run("experiments.run", "locator=two_phase", "tasks=[demo-click-001,demo-itsdangerous-001]", "scoring.swe_explore_k=3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [job] = ws.jobs()
    out = tmp_path / "export"
    assert explore_export.main(["--db", str(ws.db), "--experiment", "loclab-demo", "--out", str(out), job.info.run_id]) == 0
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert {r["instance_id"] for r in rows} == {"demo-click-001", "demo-itsdangerous-001"}
    for row in rows:
        assert row["explorer"] == "loclab/two_phase" and row["num_regions"] == len(row["regions"]) <= 3  # the job's k
        block = (out / "relevant_files" / f"{row['instance_id']}.txt").read_text()
        assert _parsed(block) == [Region(r["path"], r["start"], r["end"]) for r in row["regions"]]
    # the job scored exactly these regions: its per-task hit_file_rate is theirs against the gold files
    table = pd.read_csv(ws.client().download_artifacts(job.info.run_id, "per_task.csv", str(tmp_path)))
    gold = {"demo-click-001": {"click/types.py"}, "demo-itsdangerous-001": {"itsdangerous/timed.py"}}
    for row in rows:
        visited = {r["path"] for r in row["regions"]}
        scored = table.loc[table.task_id == row["instance_id"], "hit_file_rate"].iloc[0]
        assert scored == pytest.approx(len(visited & gold[row["instance_id"]]) / len(gold[row["instance_id"]]))
