"""loclab's own share of a job's wall time: start-up, subject verification, rendering, scoring and
MLflow logging, against the locator's localization.

    python benchmarks/harness_overhead.py [--dataset swebench_lite_pypi] [--locator two_phase] [--limit N]
                                          [--decisions warm|cold] [key=value …]

Runs one job end to end as a user would (`python -m experiments.run … force=true`, embedded System
One, a fresh MLflow SQLite store and results folder, the subject cache warm), times the process from
outside, and reads the job's `harness/…` metrics: setup (store, experiment, config, locator, run,
params, dataset input), per task subject (materialize + verify + gold check), localize, render,
score and trace (its System One calls logged as an MLflow trace, as it ends), then logging. Process start-up (interpreter, imports, Hydra's composition) is the outside
wall time less the job's, and so includes the exit, where MLflow drains its trace-export queue
(about 1 s for a 50-task two_phase job; draining it inside the job instead measured slower). Target: everything but localization <= 10 % of the wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from mlflow.tracking import MlflowClient

from over_http import run_experiment  # the benchmarks' shared helpers (benchmarks/ is on the path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--locator", default="two_phase")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--runs", type=int, default=2, help="jobs to time; the first warms the subject cache")
    parser.add_argument("--decisions", choices=("warm", "cold"), default="warm",
                        help="warm: the user's decision cache; cold: a fresh one per run, so System One answers "
                             "every question (its work is part of localize)")
    parser.add_argument("overrides", nargs="*", help="more job overrides (key=value)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="loclab-harness-"))
    env = os.environ | {"LOCLAB_RESULTS_DIR": str(work / "results"), "LOCLAB_MLFLOW_DB": str(work / "mlflow.db"),
                        "LOCLAB_MLFLOW_ARTIFACTS": str(work / "artifacts"), "MLFLOW_DISABLE_TELEMETRY": "true"}
    overrides = [f"dataset={args.dataset}", f"locator={args.locator}", "force=true", f"hydra.run.dir={work}/hydra",
                 *([f"limit={args.limit}"] if args.limit else []), *args.overrides]
    for attempt in range(args.runs):
        cold = [f"system_one.cache.path={work}/decisions-{attempt}.sqlite"] if args.decisions == "cold" else []
        started = time.perf_counter()
        run_experiment([*overrides, *cold], env)
        wall = time.perf_counter() - started
        client = MlflowClient(f"sqlite:///{work / 'mlflow.db'}")
        experiment = client.get_experiment_by_name(f"loclab-{args.dataset}")
        [job] = client.search_runs([experiment.experiment_id], "tags.`loclab.kind` = 'job'", max_results=1,
                                   order_by=["attributes.start_time DESC"])
        h = {k.removeprefix("7 harness/"): v for k, v in job.data.metrics.items() if k.startswith("7 harness/")}
        parts = {"start-up": wall - h["job_s"], "setup": h["setup_s"], "subject": h["subject_s"],
                 "localize": h["localize_s"], "render": h["render_s"], "score": h["score_s"], "trace": h["trace_s"], "log": h["log_s"]}
        other = wall - sum(parts.values())  # task-loop bookkeeping, progress bar, …
        print(f"run {attempt + 1}: {int(job.data.metrics['6 tasks/total'])} tasks, wall {wall:.2f} s — " +
              ", ".join(f"{k} {v:.2f} s ({v / wall:.0%})" for k, v in parts.items()) + f", other {other:.2f} s")
        print(f"        loclab's own share: {(wall - parts['localize']) / wall:.0%} of the wall time "
              f"({(wall - parts['localize']):.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
