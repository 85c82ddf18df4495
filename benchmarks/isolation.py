"""What isolating localization costs: a one-task bm25 job (the issue's yardstick) with its worker
process and runtime audit, against the same job at a revision before the isolation (a git worktree,
same venv, same store layout), `--n` fresh results each, alternated so a busy machine slows both alike.

    python benchmarks/isolation.py [--n 7] [--baseline 6f30db5] [--locator bm25] [--limit 1]

Per job: the process's wall time, the job's own `harness/job_s`, and on this tree the worker's start
(`harness/worker_ready_s`, overlapped with the job's setup) and what the job waited for it
(`harness/worker_wait_s`). The cost of isolation is the difference of the medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlflow.tracking import MlflowClient

ROOT = Path(__file__).resolve().parent.parent


def _job(tree: Path, root: Path, overrides: list[str]) -> tuple[float, dict[str, float]]:
    env = os.environ | {"LOCLAB_RESULTS_DIR": f"{root}/results", "LOCLAB_MLFLOW_DB": f"{root}/mlflow.db",
                        "LOCLAB_MLFLOW_ARTIFACTS": f"{root}/art", "MLFLOW_DISABLE_TELEMETRY": "true",
                        "HF_HUB_OFFLINE": "1"}
    shutil.rmtree(root / "results", ignore_errors=True)  # localize every time
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "experiments.run", *overrides, f"hydra.run.dir={root}/hydra"],
                   cwd=tree, env=env, capture_output=True, check=True)
    wall = time.perf_counter() - started
    client = MlflowClient(tracking_uri=f"sqlite:///{root}/mlflow.db")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()],
                              "tags.`loclab.kind` = 'job'", order_by=["attributes.start_time DESC"], max_results=1)
    metrics = runs[0].data.metrics
    return wall, {k.split("/", 1)[1]: v for k, v in metrics.items() if k.startswith("7 harness/")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=7)
    parser.add_argument("--baseline", default="6f30db5", help="a revision before the isolation")
    parser.add_argument("--locator", default="bm25")
    parser.add_argument("--limit", type=int, default=1)
    args = parser.parse_args()
    if args.n < 1 or args.limit < 1:
        parser.error(f"--n and --limit are whole numbers >= 1, got {args.n} and {args.limit}")
    known = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{args.baseline}^{{commit}}"],
                           capture_output=True, text=True)
    if known.returncode != 0:
        parser.error(f"--baseline {args.baseline!r} is not a revision of this checkout")
    overrides = [f"locator={args.locator}", f"limit={args.limit}"]
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        baseline = scratch / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(baseline), args.baseline],
                       check=True, capture_output=True)
        try:
            trees = {"isolated (this tree)": ROOT, f"in-process ({args.baseline})": baseline}
            stores = {name: scratch / f"store{i}" for i, name in enumerate(trees)}  # Hydra refuses "(" in a path
            for name, tree in trees.items():
                _job(tree, stores[name], overrides)  # the store, the subject, the digests: once
            samples: dict[str, list[tuple[float, dict[str, float]]]] = {name: [] for name in trees}
            for _ in range(args.n):
                for name, tree in trees.items():
                    samples[name].append(_job(tree, stores[name], overrides))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)], check=False,
                           capture_output=True)
    medians = {}
    for name, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        job_s = statistics.median(m["job_s"] for _, m in runs)
        localize = statistics.median(m["localize_s"] for _, m in runs)
        medians[name] = (wall, job_s)
        extra = ""
        if all("worker_ready_s" in m for _, m in runs):
            extra = (f", worker ready after {statistics.median(m['worker_ready_s'] for _, m in runs):.3f} s, "
                     f"waited for {statistics.median(m['worker_wait_s'] for _, m in runs):.3f} s")
        print(f"{name}: process wall {wall:.3f} s, harness/job_s {job_s:.3f} s, localize_s {localize:.3f} s{extra} "
              f"(medians of {args.n}, {args.locator} limit={args.limit})")
    (isolated_wall, isolated_job), (base_wall, base_job) = medians.values()
    print(f"isolation costs {isolated_wall - base_wall:+.3f} s of process wall ({(isolated_wall / base_wall - 1):+.1%}), "
          f"{isolated_job - base_job:+.3f} s of harness/job_s ({(isolated_job / base_job - 1):+.1%})")


if __name__ == "__main__":
    main()
