"""What re-verifying a cached subject costs: the whole-tree digest (every file's size and BLAKE3)
of each subject of a task set, timed cold-ish (first read in this process) and warm, against the
stat walk that stands in for it while the tree's stamp still matches (`dataset.subjects`).

    python benchmarks/subject_verification.py                       # the SWE-bench Lite PyPI subset
    python benchmarks/subject_verification.py --dataset demo
"""

from __future__ import annotations

import argparse
import time

from hydra.utils import instantiate

from dataset.subjects import SubjectStore, tree_digest, tree_stat
from experiments.job.config import compose_config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    args = parser.parse_args()
    cfg = compose_config(f"dataset={args.dataset}")
    manifest = instantiate(cfg.dataset.loader)
    store = SubjectStore(cfg.paths.cache_dir)
    roots = {}
    for row in manifest.rows:  # materialize (downloads on first use); tasks on one artifact share a tree
        root = store.materialize(row.subject, row.task.id)
        roots.setdefault(root, root)
    print(f"{len(manifest.rows)} tasks, {len(roots)} distinct subject trees")
    print("| subject | files | MiB | digest s (first) | digest s (again) | stat walk s |")
    print("|---|---|---|---|---|---|")
    total_files = total_bytes = 0
    total = [0.0, 0.0, 0.0]
    for root in roots.values():
        timings = []
        for _ in range(2):
            started = time.perf_counter()
            digest = tree_digest(root)
            timings.append(time.perf_counter() - started)
        started = time.perf_counter()
        tree_stat(root)
        timings.append(time.perf_counter() - started)
        size = sum(entry[0] for entry in digest.values() if isinstance(entry[0], int))
        total_files += len(digest)
        total_bytes += size
        total = [t + timing for t, timing in zip(total, timings)]
        print(f"| {root.parent.name} | {len(digest)} | {size / 2**20:.1f} | {timings[0]:.3f} | {timings[1]:.3f} "
              f"| {timings[2]:.3f} |")
    print(f"all: {total_files} files, {total_bytes / 2**20:.1f} MiB, digest {total[0]:.2f} s first, {total[1]:.2f} s "
          f"again; stat walk {total[2]:.2f} s; once per subject per process")


if __name__ == "__main__":
    main()
