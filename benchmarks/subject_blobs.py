"""Subjects as shared blobs: the disk a task set's subject trees take when each distinct file is kept
once (hard links into `subjects/blobs/`), against the bytes their files add up to, and the wall time
of building them into a fresh cache.

    python benchmarks/subject_blobs.py                        # the SWE-bench Lite PyPI subset (downloads)
    python benchmarks/subject_blobs.py --dataset demo
    python benchmarks/subject_blobs.py --cache DIR            # an existing cache instead of a fresh one
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from hydra.utils import instantiate

from dataset.subjects import SubjectStore
from experiments.job.config import compose_config


def _files(root: Path) -> list[os.stat_result]:
    return [os.lstat(os.path.join(d, n)) for d, _, names in os.walk(root) for n in names
            if not os.path.islink(os.path.join(d, n))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--cache", default=None, help="a subject cache to measure (default: a fresh one, built here)")
    args = parser.parse_args()
    cfg = compose_config(f"dataset={args.dataset}")
    manifest = instantiate(cfg.dataset.loader)
    with tempfile.TemporaryDirectory(prefix="loclab-blobs-") as fresh:
        store = SubjectStore(args.cache or fresh)
        started = time.perf_counter()
        trees = {store.materialize(row.subject, row.task.id) for row in manifest.rows}
        wall = time.perf_counter() - started
        apparent = on_disk = 0
        seen: set[tuple[int, int]] = set()
        shared = 0
        for tree in sorted(trees):
            for st in _files(tree):
                apparent += st.st_blocks * 512
                if (st.st_dev, st.st_ino) in seen:
                    shared += 1
                else:
                    seen.add((st.st_dev, st.st_ino))
                    on_disk += st.st_blocks * 512
        print(f"{len(manifest.rows)} tasks, {len(trees)} distinct subject trees, built in {wall:.1f} s "
              f"({'given cache' if args.cache else 'fresh cache, downloads included'})")
        print(f"files' blocks added up: {apparent / 2**20:.1f} MiB; on disk, each distinct file once: "
              f"{on_disk / 2**20:.1f} MiB ({on_disk / apparent:.2f}x); {shared} files held by another tree's blob")


if __name__ == "__main__":
    main()
