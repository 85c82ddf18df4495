"""What the latency benchmarks share: their arguments, a demo task's subject, loclab's System One
server with injected latency, and one timed localization over HTTP."""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dataset.manifest import ManifestRow, load_manifest
from dataset.subjects import SubjectStore
from experiments.config import build
from experiments.paths import PROJECT_ROOT, default_cache_dir
from experiments.system_one_process import system_one_server
from locator.repository import RepositoryView
from locator.result import LocalizationResult
from locator.runtime import localize
from locator.system_one.cache import DecisionCache
from locator.system_one.client import SystemOne
from locator.trace import Trace


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    return parser.parse_args()


def demo_subject(task_id: str) -> tuple[ManifestRow, Path]:
    row = next(r for r in load_manifest(PROJECT_ROOT / "datasets/demo/manifest.jsonl").rows if r.task.id == task_id)
    return row, SubjectStore(default_cache_dir()).materialize(row.subject, row.task.id)


@contextmanager
def slow_server(latency_ms: float) -> Iterator[str]:
    """loclab's server (no server-side cache) answering after `latency_ms`; yields its URL."""
    with tempfile.TemporaryDirectory() as tmp, system_one_server(
        Path(tmp) / "server", f"server.faults.latency_ms={latency_ms}", "system_one.cache.enabled=false"
    ) as url:
        yield url


def timed_localize(locator, row: ManifestRow, root: Path, url: str, concurrency: int,
                   cache: DecisionCache | None = None) -> tuple[float, LocalizationResult]:
    backend = build("system_one.backend", "system_one=http", f"system_one.backend.url={url}",
                    "system_one.backend.timeout_s=60")
    system_one = SystemOne(backend, "loclab-lexical", cache=cache, max_concurrency=concurrency)
    started = time.perf_counter()
    result = localize(locator, row.task, RepositoryView(root), system_one, Trace())
    return time.perf_counter() - started, result
