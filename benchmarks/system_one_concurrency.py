"""two_phase over HTTP with 200 ms model latency: concurrency speedup and warm-cache reruns."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from dataset.manifest import load_manifest
from dataset.subjects import SubjectStore
from experiments.paths import PROJECT_ROOT, default_cache_dir
from experiments.system_one_process import system_one_server
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.cache import DecisionCache
from locator.system_one.client import SystemOne
from experiments.config import build
from locator.trace import Trace

TASK_ID = "demo-click-001"


def _locator(observation_threshold: float | None = None):
    """The YAML's two_phase with every file handed off and one file per request, so the concurrency
    has independent work to overlap."""
    overrides = ["locator=two_phase", "locator.discovery.file_threshold=0.0", "locator.discovery.questions_per_request=1",
                 "locator.reader.schedule.batch_size=1", "locator.reader.budget.soft_rounds=3",
                 "locator.reader.budget.hard_rounds=3", "locator.reader.action_threshold=0.1"]
    if observation_threshold is not None:
        overrides.append(f"locator.reader.evidence.observation_threshold={observation_threshold}")
    return build("locator", *overrides)


def _run(url: str, row, root: Path, concurrency: int, cache: DecisionCache | None, threshold: float | None = None):
    backend = build("system_one.backend", "system_one=http", f"system_one.backend.url={url}",
                    "system_one.backend.timeout_s=60")
    system_one = SystemOne(backend, "loclab-lexical", cache=cache, max_concurrency=concurrency)
    started = time.perf_counter()
    result = localize(_locator(threshold), row.task, RepositoryView(root), system_one, Trace())
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args()
    row = next(r for r in load_manifest(PROJECT_ROOT / "datasets/demo/manifest.jsonl").rows if r.task.id == TASK_ID)
    root = SubjectStore(default_cache_dir()).materialize(row.subject, row.task.id)
    files = [f for f in RepositoryView(root).files() if f.path.endswith(".py")]
    print(f"subject: {row.task.subject.repository}@{row.task.subject.revision}, {len(files)} .py files")
    with tempfile.TemporaryDirectory() as tmp, system_one_server(
        Path(tmp) / "server", f"server.faults.latency_ms={args.latency_ms}", "system_one.cache.enabled=false"
    ) as url:
        base = None
        print("| max_concurrency | wall s | speedup | model calls | critical path s | summed model time s |")
        print("|---|---|---|---|---|---|")
        for concurrency in args.concurrency:
            wall, result = _run(url, row, root, concurrency, cache=None)
            base = base or wall
            phys = result.cost.physical
            print(f"| {concurrency} | {wall:.2f} | {base / wall:.2f}x | {result.cost.model_calls} | "
                  f"{phys.model_critical_path_ms / 1000:.2f} | {phys.model_wall_time_ms / 1000:.2f} |")

        cache = DecisionCache(Path(tmp) / "decisions.sqlite")
        sweeps = []
        for attempt in ("cold", "warm"):
            started = time.perf_counter()
            physical = logical = 0
            for threshold in (0.6, 0.75):
                _, result = _run(url, row, root, 8, cache=cache, threshold=threshold)
                physical += result.cost.physical.model_calls
                logical += result.cost.model_calls
            sweeps.append((attempt, time.perf_counter() - started, logical, physical))
        print("\n| two-arm sweep | wall s | logical calls | physical calls |")
        print("|---|---|---|---|")
        for attempt, wall, logical, physical in sweeps:
            print(f"| {attempt} | {wall:.2f} | {logical} | {physical} |")
        print(f"warm/cold wall-time ratio: {sweeps[1][1] / sweeps[0][1]:.3f}")


if __name__ == "__main__":
    main()
