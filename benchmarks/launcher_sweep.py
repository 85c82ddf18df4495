"""A sweep's wall time by launcher, against a slow remote System One: the same 2-job sweep
(`locator=two_phase` at two observation thresholds) run serially, then with `sweep=ray` (a local
Ray cluster: both jobs at once) or any other launcher, over loclab's server with injected latency.

    python benchmarks/launcher_sweep.py [--dataset swebench_lite_pypi] [--limit 10]
                                        [--latency-ms 200] [--launchers serial ray]

Each launcher gets a fresh results folder and store, `force=true` and the client's decision cache
off, so every request crosses the wire; fails if a launcher's results differ from the serial run's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from experiments.job.system_one_process import system_one_server
from over_http import speedup_table, timed_job

SWEEP = "locator.reader.evidence.observation_threshold=0.6,0.7"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--launchers", nargs="+", default=["serial", "ray"])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="loclab-launcher-sweep-"))
    with system_one_server(work / "server-cache", f"server.faults.latency_ms={args.latency_ms}") as url:
        print(f"2-job two_phase sweep on {args.dataset} (limit {args.limit}) over HTTP, "
              f"{args.latency_ms:.0f} ms per request\n")

        def run(launcher: str) -> tuple[float, dict[str, object]]:
            results = work / f"results-{launcher}"
            env = {"LOCLAB_RESULTS_DIR": str(results), "LOCLAB_MLFLOW_DB": str(work / f"{launcher}.db"),
                   "LOCLAB_MLFLOW_ARTIFACTS": str(work / f"artifacts-{launcher}"), "LOCLAB_SYSTEM_ONE_URL": url,
                   "MLFLOW_DISABLE_TELEMETRY": "true"}
            command = ["-m", f"sweep={launcher}", f"dataset={args.dataset}", "locator=two_phase", SWEEP,
                       f"limit={args.limit}", "system_one=http", "system_one.cache.enabled=false", "force=true",
                       f"hydra.sweep.dir={work}/multi-{launcher}"]
            return timed_job(command, env, results, key_from=1)  # keyed by job address and task

        failures = speedup_table("launcher", args.launchers, run)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
