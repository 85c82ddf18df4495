"""file_runtime over HTTP with 200 ms model latency: the per-file runtimes' concurrency speedup.

Every .py file of click 8.1.7 handed off (the hand-off cap, 16), one FileRuntime each, against
loclab's System One server with injected latency, at several `max_concurrency`; the results must
not depend on it (answers independent of completion order)."""

from __future__ import annotations

from over_http import arguments, demo_subject, slow_server, timed_localize

from experiments.config import build

TASK_ID = "demo-click-001"


def main() -> None:
    args = arguments()
    row, root = demo_subject(TASK_ID)
    locator = build("locator", "locator=file_runtime", "locator.discovery.file_threshold=0.0")
    with slow_server(args.latency_ms) as url:
        base = first = None
        print("| max_concurrency | wall s | speedup | model calls | files | reading requests | critical path s | summed model time s |")
        print("|---|---|---|---|---|---|---|---|")
        for concurrency in args.concurrency:
            wall, result = timed_localize(locator, row, root, url, concurrency)
            base, first = base or wall, first or result
            reading = next(s for s in result.cost.stages if s.name == "reading")
            if result.files != first.files or reading.files != next(s for s in first.cost.stages if s.name == "reading").files:
                raise SystemExit(f"max_concurrency {concurrency} changed the result: completion order leaked into it")
            phys = result.cost.physical
            print(f"| {concurrency} | {wall:.2f} | {base / wall:.2f}x | {result.cost.model_calls} | "
                  f"{reading.details['files_handed_off']} | {reading.details['requests']} | "
                  f"{phys.model_critical_path_ms / 1000:.2f} | {phys.model_wall_time_ms / 1000:.2f} |")


if __name__ == "__main__":
    main()
