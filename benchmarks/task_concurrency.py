"""Tasks in flight inside one job against a slow remote System One: a whole task set over HTTP.

    python benchmarks/task_concurrency.py [--dataset swebench_lite_pypi] [--locator two_phase]
                                          [--latency-ms 200] [--concurrency 1 4 8] [--limit N] [key=value …]

Starts loclab's System One server with `--latency-ms` injected per request, then runs the job
(`system_one=http`, the client's decision cache off so every request crosses the wire,
`force=true`, a fresh results folder per setting) at each `concurrency.tasks`, timed from outside.
Prints wall time and speedup, and fails if any task's result differs from the serial run's (clock
fields aside). Target: >= 3.5x at 4.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from experiments.job.system_one_process import system_one_server
from over_http import speedup_table, timed_job


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--locator", default="two_phase")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--limit", type=int)
    parser.add_argument("overrides", nargs="*", help="more job overrides (key=value)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="loclab-task-concurrency-"))
    with system_one_server(work / "server-cache", f"server.faults.latency_ms={args.latency_ms}") as url:
        print(f"{args.locator} on {args.dataset} over HTTP, {args.latency_ms:.0f} ms per request\n")

        def run(concurrency: int) -> tuple[float, dict[str, object]]:
            results = work / f"results-{concurrency}"
            env = {"LOCLAB_RESULTS_DIR": str(results), "LOCLAB_MLFLOW_DB": str(work / "mlflow.db"),
                   "LOCLAB_MLFLOW_ARTIFACTS": str(work / "artifacts"), "LOCLAB_SYSTEM_ONE_URL": url,
                   "MLFLOW_DISABLE_TELEMETRY": "true"}
            command = [f"dataset={args.dataset}", f"locator={args.locator}", "system_one=http",
                       "system_one.cache.enabled=false", "force=true", f"concurrency.tasks={concurrency}",
                       f"hydra.run.dir={work}/hydra-{concurrency}", *([f"limit={args.limit}"] if args.limit else []),
                       *args.overrides]
            return timed_job(command, env, results, key_from=2)  # keyed by task

        failures = speedup_table("concurrency.tasks", args.concurrency, run)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
