"""What the latency benchmarks share: their arguments, a demo task's subject, loclab's System One
server with injected latency, and one timed localization over HTTP; and how every benchmark runs a
job (`run_experiment`)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dataset.manifest import ManifestRow, load_manifest
from dataset.subjects import SubjectStore
from experiments.job.config import build
from experiments.job.paths import PROJECT_ROOT, default_cache_dir
from experiments.job.system_one_process import system_one_server
from locator.repository import RepositoryView
from locator.result import LocalizationResult
from locator.runtime import localize
from locator.system_one.cache import DecisionCache
from locator.system_one.client import SystemOne
from locator.trace import Trace
from metrics.comparator import what_was_found


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


def run_experiment(args: list[str], env: dict[str, str] | None = None) -> None:
    """`python -m experiments.run ARGS`, its output kept; a job that fails (a misspelt override, a
    failed task) stops the benchmark with the job's own error, not a traceback of the subprocess."""
    proc = subprocess.run([sys.executable, "-m", "experiments.run", *args], cwd=PROJECT_ROOT,
                          env=os.environ | (env or {}), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"experiments.run {' '.join(args)} failed (exit {proc.returncode}):\n"
                         f"{(proc.stderr or proc.stdout).strip()[-3000:]}")


def timed_job(args: list[str], env: dict[str, str], results: Path, key_from: int) -> tuple[float, dict[str, object]]:
    """`python -m experiments.run ARGS` timed from outside, and what each task found (the comparator's
    definition of the same localization), keyed by its result path from part `key_from` on."""
    started = time.perf_counter()
    run_experiment(args, env)
    wall = time.perf_counter() - started
    found = {str(p.relative_to(results).parts[key_from:]): what_was_found(json.loads(p.read_text()), keep_code=True)
             for p in sorted(results.rglob("localization-result.json"))}
    return wall, found


UNBOUNDED = 64  # a concurrency no chain of these benchmarks can use up: its wall time is the dependency floor


def dependency_floor_s(calls: int, latency_ms: float, concurrency: int, chain_wall_s: float) -> float:
    """The honest limit of a run at `concurrency`: its requests spread perfectly over the slots
    (calls x latency / concurrency), or the longest chain of requests that depend on each other —
    measured as the wall time with unbounded concurrency — whichever is longer."""
    return max(calls * latency_ms / 1000 / concurrency, chain_wall_s)


def speedup_table(column: str, settings: list, run: Callable[[object], tuple[float, dict[str, object]]]) -> int:
    """One row per setting: wall time, speedup over the first setting, and whether every task found
    what it found under the first; returns how many settings found something else."""
    print(f"| {column} | wall s | speedup | results identical to the first |")
    print("|---|---|---|---|")
    base_wall, base_found, failures = None, None, 0
    for setting in settings:
        wall, found = run(setting)
        base_wall, base_found = base_wall or wall, base_found if base_found is not None else found
        failures += found != base_found
        print(f"| {setting} | {wall:.1f} | {base_wall / wall:.2f}x | {'yes' if found == base_found else 'NO'} |")
    return failures
