"""The seed's arms over whole task sets inside a time budget, on a machine with many cores or a GPU:
`python benchmarks/run_arms.py --store runs/gpu --workers 12 --deadline-s 420 [--arms A,B] [--sets demo,dev,test]
[--jobs ARM:SET,...] [--chunk 3] [overrides ...]` (overrides go to every job, e.g. `system_one=local_llm
system_one.backend.device=cuda`; `--jobs` names the (arm, set) pairs in their order instead of every arm on every set).

Each (arm, set)'s tasks are cut into chunks of `--chunk` tasks. A pool of `--workers` processes
localizes the chunks in the order the arms and sets are given (put first what matters most), each
chunk an `experiments.run` job with its own MLflow store and decision cache under STORE/workers (no
two processes share an SQLite file), all saving into STORE/results (a result is written whole under
its content address, so chunks do not collide). At the deadline the chunks still running are stopped
(SIGTERM to their process group: the run ends KILLED, a task not finished is not saved) and no chunk
starts. Then each (arm, set) is scored by `experiments.score`, which never localizes (a task without
a saved result is a failed task, named as such), into STORE/mlflow.db: one job per arm and set, so
`benchmarks/model_arms.py --db STORE/mlflow.db` tables them, a partial set as `k of N` tasks.

With `system_one=local_llm` one process first loads the model and measures it
(`benchmarks/local_llm.py`, written to STORE/local_llm.txt): the first load converts the weights into
the cache, which N processes must not do at once.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from hydra.utils import instantiate
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.job.config import compose_config  # noqa: E402

# the seed's arms as overrides of the root config (conf/locator/*.yaml hold their defaults)
ARMS = {"two_phase": ["locator=two_phase"],
        "range_runtime": ["locator=range_runtime"],
        "file_runtime": ["locator=file_runtime"],
        "evidence_filter": ["locator=evidence_filter"],
        "semantic_zoom": ["locator=semantic_zoom"],
        "two_phase_global": ["locator=two_phase", "locator/schedule=global"]}
SETS = {"demo": ["dataset=demo"],
        "dev": ["dataset=swebench_lite_pypi", "split=dev"],
        "test": ["dataset=swebench_lite_pypi", "split=test"]}
STOP_GRACE_S = 30
# the scripts it starts import loclab from this checkout whether or not it is installed
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}


@dataclass(frozen=True)
class Chunk:
    number: int
    arm: str
    task_set: str
    tasks: tuple[str, ...]


def task_ids(task_set: str, overrides: list[str]) -> list[str]:
    cfg = compose_config(*SETS[task_set], *overrides)
    manifest = instantiate(cfg.dataset.loader)
    return [row.task.id for row in manifest.select(None, cfg.limit, cfg.split)]


def _uses_local_llm(overrides: list[str]) -> bool:
    return "local_llm" in str(OmegaConf.select(compose_config(*overrides), "system_one.backend._target_"))


class Pool:
    """Chunks run as process groups of their own, so the deadline stops each one with its children."""

    def __init__(self, store: Path, overrides: list[str], deadline: float):
        self.store, self.overrides, self.deadline = store, overrides, deadline
        self.workers = store / "workers"
        self.running: dict[int, subprocess.Popen] = {}
        self.outcome: dict[int, str] = {}
        self._starting = threading.Lock()
        # composed here, once: Hydra's global state does not allow composing from the pool's threads
        self.has_cache = OmegaConf.select(compose_config(*overrides), "system_one.cache") is not None

    def command(self, chunk: Chunk) -> list[str]:
        own = self.workers / f"c{chunk.number:03d}"
        cache = [f"system_one.cache.path={own}.decisions.sqlite"] if self.has_cache else []
        return [sys.executable, "-m", "experiments.run", *ARMS[chunk.arm], *SETS[chunk.task_set], *self.overrides,
                f"tasks=[{','.join(chunk.tasks)}]", "allow_failed_tasks=true", "tracking.traces=false",
                f"tracking.db_path={own}.db", f"tracking.artifact_dir={own}.artifacts",
                f"paths.results_dir={self.store / 'results'}", f"hydra.run.dir={own}.hydra", *cache]

    def run(self, chunk: Chunk) -> None:
        with self._starting:  # a chunk is started and registered at once, or not after stop_all
            if time.monotonic() >= self.deadline:
                self.outcome[chunk.number] = "not started (deadline)"
                return
            log = (self.workers / f"c{chunk.number:03d}.log").open("w")
            process = subprocess.Popen(self.command(chunk), cwd=ROOT, env=ENV, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True)
            self.running[chunk.number] = process
        try:
            rc = process.wait(timeout=max(self.deadline - time.monotonic(), 0))
            self.outcome[chunk.number] = f"rc {rc}"
        except subprocess.TimeoutExpired:
            self.outcome[chunk.number] = "stopped at the deadline"
            _stop(process)
        finally:
            log.close()
            del self.running[chunk.number]

    def stop_all(self) -> None:
        """No chunk starts any more, and every running one is stopped (its run ends KILLED)."""
        with self._starting:
            self.deadline = 0.0
            running = list(self.running.values())
        for process in running:
            _stop(process)


class Stopped(KeyboardInterrupt):
    """Stopped from outside: Ctrl-C (SIGINT) or SIGTERM; `signum` says which, for the exit status."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _interrupted(signum, frame) -> None:
    raise Stopped(signum)


def check_overrides(overrides: list[str]) -> None:
    """The overrides compose (one line naming the one Hydra refuses, not its traceback)."""
    try:
        compose_config(*overrides)
    except Exception as exc:  # noqa: BLE001 - Hydra raises several types for a bad override
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SystemExit(f"run_arms: an override Hydra refuses: {first}") from None


def _stop(process: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def score(store: Path, arm: str, task_set: str, overrides: list[str]) -> int:
    command = [sys.executable, "-m", "experiments.score", *ARMS[arm], *SETS[task_set], *overrides,
               "allow_failed_tasks=true", f"tracking.db_path={store / 'mlflow.db'}",
               f"tracking.artifact_dir={store / 'mlartifacts'}", f"paths.results_dir={store / 'results'}",
               f"hydra.run.dir={store / 'hydra' / f'score-{arm}-{task_set}'}"]
    with (store / f"score-{arm}-{task_set}.log").open("w") as log:
        return subprocess.call(command, cwd=ROOT, env=ENV, stdout=log, stderr=subprocess.STDOUT)


def _names(text: str, known: dict, what: str) -> list[str]:
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise SystemExit(f"run_arms: {what}: {'unknown ' + ', '.join(map(repr, unknown)) if unknown else 'none named'}; "
                         f"choose from {', '.join(known)}")
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="folder for results, MLflow store and logs")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--deadline-s", type=float, required=True, help="seconds from start after which no chunk runs")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--sets", default="demo,dev,test")
    parser.add_argument("--jobs", default=None, help="ARM:SET pairs, in order (instead of --arms x --sets)")
    parser.add_argument("--chunk", type=int, default=3, help="tasks per localizing process")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    if not args.deadline_s >= 0:  # 0: no chunk starts (what is saved is scored); negative, or nan, is no deadline
        parser.error(f"--deadline-s is the seconds from start after which no chunk runs: 0 or more, got "
                     f"{args.deadline_s:g}")
    check_overrides(args.overrides)
    started = time.monotonic()
    if args.jobs:
        pairs = [pair.partition(":") for pair in args.jobs.split(",") if pair]
        jobs = [(_names(arm, ARMS, f"--jobs {arm}{colon}{task_set}: the arm")[0],
                 _names(task_set, SETS, f"--jobs {arm}{colon}{task_set}: the set (ARM:SET)")[0])
                for arm, colon, task_set in pairs]
        jobs = list(dict.fromkeys(jobs))  # a pair named twice is run once
    else:
        jobs = [(arm, s) for arm in _names(args.arms, ARMS, "--arms") for s in _names(args.sets, SETS, "--sets")]
    sets = list(dict.fromkeys(s for _, s in jobs))
    if args.workers < 1 or args.chunk < 1:
        raise SystemExit("--workers and --chunk must be >= 1")
    store = args.store.resolve()
    (store / "workers").mkdir(parents=True, exist_ok=True)
    pool = Pool(store, args.overrides, started + args.deadline_s)

    if _uses_local_llm(args.overrides):
        backend = [o for o in args.overrides if o.startswith("system_one.")]
        backend += [f"--weights={o.split('=', 1)[1]}" for o in args.overrides
                    if o.startswith("system_one/weights@system_one.backend=")]
        measured = store / "local_llm.txt"
        with measured.open("w") as out:
            rc = subprocess.call([sys.executable, "benchmarks/local_llm.py", *backend], cwd=ROOT, env=ENV, stdout=out,
                                 stderr=subprocess.STDOUT)
        if rc:  # every chunk would fail the same way: nothing is started
            raise SystemExit(f"run_arms: the model did not load (rc {rc}); no chunk started. {measured}:\n"
                             + "\n".join(measured.read_text().splitlines()[-15:]))
        print(measured.read_text(), flush=True)

    ids = {s: task_ids(s, args.overrides) for s in sets}
    pieces = [(arm, s, tuple(ids[s][i:i + args.chunk])) for arm, s in jobs for i in range(0, len(ids[s]), args.chunk)]
    chunks = [Chunk(n, *piece) for n, piece in enumerate(pieces)]
    print(f"{len(chunks)} chunks of up to {args.chunk} tasks on {args.workers} workers; "
          f"{', '.join(f'{s}: {len(ids[s])} tasks' for s in sets)}", flush=True)
    signal.signal(signal.SIGTERM, _interrupted)  # stopped from outside as by Ctrl-C: its chunks with it
    stopped: Stopped | None = None
    with ThreadPoolExecutor(args.workers) as executor:
        try:
            list(executor.map(pool.run, chunks))
        except KeyboardInterrupt as exc:
            stopped = exc if isinstance(exc, Stopped) else Stopped()
            pool.stop_all()  # each chunk is a session of its own: nothing else would stop it
    localized = time.monotonic() - started
    for chunk in chunks:
        print(f"c{chunk.number:03d} {chunk.arm} {chunk.task_set} {len(chunk.tasks)} tasks: "
              f"{pool.outcome.get(chunk.number, 'not started (stopped)')}")
    if stopped is not None:  # what ran is in the store; nothing is scored (a rerun with the same store resumes)
        print(f"stopped by {signal.Signals(stopped.signum).name} after {localized:.0f} s: the chunks above were "
              "stopped or not started; nothing was scored", flush=True)
        sys.exit(128 + stopped.signum)

    # the first job of each experiment creates it alone; the rest share the store
    firsts = {next(j for j in jobs if SETS[j[1]][0] == SETS[s][0]) for s in sets}
    codes = {job: score(store, *job, args.overrides) for job in jobs if job in firsts}
    with ThreadPoolExecutor(min(8, args.workers)) as executor:
        rest = [job for job in jobs if job not in firsts]
        codes.update(zip(rest, executor.map(lambda job: score(store, *job, args.overrides), rest)))
    for (arm, s), rc in codes.items():
        print(f"score {arm} {s}: rc {rc}")
    print(f"localized for {localized:.0f} s, {time.monotonic() - started:.0f} s in all")
    sys.exit(1 if any(codes.values()) else 0)


if __name__ == "__main__":
    main()
