"""`python -m experiments.analysis.repeatability RUN`: how much one configuration varies over its repeats.

For a job run with `repeats=N`: per quality metric the mean, std, min and max of the per-repeat
means; per cost metric the p50 and p95 over tasks × repeats (the max when there are fewer than 20
observations); file-set Jaccard and evidence-line overlap between repeats of each task; and whether
the repeats' results are byte-identical once wall-clock fields and the physical (cache-dependent)
cost are set aside (a deterministic
backend must produce identical results).
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from experiments.analysis.runs import AnalysisError, analysis_parser, find_runs, load_arm, open_store, print_table, write_report
from experiments.analysis.compare import COST, QUALITY
from experiments.tracking.metric_keys import logged_value, metric_key
from experiments.tracking.vocabulary import ReportKind, Tag
from metrics.comparator import what_was_found

_DETERMINISTIC_BACKENDS = ("lexical-", "embedding:", "none")


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def stability(results: list[dict]) -> dict[str, float]:
    files = [{f["path"] for f in r["files"]} for r in results]
    lines = [{(f["path"], n) for f in r["files"] for e in f["evidence"] for n in range(e["start_line"], e["end_line"] + 1)}
             for r in results]
    pairs = list(itertools.combinations(range(len(results)), 2))
    canonical = {json.dumps(what_was_found(r), sort_keys=True) for r in results}
    return {"file_jaccard": float(np.mean([_jaccard(files[i], files[j]) for i, j in pairs])) if pairs else 1.0,
            "evidence_line_jaccard": float(np.mean([_jaccard(lines[i], lines[j]) for i, j in pairs])) if pairs else 1.0,
            "identical": float(len(canonical) == 1)}


def agreement(per_task: pd.DataFrame) -> pd.DataFrame:
    """Per task, how its repeats' results agree (`stability`), from the results the rows point at."""
    rows = [{"task_id": task_id, **stability([json.loads(Path(p).read_text(encoding="utf-8")) for p in group["result"]])}
            for task_id, group in per_task[per_task.status == "ok"].groupby("task_id")]
    return pd.DataFrame(rows, columns=["task_id", "file_jaccard", "evidence_line_jaccard", "identical"]).set_index("task_id")


def spread_metrics(per_task: pd.DataFrame, metrics: Iterable[str]) -> dict[str, float]:
    """A repeats job's spread, as MLflow metrics (`6 repeats/…`): per metric the std, min and max of
    its per-repeat means (each repeat's mean over the tasks), and the repeats' agreement: the share of
    tasks whose repeats found byte-identical results, and the mean file-set and evidence-line Jaccard
    between repeats of a task."""
    ok = per_task[per_task.status == "ok"]
    out: dict[str, float] = {}
    for metric in metrics:
        means = ok.groupby("repeat")[metric].mean().dropna() if metric in ok else pd.Series(dtype=float)
        if means.empty:
            continue
        out |= {f"{metric}_std": means.std(ddof=1) if len(means) > 1 else 0.0, f"{metric}_min": means.min(),
                f"{metric}_max": means.max()}
    agreed = agreement(ok)
    if len(agreed):
        out |= {"identical_tasks": agreed.identical.mean(), "file_jaccard": agreed.file_jaccard.mean(),
                "evidence_line_jaccard": agreed.evidence_line_jaccard.mean()}
    return {metric_key(f"repeats.{name}"): logged_value(value) for name, value in out.items()}


def summarize(per_task: pd.DataFrame) -> pd.DataFrame:
    ok = per_task[per_task.status == "ok"]
    repeats = sorted(ok["repeat"].unique())
    rows = []
    for metric in QUALITY:
        means = ok.groupby("repeat")[metric].mean()
        rows.append({"metric": metric, "kind": "quality", "repeats": len(repeats), "mean": means.mean(),
                     "std": means.std(ddof=1) if len(means) > 1 else 0.0, "min": means.min(), "max": means.max()})
    for metric in COST:
        values = ok[metric].dropna().to_numpy(float)
        if values.size == 0:
            continue
        high = np.percentile(values, 95) if values.size >= 20 else values.max()
        rows.append({"metric": metric, "kind": "cost", "repeats": len(repeats), "mean": values.mean(),
                     "p50": float(np.median(values)), "p95_or_max": float(high)})
    return pd.DataFrame(rows).set_index("metric")


def main(argv: list[str] | None = None) -> int:
    parser = analysis_parser("repeatability", __doc__)
    parser.add_argument("run", help="run id or name of a job run with repeats > 1")
    args = parser.parse_args(argv)
    try:
        client = open_store(args)
        [run] = find_runs(client, args.experiment, args.run)
        arm = load_arm(client, run)
        if arm.per_task["repeat"].nunique() < 2:
            raise AnalysisError(f"{arm.label} has a single repeat; run it with repeats=N (N >= 2)")
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = summarize(arm.per_task)
    per_task = agreement(arm.per_task)
    identity = arm.tags.get(Tag.SYSTEM_ONE_IDENTITY, "")
    # sampled decisions (`sampling.seed`) vary across repeats by design, whatever the backend
    deterministic = identity.startswith(_DETERMINISTIC_BACKENDS) and "|sampled(" not in identity
    all_identical = bool(per_task["identical"].all())
    print_table(f"repeatability of {arm.label} ({summary.repeats.max()} repeats)", summary, args.format)
    print(f"file-set Jaccard between repeats: mean {per_task.file_jaccard.mean():.4f}, min {per_task.file_jaccard.min():.4f}")
    print(f"evidence-line Jaccard between repeats: mean {per_task.evidence_line_jaccard.mean():.4f}, "
          f"min {per_task.evidence_line_jaccard.min():.4f}")
    print(f"byte-identical results (clock and physical-cost fields aside): {int(per_task.identical.sum())}/{len(per_task)} tasks"
          + (" — backend is deterministic, so all must be" if deterministic else
             " — decisions are sampled (sampling.seed), so repeats may differ" if "|sampled(" in identity else ""))
    if deterministic and not all_identical:
        print("VIOLATION: a deterministic configuration produced different results across repeats")
    folder = write_report(ReportKind.REPEATABILITY, args.experiment, {"summary": summary, "per_task": per_task}, {},
                          {Tag.ARM: arm.run_id, Tag.DETERMINISTIC_VIOLATION: str(deterministic and not all_identical).lower()},
                          args.out, reported=[arm.run_id], metrics=spread_metrics(arm.per_task, QUALITY),
                          title=f"{arm.label} ({summary.repeats.max()} repeats)")
    print(f"report: {folder}")
    return 1 if deterministic and not all_identical else 0


if __name__ == "__main__":
    sys.exit(main())
