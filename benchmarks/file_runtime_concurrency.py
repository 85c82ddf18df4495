"""file_runtime over HTTP with 200 ms model latency: the per-file runtimes' concurrency speedup.

Every .py file of click 8.1.7 handed off (the hand-off cap, 16), one FileRuntime each, against
loclab's System One server with injected latency, at several `max_concurrency`; the results must
not depend on it (answers independent of completion order). Each wall time is set beside the
dependency floor: the requests spread over the slots, or one file's own chain of requests (the
wall time at unbounded concurrency), whichever is longer."""

from __future__ import annotations

from over_http import UNBOUNDED, arguments, demo_subject, dependency_floor_s, slow_server, timed_localize

from experiments.job.config import build

TASK_ID = "demo-click-001"


def main() -> None:
    args = arguments()
    row, root = demo_subject(TASK_ID)
    locator = build("locator", "locator=file_runtime", "locator.discovery.file_threshold=0.0")
    with slow_server(args.latency_ms) as url:
        runs = [timed_localize(locator, row, root, url, UNBOUNDED) for _ in range(2)]  # the first warms up
        chain_wall, first = min(runs, key=lambda run: run[0])
        print(f"dependency chain (max_concurrency {UNBOUNDED}): {chain_wall:.2f} s, {first.cost.model_calls} model calls")
        print("| max_concurrency | wall s | speedup | model calls | floor s | wall / floor | files | reading requests | "
              "critical path s | summed model time s |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        base = None
        first_reading = next(s for s in first.cost.stages if s.name == "reading")
        for concurrency in args.concurrency:
            wall, result = timed_localize(locator, row, root, url, concurrency)
            base = base or wall
            reading = next(s for s in result.cost.stages if s.name == "reading")
            if result.files != first.files or reading.files != first_reading.files:
                raise SystemExit(f"max_concurrency {concurrency} changed the result: completion order leaked into it")
            floor = dependency_floor_s(result.cost.model_calls, args.latency_ms, concurrency, chain_wall)
            phys = result.cost.physical
            print(f"| {concurrency} | {wall:.2f} | {base / wall:.2f}x | {result.cost.model_calls} | {floor:.2f} | "
                  f"{wall / floor:.3f} | {reading.details['files_handed_off']} | {reading.details['requests']} | "
                  f"{phys.model_critical_path_ms / 1000:.2f} | {phys.model_wall_time_ms / 1000:.2f} |")

if __name__ == "__main__":
    main()
