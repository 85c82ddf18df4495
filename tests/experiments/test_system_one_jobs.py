"""Jobs sharing System One decisions (the faults and secrets of jobs over HTTP are probes in
tests/reliability)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.cli import Workspace

pytestmark = pytest.mark.network

@pytest.fixture
def ws(tmp_path, subject_cache):
    return Workspace(tmp_path / "ws", subject_cache)


def test_ab_arms_share_decisions_through_the_cache(ws):
    proc = ws.run("experiments.run", "experiment=ab_shared_cache", "limit=3", multirun=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    arms = sorted(ws.jobs(), key=lambda j: j.info.start_time)
    assert len(arms) == 2
    first, second = (a.data.metrics for a in arms)
    # Phase 1 asks identical questions in both arms (the arms differ only in the reader's observation
    # threshold): every discovery request of the second arm is answered by the cache.
    discovery = []
    for arm in arms:
        results = sorted(Path(arm.data.tags["loclab.results_dir"]).rglob("localization-result.json"))
        assert len(results) == 3
        stages = [next(s for s in json.loads(r.read_text())["cost"]["stages"] if s["name"] == "file_discovery")
                  for r in results]
        discovery.append([s["model_calls"] for s in stages])
    assert discovery[0] == discovery[1] and sum(discovery[1]) > 0
    assert second["2 cost/cache_hits"] * 3 >= sum(discovery[1])  # cache_hits is a per-task mean
    assert second["2 cost/physical_model_calls"] < second["2 cost/model_calls"]
    assert first["2 cost/cache_hits"] < second["2 cost/cache_hits"]
