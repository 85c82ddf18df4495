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
from locator.system_one.http import HttpBackend
from locator.trace import Trace
from locator.discovery import FlatDiscovery
from locator.reader import ProgressiveReader
from locator.two_phase import TwoPhaseLocator

TASK_ID = "demo-click-001"


def _locator(observation_threshold: float = 0.75) -> TwoPhaseLocator:
    # Every file handed off, one file per request: the concurrency has independent work to overlap.
    return TwoPhaseLocator(FlatDiscovery(file_threshold=0.0, max_files=16, batch_size=1),
                           ProgressiveReader(batch_size=1, soft_rounds=3, hard_rounds=3, action_threshold=0.1,
                                             observation_threshold=observation_threshold),
                           file_suffixes=[".py"])


def _run(url: str, row, root: Path, concurrency: int, cache: DecisionCache | None, threshold: float = 0.75):
    system_one = SystemOne(HttpBackend(url, "loclab-lexical", timeout_s=60), "loclab-lexical", cache=cache,
                           max_concurrency=concurrency)
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
