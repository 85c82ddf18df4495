"""The render stage's own cost: rendering saved results as context packs, per pack, at several caps.

    python benchmarks/render_pack.py [--dataset swebench_lite_pypi] [--locator locagent] [--caps 4000,25000]

Localizes once if the job's results are not saved yet (`experiments.run` with the same overrides; a task
the locator has no output for is skipped),
then renders every saved result under each cap, twice per pack, and prints p50 / p95 / max wall
time per pack and the mean pack size. Target: p95 <= 250 ms per pack at the default 25,000-token cap
(rendering must stay a small fraction of a job, whose localization takes seconds per task).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from hydra.utils import instantiate

from dataset.subjects import SubjectStore, source_reader
from experiments.job.config import compose_config
from experiments.job.pipeline import RESULT_FILE, Job
from locator.result import LocalizationResult
from render.pack import render_pack

from over_http import run_experiment  # the benchmarks' shared helpers (benchmarks/ is on the path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--locator", default="locagent")
    parser.add_argument("--caps", default="4000,25000")
    args = parser.parse_args()
    overrides = [f"dataset={args.dataset}", f"locator={args.locator}"]
    run_experiment([*overrides, "allow_failed_tasks=true"])
    cfg = compose_config(*overrides)
    manifest = instantiate(cfg.dataset.loader)
    job = Job(cfg, manifest, args.locator)
    store = SubjectStore(cfg.paths.cache_dir, Path(manifest.source).parent)
    work = [(LocalizationResult.read(path), source_reader(store.materialize(row.subject, what=row.task.id)))
            for row in manifest.rows if (path := job.results_dir / row.task.id / "r0" / RESULT_FILE).is_file()]
    for cap in (int(c) for c in args.caps.split(",")):
        settings = job.render.model_copy(update={"cap_tokens": cap})
        times, tokens = [], []
        for result, source_of in work:
            for _ in range(2):
                started = time.perf_counter()
                pack = render_pack(result, source_of, settings)
                times.append((time.perf_counter() - started) * 1000)
            tokens.append(pack.tokens)
        times.sort()
        print(f"{args.locator} on {args.dataset}, cap {cap:,}: {len(work)} packs, mean {statistics.mean(tokens):,.0f} "
              f"tokens; per pack p50 {times[len(times) // 2]:.0f} ms, p95 {times[int(len(times) * 0.95)]:.0f} ms, "
              f"max {times[-1]:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
