"""two_phase over HTTP with 200 ms model latency: concurrency speedup and warm-cache reruns."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from over_http import arguments, demo_subject, slow_server, timed_localize

from experiments.config import build
from locator.repository import RepositoryView
from locator.system_one.cache import DecisionCache

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


def main() -> None:
    args = arguments()
    row, root = demo_subject(TASK_ID)
    files = [f for f in RepositoryView(root).files() if f.path.endswith(".py")]
    print(f"subject: {row.task.subject.repository}@{row.task.subject.revision}, {len(files)} .py files")
    with slow_server(args.latency_ms) as url:
        base = None
        print("| max_concurrency | wall s | speedup | model calls | critical path s | summed model time s |")
        print("|---|---|---|---|---|---|")
        for concurrency in args.concurrency:
            wall, result = timed_localize(_locator(), row, root, url, concurrency)
            base = base or wall
            phys = result.cost.physical
            print(f"| {concurrency} | {wall:.2f} | {base / wall:.2f}x | {result.cost.model_calls} | "
                  f"{phys.model_critical_path_ms / 1000:.2f} | {phys.model_wall_time_ms / 1000:.2f} |")

        sweeps = []
        with tempfile.TemporaryDirectory() as cache_dir:
            cache = DecisionCache(Path(cache_dir) / "decisions.sqlite")
            for attempt in ("cold", "warm"):
                started = time.perf_counter()
                physical = logical = 0
                for threshold in (0.6, 0.75):
                    _, result = timed_localize(_locator(threshold), row, root, url, 8, cache=cache)
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
