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

SWEEP = "locator.reader.evidence.observation_threshold=0.6,0.7"


def _results(folder: Path) -> dict[str, object]:
    return {str(p.relative_to(folder).parts[1:]): what_was_found(json.loads(p.read_text()), keep_code=True)
            for p in sorted(folder.rglob("localization-result.json"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--launchers", nargs="+", default=["serial", "ray"])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="loclab-launcher-sweep-"))
    base_wall, base_results, failures = None, None, 0
    with system_one_server(work / "server-cache", f"server.faults.latency_ms={args.latency_ms}") as url:
        print(f"2-job two_phase sweep on {args.dataset} (limit {args.limit}) over HTTP, {args.latency_ms:.0f} ms per request\n")
        print("| launcher | wall s | speedup | results identical to serial |")
        print("|---|---|---|---|")
        for launcher in args.launchers:
            results = work / f"results-{launcher}"
            env = os.environ | {"LOCLAB_RESULTS_DIR": str(results), "LOCLAB_MLFLOW_DB": str(work / f"{launcher}.db"),
                                "LOCLAB_MLFLOW_ARTIFACTS": str(work / f"artifacts-{launcher}"),
                                "LOCLAB_SYSTEM_ONE_URL": url, "MLFLOW_DISABLE_TELEMETRY": "true"}
            command = [sys.executable, "-m", "experiments.run", "-m", f"sweep={launcher}", f"dataset={args.dataset}",
                       "locator=two_phase", SWEEP, f"limit={args.limit}", "system_one=http",
                       "system_one.cache.enabled=false", "force=true", f"hydra.sweep.dir={work}/multi-{launcher}"]
            started = time.perf_counter()
            subprocess.run(command, cwd=PROJECT_ROOT, env=env, check=True, capture_output=True)
            wall = time.perf_counter() - started
            found = _results(results)
            base_wall, base_results = base_wall or wall, base_results or found
            same = found == base_results
            failures += not same
            print(f"| {launcher} | {wall:.1f} | {base_wall / wall:.2f}x | {'yes' if same else 'NO'} |")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
