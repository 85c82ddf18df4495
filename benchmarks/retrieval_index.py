"""What a retrieval index costs per task: bm25 on every task of a set, twice in one process — the
first pass tokenizes every file (cold token cache), the second finds every file's tokens by content
hash (warm: another task or revision with the same files). Rankings must be identical.

    python benchmarks/retrieval_index.py                               # SWE-bench Lite PyPI subset, bm25
    python benchmarks/retrieval_index.py --dataset demo locator.granularity=definition
"""

from __future__ import annotations

import argparse
import statistics
import time

from hydra.utils import instantiate

from dataset.subjects import SubjectStore
from experiments.job.config import compose_config
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.trace import Trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--locator", default="bm25")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of the locator, e.g. locator.tokenizer=plain")
    args = parser.parse_args()
    cfg = compose_config(f"dataset={args.dataset}", f"locator={args.locator}", *args.overrides)
    manifest = instantiate(cfg.dataset.loader)
    store = SubjectStore(cfg.paths.cache_dir)
    roots = {row.task.id: store.materialize(row.subject, row.task.id) for row in manifest.rows}
    timings: list[list[float]] = [[], []]
    rankings: list[list[list[str]]] = [[], []]
    index_lines = []
    for attempt in range(2):
        locator = instantiate(cfg.locator)  # a fresh locator: only the process-wide token cache carries over
        for row in manifest.rows:
            view = RepositoryView(roots[row.task.id])
            started = time.perf_counter()
            result = localize(locator, row.task, view, None, Trace())
            timings[attempt].append(time.perf_counter() - started)
            rankings[attempt].append(result.ranked_paths())
            if attempt == 0:
                index_lines.append(result.cost.index_lines)
    if rankings[0] != rankings[1]:
        raise SystemExit("the warm pass ranked differently: the token cache changed a result")
    for label, values in (("cold", timings[0]), ("warm", timings[1])):
        print(f"{label}: {len(values)} tasks, per task p50 {statistics.median(values):.3f} s, "
              f"max {max(values):.3f} s, total {sum(values):.1f} s")
    print(f"index_lines per task: mean {statistics.mean(index_lines):,.0f}, max {max(index_lines):,}; rankings identical")


if __name__ == "__main__":
    main()
