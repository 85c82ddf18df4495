"""`python -m experiments.analysis.replay RUN [key=value ...]`: re-execute a recorded job and prove it reproduces.

The job is rebuilt from its run's record alone — the composed config Hydra saved (`hydra/config.yaml`),
the task set (its manifest, checked against the recorded hash), the locator's name, and the System
One answers it used (`decisions.jsonl`, served by a backend that knows nothing else: a request the
run never asked is an error, never a new call). Every task is localized again into a fresh results
folder and compared with the recorded result, byte for byte after dropping the fields that say
when and where, not what: wall times (`elapsed_ms`, `model_wall_time_ms`, `model_critical_path_ms`),
the physical cost block (what reached a backend depends on the cache's state), and the git revision
the code was checked out at (the code itself is compared by its source hash).

It refuses (exit 2) when the code that localizes differs from the run's (`loclab.code_identity`),
unless `--allow-code-change`: then it reports each task's differences — a deterministic A/B of two
builds on one set of decisions. `key=value` arguments change the recorded config (e.g. one reader
parameter) and report what that changes. Exit 0: every task identical; 1: some differ or failed.

    python -m experiments.analysis.replay 3f2a9c...                      # by run id (or run name)
    python -m experiments.analysis.replay 3f2a9c... --allow-code-change  # this build vs the recorded one
    python -m experiments.analysis.replay 3f2a9c... locator.reader.evidence.primary_threshold=0.9
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from hydra.utils import instantiate

from experiments.analysis.runs import AnalysisError, find_runs, open_store
from experiments.job.paths import register_resolvers
from experiments.job.pipeline import RESULT_FILE, Job
from experiments.job.production import job_code
from experiments.job.record import DECISIONS_ARTIFACT, RecordError, open_record
from experiments.tracking.vocabulary import Tag
from locator.system_one.snapshot import SnapshotBackend, SnapshotError
from metrics.comparator import what_was_found

register_resolvers()

EXIT_DIFFERENT, EXIT_REFUSED = 1, 2
SHOWN_DIFFERENCES = 5


def differences(recorded: Any, replayed: Any, where: str = "") -> list[str]:
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        return [d for k in sorted(set(recorded) | set(replayed), key=str)
                for d in differences(recorded.get(k, "<absent>"), replayed.get(k, "<absent>"), f"{where}.{k}".lstrip("."))]
    if isinstance(recorded, list) and isinstance(replayed, list) and len(recorded) == len(replayed):
        return [d for i, (a, b) in enumerate(zip(recorded, replayed)) for d in differences(a, b, f"{where}[{i}]")]
    if recorded == replayed:
        return []
    if isinstance(recorded, list) and isinstance(replayed, list):
        return [f"{where}: {len(recorded)} entries → {len(replayed)}"]
    return [f"{where}: {json.dumps(recorded)[:80]} → {json.dumps(replayed)[:80]}"]


def replay(args: argparse.Namespace) -> int:
    """The replay in a temporary folder that is removed when it ends (the recorded run's artifacts,
    and the replayed results unless --results-dir keeps them elsewhere)."""
    with tempfile.TemporaryDirectory(prefix="loclab-replay-") as work:
        return _replay(args, Path(work))


def _replay(args: argparse.Namespace, work: Path) -> int:
    client = open_store(args)
    record = open_record(client, find_runs(client, args.experiment, args.run)[0], work)
    tags, run_id, run = record.tags, record.run_id, record.run
    recorded_code = tags.get(Tag.CODE_IDENTITY)
    # the code the recorded job would run on this checkout
    recorded_cfg = record.config([])
    uses_system_one = getattr(instantiate(recorded_cfg.locator), "uses_system_one", True)
    current_code = job_code(recorded_cfg, uses_system_one).digest
    code_change = recorded_code != current_code
    if code_change and not args.allow_code_change:
        print(f"refused: the code that localizes differs from the run's (recorded {str(recorded_code)[:12]}, "
              f"this checkout {current_code[:12]}); --allow-code-change replays it on this build and reports "
              "the differences", file=sys.stderr)
        return EXIT_REFUSED
    results_dir = Path(args.results_dir) if args.results_dir else work / "replayed"
    cfg = record.config(args.overrides)
    cfg.paths.results_dir = str(results_dir)
    cfg.force = True
    if cfg.get("system_one"):
        cfg.system_one.cache.enabled = False  # answers come from the snapshot only
    manifest = record.manifest(cfg)
    snapshot = SnapshotBackend.from_file(str(record.decisions_file()), tags.get(Tag.SYSTEM_ONE_IDENTITY, "none"))
    decisions = snapshot.decisions
    recorded_dir = record.results_dir()
    identity = tags.get(Tag.SYSTEM_ONE_IDENTITY, "none")
    strangers = sorted({d.backend for d in decisions.values()} - {identity})
    if strangers:
        raise SnapshotError(f"{DECISIONS_ARTIFACT}: decisions of backend {strangers[0]!r}, the run used {identity!r}")
    job = Job(cfg, manifest, tags[Tag.LOCATOR], backend=snapshot)
    rows = manifest.select(cfg.tasks or None, cfg.limit, cfg.split)
    print(f"replaying run {run_id} ({run.info.run_name}): {len(rows)} tasks x {cfg.repeats} repeats, "
          f"{len(decisions)} recorded decisions, into "
          + (str(results_dir) if args.results_dir else "a temporary folder (removed after; --results-dir keeps them)")
          + (f"\ncode changed: recorded {str(recorded_code)[:12]} → this build {current_code[:12]}" if code_change else "")
          + (f"\nconfig changed: {' '.join(args.overrides)}" if args.overrides else ""))
    # a changed build or config changes the results address by design: reported once, not per task
    keep = {"keep_code": not code_change, "keep_address": not (code_change or args.overrides)}
    if not keep["keep_address"]:
        print(f"results address: recorded {tags.get(Tag.RUN_KEY)} → replayed {job.run_key}")
    identical = total = 0
    for row in rows:
        for repeat in range(cfg.repeats):
            total += 1
            label = f"{row.task.id}/r{repeat}"
            recorded_file = recorded_dir / row.task.id / f"r{repeat}" / RESULT_FILE
            outcome = job.run_task(row.task.id, repeat)
            if outcome.status != "ok":
                print(f"  {label}: FAILED — {outcome.error}")
                continue
            if not recorded_file.is_file():
                print(f"  {label}: the run recorded no result (it failed then); the replay produced one")
                continue
            try:
                record.stored_result(recorded_file)
            except RecordError as exc:
                print(f"  {label}: the recorded result cannot be compared — {exc}")
                continue
            found = differences(what_was_found(json.loads(recorded_file.read_text(encoding="utf-8")), **keep),
                                what_was_found(json.loads((outcome.result_dir / RESULT_FILE).read_text(encoding="utf-8")),
                                               **keep))
            if not found:
                identical += 1
                print(f"  {label}: identical")
                continue
            print(f"  {label}: {len(found)} differences")
            for line in found[:SHOWN_DIFFERENCES]:
                print(f"      {line}")
            if len(found) > SHOWN_DIFFERENCES:
                print(f"      … {len(found) - SHOWN_DIFFERENCES} more")
    job.close()
    print(f"{identical}/{total} tasks byte-identical to the recorded results (modulo clock fields)")
    return 0 if identical == total else EXIT_DIFFERENT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.analysis.replay", description=__doc__.split("\n")[0])
    parser.add_argument("run", help="job run id or run name")
    parser.add_argument("overrides", nargs="*", help="key=value changes to the recorded config")
    parser.add_argument("--allow-code-change", action="store_true",
                        help="replay on this build although the code differs; report per-task differences")
    parser.add_argument("--results-dir", help="where the replayed results go (default: a temporary folder, removed after)")
    parser.add_argument("--dataset", help="dataset whose experiment holds the run (for a run name)")
    parser.add_argument("--experiment", help="MLflow experiment of the run (for a run name)")
    parser.add_argument("--db", help="MLflow SQLite file (default: as the runner)")
    args = parser.parse_args(argv)
    try:
        return replay(args)
    except (AnalysisError, RecordError, SnapshotError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main())
