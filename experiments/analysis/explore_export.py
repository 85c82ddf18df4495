"""`python -m experiments.analysis.explore_export RUN`: a job's results in SWE-Explore's forms, so its own
evaluator can score them too.

- `predictions.jsonl`: one line per task, `{instance_id, explorer, regions: [{path, start, end}],
  num_regions}`, the form CoSIL's published predictions take (`end: -1` a whole file);
- `relevant_files/<task>.txt`: the `RELEVANT_FILES:` block SWE-Explore's agent explorers answer with
  (`path:10-20`, `path:5`, `path` for a whole file).

The regions are what loclab scores SWE-Explore's family on (metrics.explore_regions): files in rank
order, each file's evidence, a file without evidence whole, the first k (`--k`, else the job's
`scoring.swe_explore_k`). A task with several repeats is exported from its first.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from experiments.analysis.runs import AnalysisError, analysis_parser, find_runs, open_store
from experiments.job.record import RecordError, open_record
from experiments.tracking.vocabulary import Tag
from metrics.explore_regions import WHOLE_FILE, predicted_regions
from metrics.swe_explore import Region


def relevant_files(regions: list[Region]) -> str:
    """The `RELEVANT_FILES:` block of SWE-Explore's agent output."""
    lines = ["RELEVANT_FILES:"]
    for r in regions:
        lines.append(r.path if (r.start, r.end) == WHOLE_FILE else f"{r.path}:{r.start}" if r.start == r.end
                     else f"{r.path}:{r.start}-{r.end}")
    return "\n".join(lines) + "\n"


def prediction_row(task_id: str, explorer: str, regions: list[Region]) -> dict:
    return {"instance_id": task_id, "explorer": explorer,
            "regions": [{"path": r.path, "start": r.start, "end": r.end} for r in regions], "num_regions": len(regions)}


def main(argv: list[str] | None = None) -> int:
    parser = analysis_parser("explore_export", __doc__)
    parser.add_argument("run", help="a job run: id, short id or name")
    parser.add_argument("--k", type=int, help="regions per task (default: the job's scoring.swe_explore_k)")
    args = parser.parse_args(argv)
    if args.k is not None and args.k < 1:
        parser.error(f"--k is a positive number of regions, got {args.k}")
    try:
        client = open_store(args)
        run = find_runs(client, args.experiment, args.run)[0]
        k = args.k if args.k is not None else int(run.data.params.get("scoring.swe_explore_k", 0)) or None
        if k is None:
            raise AnalysisError(f"run {run.info.run_id} logged no scoring.swe_explore_k (a job older than it): give --k")
        out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="explore-export-"))
        with tempfile.TemporaryDirectory() as work:
            by_task = open_record(client, run, Path(work)).results_by_task()
        (out / "relevant_files").mkdir(parents=True, exist_ok=True)
        rows = []
        for task_id, results in by_task.items():  # a task's first repeat
            regions = predicted_regions(results[0], k)
            explorer = f"loclab/{run.data.tags.get(Tag.LOCATOR, results[0].producer.system)}"
            rows.append(prediction_row(task_id, explorer, regions))
            (out / "relevant_files" / f"{task_id}.txt").write_text(relevant_files(regions), encoding="utf-8")
        (out / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    except (AnalysisError, RecordError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(rows)} tasks, top {k} regions each: {out}/predictions.jsonl and {out}/relevant_files/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
