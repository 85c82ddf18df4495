"""The seed's arms, each System One backend beside the other, from the jobs in one MLflow store:
`python benchmarks/model_arms.py --db runs/model2/mlflow.db [--experiment NAME] [--tasks ID,ID,…] [--split dev]`.

One row per finished job (the latest per arm, backend and task set): the arm (locator, schedule, a
setting changed from its YAML default: the model's `max_prompt_tokens`, `prefix_cache_slots`, the global
schedule's `when_all_wait`), which backend decided (the job's `loclab.decided_by`, with the model's
dtype), tasks, repositories, file Acc@1/5, line recall/precision, calls, input tokens, the StopTask
rate (tasks a model_stop ended, where the arm can stop a task), the StopFile rate (files the model
stopped), the mean wall per task (a job with repeats counts each task's repeats as tasks), the job's
process CPU time per task it localized (`CPU s/task`: every thread's, model loading included; a job
paused on a busy machine gains wall time, not CPU time; — where every result was reused) and the share of calls the decision cache answered
(`cached`: a cached answer costs no model time, so a job that reused earlier answers has a wall and a
CPU time per task below what the model takes afresh), and the share of the input tokens that reached
the backend which its prefix cache held (`prefix reuse`: not encoded; jobs from before the metric, —). `--tasks`
keeps the jobs run on exactly those tasks, `--split` those run on one split (the SWE-bench Lite PyPI
subset's dev or test: `--experiment loclab-swebench_lite_pypi`). Filters no finished job matches are an
error naming the task sets and splits the store has (exit 2), never an empty table.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path

from mlflow.tracking import MlflowClient
from omegaconf import OmegaConf

COLUMNS = ("arm", "backend", "tasks", "Acc@1", "Acc@5", "line R", "line P", "calls", "in tok", "StopTask", "StopFile",
           "s/task", "CPU s/task", "cached", "prefix reuse")
_LOCAL_LLM = OmegaConf.load(Path(__file__).resolve().parents[1] / "conf/system_one/local_llm.yaml").backend
# the arm is named with a local_llm setting only where a job changed it from the backend's YAML default; a
# job from before a setting existed ran as its value then (one prefix cache)
NAMED_SETTINGS = {"max_prompt_tokens": (str(_LOCAL_LLM.max_prompt_tokens), None),
                  "prefix_cache_slots": (str(_LOCAL_LLM.prefix_cache_slots), "1")}
_GLOBAL = OmegaConf.load(Path(__file__).resolve().parents[1] / "conf/locator/schedule/global.yaml").reader.schedule
# likewise the global schedule's: a job from before when_all_wait existed ended its waiting files
NAMED_SCHEDULE_SETTINGS = {"when_all_wait": (str(_GLOBAL.when_all_wait), "end")}


def _changed(params: dict[str, str], prefix: str, settings: dict[str, tuple[str, str | None]]) -> list[str]:
    """`setting=value` for each setting a job ran at other than its YAML default."""
    changed = []
    for setting, (default, before) in settings.items():
        value = params.get(f"{prefix}.{setting}", before)
        if value not in (None, "None", default):
            changed.append(f"{setting}={value}")
    return changed


def _arm(run) -> str:
    params = run.data.params
    arm = run.data.tags.get("loclab.locator", "?")
    changed = []
    if params.get("locator.reader.schedule._target_", "").endswith("GlobalSchedule"):
        arm += " global"
        changed += _changed(params, "locator.reader.schedule", NAMED_SCHEDULE_SETTINGS)
    if "local_llm" in params.get("system_one.backend._target_", ""):
        changed += _changed(params, "system_one.backend", NAMED_SETTINGS)
    arm += f" ({', '.join(changed)})" if changed else ""
    if params.get("repeats") not in (None, "1"):
        arm += f", {params['repeats']} sampled repeats"
    return arm


def _backend(run) -> str:
    decided = run.data.tags.get("loclab.decided_by", "?")
    if decided.startswith("System One: the lexical backend"):
        return "lexical"
    dtype = run.data.params.get("system_one.backend.dtype")
    return decided.removeprefix("System One: ") + (f" ({dtype})" if dtype else "")


def _row(run) -> list[str]:
    m = run.data.metrics
    ok = m.get("6 tasks/ok", 0.0)
    task_stops = [k for k in m if k.startswith("3 reading/task_termination_")]
    stop_task = f"{m.get('3 reading/task_termination_model_stop', 0.0) / ok:.3f}" if task_stops and ok else "—"
    stop_file = f"{m['3 reading/model_stop_rate']:.3f}" if "3 reading/model_stop_rate" in m else "—"

    def get(key: str, fmt: str) -> str:
        return format(m[key], fmt) if key in m else "—"

    total = m.get("6 tasks/total", ok)
    tasks = f"{ok:.0f}" if ok == total else f"{ok:.0f} of {total:.0f}"  # a failed task is named, never dropped
    return [_arm(run), _backend(run), tasks, get("1 quality/file_acc_all_at_01", ".3f"),
            get("1 quality/file_acc_all_at_05", ".3f"), get("1 quality/line_recall", ".3f"),
            get("1 quality/line_precision", ".4f"), get("2 cost/model_calls", ".1f"), get("2 cost/input_tokens", ",.0f"),
            stop_task, stop_file, f"{m['2 cost/elapsed_ms'] / 1000:.1f}" if "2 cost/elapsed_ms" in m else "—",
            _cpu_per_task(m),
            f"{m['2 cost/cache_hits'] / m['2 cost/model_calls']:.2f}" if m.get("2 cost/model_calls") and "2 cost/cache_hits" in m else "—",
            _prefix_reuse(m)]


def _prefix_reuse(m: dict[str, float]) -> str:
    """Of the input tokens that reached the backend, the share its prefix cache held (not encoded)."""
    cached, sent = m.get("2 cost/physical_cached_input_tokens"), m.get("2 cost/physical_input_tokens")
    return f"{cached / sent:.2f}" if cached is not None and sent else "—"


def _cpu_per_task(m: dict[str, float]) -> str:
    """The job's CPU time over the tasks it localized: a reused result cost this job nothing, so a job
    that reused every result has no CPU time per task to show (its s/task is the original's)."""
    localized = m.get("6 tasks/total", 0.0) - m.get("6 tasks/reused", 0.0)
    return f"{m['7 harness/job_cpu_s'] / localized:.1f}" if "7 harness/job_cpu_s" in m and localized > 0 else "—"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="the jobs' SQLite store")
    parser.add_argument("--experiment", default="loclab-demo")
    parser.add_argument("--tasks", default=None, help="comma-separated task ids: only jobs on exactly these")
    parser.add_argument("--split", default=None, help="only jobs run on this split (the job's `split` param)")
    args = parser.parse_args()
    client = MlflowClient(tracking_uri=f"sqlite:///{os.path.abspath(args.db)}")
    experiment = client.get_experiment_by_name(args.experiment)
    if experiment is None:
        raise SystemExit(f"{args.db}: no experiment {args.experiment!r}")
    wanted = sorted(args.tasks.split(",")) if args.tasks else None
    latest: dict[tuple, object] = {}
    task_sets, splits = set(), set()
    for run in client.search_runs([experiment.experiment_id], "tags.`loclab.kind` = 'job'", order_by=["start_time ASC"]):
        if run.info.status != "FINISHED":
            continue
        tasks = run.data.params.get("tasks")
        chosen = sorted(ast.literal_eval(tasks)) if tasks not in (None, "None", "null") else None
        split = run.data.params.get("split")
        task_sets.add(",".join(chosen) if chosen else "all")
        splits.add(split)
        if wanted is not None and chosen != wanted:
            continue
        if args.split is not None and split != args.split:
            continue
        latest[(_arm(run), _backend(run), tuple(chosen or ()), split, run.data.params.get("repeats"))] = run
    if not latest:
        print(f"{args.db}: no finished job in {args.experiment!r} matches --tasks {args.tasks} --split {args.split}; "
              f"task sets present: {sorted(task_sets)}; splits present: {sorted(map(str, splits))}", file=sys.stderr)
        return 2
    rows = sorted((_row(run) for run in latest.values()), key=lambda r: (r[0], r[1] != "lexical", r[1]))
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
