"""What a dense encoder costs per chunk on this CPU: the definition-level chunks of one demo
subject (as `locator=embedding_retrieval` and `locator=reranked` cut them), encoded by each
encoder with nothing cached, CPU (user+sys of this process) and wall per chunk.

    python benchmarks/encoders.py [--chunks 200]            # OMP_NUM_THREADS=1 before it: e5 on one core
"""

from __future__ import annotations

import argparse
import resource
import time

from hydra.utils import instantiate

from dataset.subjects import SubjectStore
from experiments.job.config import compose_config
from locator.languages import language_of
from locator.repository import RepositoryView
from locator.retrieval.documents import Granularity, documents


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=200)
    args = parser.parse_args()
    cfg = compose_config("dataset=demo", "locator=embedding_retrieval")
    row = instantiate(cfg.dataset.loader).rows[0]
    view = RepositoryView(SubjectStore(cfg.paths.cache_dir).materialize(row.subject, row.task.id))
    texts = [d.text[: cfg.locator.max_chunk_chars] for f in view.files() if language_of(f.path) is not None
             for found in [view.index_outline(f.path)]
             for d in documents(f.path, found.read.lines, Granularity.DEFINITION, cfg.locator.max_chunk_lines,
                                lambda found=found: found.definitions, found.read.digest)]
    texts = texts[: args.chunks]
    print(f"{len(texts)} chunks of {row.task.id}, mean {sum(map(len, texts)) / len(texts):.0f} characters")
    encoders = [("minilm", compose_config("locator=embedding_retrieval").locator.encoder),
                ("e5_small", compose_config("locator=embedding_retrieval", "locator/encoder=e5_small").locator.encoder)]
    for label, config in encoders:
        encoder = instantiate(config)
        encoder.passages(texts[:2])  # load the model: not a per-chunk cost
        cpu, wall = _cpu(), time.perf_counter()
        encoder.passages(texts)
        cpu, wall = _cpu() - cpu, time.perf_counter() - wall
        print(f"{label}: {1000 * cpu / len(texts):.1f} ms CPU, {1000 * wall / len(texts):.1f} ms wall per chunk")


if __name__ == "__main__":
    main()
