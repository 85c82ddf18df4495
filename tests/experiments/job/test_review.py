"""The blind review and the Agentless-style baseline in one real Hydra sweep with the local model,
logged to MLflow beside the localization metrics."""

from __future__ import annotations

import json

import pytest

from tests.experiments.cli import Workspace
from tests.locator.configured import has_llm_extra
from tests.test_configs import readme_commands

pytestmark = pytest.mark.skipif(not has_llm_extra(), reason="the llm extra is not installed: LOCLAB_EXTRAS=test,llm bash scripts/setup.sh")


@pytest.mark.long
def test_a_sweep_of_agentless_style_and_bm25_is_reviewed_blind(tmp_path, subject_cache):
    ws = Workspace(tmp_path / "ws", subject_cache)
    [readme] = [c for c in readme_commands() if "review=blind" in c]  # the README's command, as written
    overrides = [a for a in readme[1:] if a != "-m"]
    # shorter reviews; the local model generates on the CPU: 438 s in CI, past 600 s on a loaded machine
    proc = ws.run("experiments.run", *overrides, "review.max_tokens=48", multirun=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = ws.jobs()
    assert sorted(j.data.tags["loclab.locator"] for j in jobs) == ["agentless_style", "bm25"]
    for job in jobs:
        assert job.info.status == "FINISHED" and job.data.metrics["6 tasks/ok"] == 1
        assert "5 review/review_rejected" in job.data.metrics  # a review, or a rejection counted, never a default
        assert job.data.tags["loclab.reviewer"].startswith("local_llm:qwen2.5-coder-0.5b")
        assert "1 quality/file_acc_all_at_05" in job.data.metrics
    [record] = [json.loads(p.read_text()) for p in ws.root.rglob("review.json") if "agentless_style" in str(p)]
    assert record["text"] and ("review" in record) != ("rejected" in record)
