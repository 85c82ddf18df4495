"""Tasks in flight inside one job against a slow remote System One: a whole task set over HTTP.

    python benchmarks/task_concurrency.py [--dataset swebench_lite_pypi] [--locator two_phase]
                                          [--latency-ms 200] [--concurrency 1 4 8] [--limit N]

Starts loclab's System One server with `--latency-ms` injected per request, then runs the job
(`system_one=http`, the client's decision cache off so every request crosses the wire,
`force=true`, a fresh results folder per setting) at each `concurrency.tasks`, timed from outside.
Prints wall time and speedup, and fails if any task's result differs from the serial run's (clock
fields aside). Target: >= 3.5x at 4.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from experiments.paths import PROJECT_ROOT
from experiments.system_one_process import system_one_server
from metrics.comparator import what_was_found


def _results(folder: Path) -> dict[str, object]:
    return {str(p.relative_to(folder).parts[2:]): what_was_found(json.loads(p.read_text()), keep_code=True)
            for p in sorted(folder.rglob("localization-result.json"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--locator", default="two_phase")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="loclab-task-concurrency-"))
    base_wall, base_results, failures = None, None, 0
    with system_one_server(work / "server-cache", f"server.faults.latency_ms={args.latency_ms}") as url:
        print(f"{args.locator} on {args.dataset} over HTTP, {args.latency_ms:.0f} ms per request\n")
        print("| concurrency.tasks | wall s | speedup | results identical to serial |")
        print("|---|---|---|---|")
        for concurrency in args.concurrency:
            results = work / f"results-{concurrency}"
            env = os.environ | {"LOCLAB_RESULTS_DIR": str(results), "LOCLAB_MLFLOW_DB": str(work / "mlflow.db"),
                                "LOCLAB_MLFLOW_ARTIFACTS": str(work / "artifacts"), "LOCLAB_SYSTEM_ONE_URL": url,
                                "MLFLOW_DISABLE_TELEMETRY": "true"}
            command = [sys.executable, "-m", "experiments.run", f"dataset={args.dataset}", f"locator={args.locator}",
                       "system_one=http", "system_one.cache.enabled=false", "force=true",
                       f"concurrency.tasks={concurrency}", f"hydra.run.dir={work}/hydra-{concurrency}",
                       *([f"limit={args.limit}"] if args.limit else [])]
            started = time.perf_counter()
            subprocess.run(command, cwd=PROJECT_ROOT, env=env, check=True, capture_output=True)
            wall = time.perf_counter() - started
            found = _results(results)
            base_wall, base_results = base_wall or wall, base_results or found
            same = found == base_results
            failures += not same
            print(f"| {concurrency} | {wall:.1f} | {base_wall / wall:.2f}x | {'yes' if same else 'NO'} |")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
