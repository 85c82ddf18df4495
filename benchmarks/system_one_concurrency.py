"""two_phase over HTTP with 200 ms model latency: concurrency speedup against the dependency floor
(the requests spread over the slots, or the longest chain of requests that wait on each other,
whichever is longer), results identical at every concurrency, and warm-cache reruns."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from over_http import UNBOUNDED, arguments, demo_subject, dependency_floor_s, slow_server, timed_localize

from experiments.job.config import build
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


def _reading(result) -> tuple[float, int]:
    """The reading stage's (Phase 2's) wall time in seconds and its model calls: Phase 1 asks level by
    level (directories, then their files), a chain of its own that the reader cannot shorten."""
    stage = next(s for s in result.cost.stages if s.name == "reading")
    return stage.elapsed_ms / 1000, stage.model_calls


def main() -> None:
    args = arguments()
    row, root = demo_subject(TASK_ID)
    files = [f for f in RepositoryView(root).files() if f.path.endswith(".py")]
    print(f"subject: {row.task.subject.repository}@{row.task.subject.revision}, {len(files)} .py files")
    with slow_server(args.latency_ms) as url:
        runs = [timed_localize(_locator(), row, root, url, UNBOUNDED) for _ in range(2)]  # the first warms up
        chain_wall, first = min(runs, key=lambda run: run[0])
        reading_chain = _reading(first)[0]
        print(f"dependency chain (max_concurrency {UNBOUNDED}): {chain_wall:.2f} s, {first.cost.model_calls} model calls "
              f"(reading: {reading_chain:.2f} s, {_reading(first)[1]} calls)")
        print("| max_concurrency | wall s | speedup | model calls | floor s | wall / floor | reading s | reading floor s | "
              "reading / floor | critical path s | summed model time s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        base = None
        for concurrency in args.concurrency:
            wall, result = timed_localize(_locator(), row, root, url, concurrency)
            if result.files != first.files or result.cost.model_calls != first.cost.model_calls:
                raise SystemExit(f"max_concurrency {concurrency} changed the result: completion order leaked into it")
            base = base or wall
            floor = dependency_floor_s(result.cost.model_calls, args.latency_ms, concurrency, chain_wall)
            phys = result.cost.physical
            reading_wall, reading_calls = _reading(result)
            reading_floor = dependency_floor_s(reading_calls, args.latency_ms, concurrency, reading_chain)
            print(f"| {concurrency} | {wall:.2f} | {base / wall:.2f}x | {result.cost.model_calls} | {floor:.2f} | "
                  f"{wall / floor:.3f} | {reading_wall:.2f} | {reading_floor:.2f} | {reading_wall / reading_floor:.3f} | "
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
