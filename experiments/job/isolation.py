"""Localization in a process of its own, where only the task's text and the metered view exist.

The job's process holds the manifest, and so the gold; it never localizes. Each job starts one
worker (`python -m experiments.job.isolation`, a fresh interpreter: a fork would carry the gold along)
with an environment that names no data set, results, cache or `../shared` path, hands it the
locator's and System One's config once, then each task's text and the root of its subject. The
worker builds the view, localizes under the runtime audit (`experiments.job.audit`) and answers with
the result and its trace; the job saves them and only then loads gold and scores, as the SWE-bench
harness keeps predictions apart from evaluation.

The protocol is one JSON object a line: on the worker's stdin `setup`, then `task`s; on its stdout
`ready` (or `setup_failed`), then `done` or `failed` per task, in any order (tasks in flight at once
run in the worker's threads). Anything else the worker prints goes to its stderr, the job's.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
import traceback
import warnings
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.job.gc_tuning import tune_gc
from experiments.job.paths import PROJECT_ROOT

WORKER_MODULE = "experiments.job.isolation"
# variables a worker keeps although they start with LOCLAB_: they name an endpoint, a model or a
# thread count, never a path a locator could read
KEPT_LOCLAB_VARIABLES = frozenset({"LOCLAB_MODEL_THREADS", "LOCLAB_SYSTEM_ONE_URL", "LOCLAB_SYSTEM_ONE_MODEL",
                                   "LOCLAB_OPENAI_BASE_URL", "LOCLAB_OPENAI_MODEL", "LOCLAB_LLAMA_SERVER"})


class WorkerError(RuntimeError):
    """The localization worker could not start, or stopped."""


class LocalizationError(RuntimeError):
    """A task's localization failed in the worker with an error that has no type of its own here."""


class CodeOutsideAddressError(RuntimeError):
    """A task ran loclab code that its results' address does not bind: the result could be reused by
    code that would not make it."""


LOCLAB_PACKAGES = ("locator", "dataset", "metrics", "render", "experiments", "tests")


def loaded_loclab_modules() -> set[str]:
    """The modules of this checkout this process has loaded."""
    root = str(PROJECT_ROOT) + os.sep
    return {name for name, module in list(sys.modules.items())
            if name.split(".")[0] in LOCLAB_PACKAGES and (getattr(module, "__file__", None) or "").startswith(root)}


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker is told once: the config it builds the locator and System One from, the System One
    identity the job computed (the decision cache's key), the paths its audit guards and those the
    locator's own config names."""

    config: dict[str, Any]  # locator, system_one (or None), sampling: resolved
    system_one_identity: str | None
    backend: dict[str, Any] | None  # a backend to build instead of the configured one (a replay's snapshot)
    forbidden: list[str]
    allowed: list[str]
    concurrency: int
    outlines_dir: str | None
    modules: list[str]  # the loclab modules on the results' address: a task that runs any other fails closed


@dataclass(frozen=True)
class Localized:
    """A worker's answer: the result (no provenance yet: the job adds it) and the trace's lines."""

    result_json: str
    trace_text: str
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (category as module:qualname, message)


def subject_view(root: Path, frozen: bool, listing_dir: Path | None):
    """The view of a task's subject, built the same way in the job (gold placement, scoring) and in the
    worker (what the locator sees)."""
    from locator.repository import RepositoryView

    return RepositoryView(root, frozen=frozen, listing_dir=listing_dir)


def worker_env(forbidden: list[str], environ: dict[str, str] | None = None, secrets: list[str] = ()) -> dict[str, str]:
    """The environment of a localizing process: the job's, less every LOCLAB_ variable that is not an
    endpoint, model or thread count, MLflow's, and any variable whose value names a forbidden path.
    `secrets`: the variables System One's config names for its keys (`api_key_env`), which it reads there."""
    roots = [os.path.realpath(p) for p in forbidden]
    kept = {}
    for name, value in (os.environ if environ is None else environ).items():
        if name.startswith("LOCLAB_") and name not in KEPT_LOCLAB_VARIABLES and name not in secrets:
            continue
        if name.startswith("MLFLOW_"):
            continue
        if any(root in value for root in roots):
            continue
        kept[name] = value
    return kept


def _type_name(exc: BaseException) -> str:
    module = type(exc).__module__
    return f"{WORKER_MODULE if module == '__main__' else module}:{type(exc).__qualname__}"  # the worker runs as __main__


def rebuilt(type_name: str, message: str, worker_traceback: str | None = None) -> BaseException:
    """The worker's error as an exception of its own type here (a loclab input error stays one), or a
    LocalizationError naming it. The worker's traceback rides along for error.txt."""
    module, _, qualname = type_name.partition(":")
    exc: BaseException | None = None
    try:
        found: Any = __import__(module, fromlist=["_"])
        for part in qualname.split("."):
            found = getattr(found, part)
        if isinstance(found, type) and issubclass(found, Exception):
            exc = found(message)
    except Exception:  # noqa: BLE001 - a type that cannot be rebuilt is named instead
        exc = None
    if exc is None:
        exc = LocalizationError(f"{qualname or type_name}: {message}")
    exc.worker_traceback = worker_traceback  # type: ignore[attr-defined]
    return exc


class _Channel:
    """The worker's pipe and what waits on it. The thread that reads the pipe holds this, never the
    `LocalizationWorker`, so a job dropped without `close()` is collected and its worker stopped."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.lock = threading.Lock()
        self.pending: dict[int, Future] = {}
        self.ready: Future = Future()
        self.started = time.perf_counter()
        self.ready_s: float | None = None  # from start to ready (imports, locator and System One built)

    def send(self, message: dict) -> None:
        line = (json.dumps(message) + "\n").encode()
        with self.lock:
            try:
                self.process.stdin.write(line)
                self.process.stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise WorkerError(f"the localization worker stopped (exit {self.process.poll()})") from exc

    def read(self) -> None:
        for line in self.process.stdout:
            message = json.loads(line)
            kind = message["kind"]
            if kind == "ready":
                self.ready_s = time.perf_counter() - self.started
                self.ready.set_result(None)
            elif kind == "setup_failed":
                self.ready.set_exception(rebuilt(message["type"], message["message"], message["traceback"]))
            else:
                with self.lock:
                    future = self.pending.pop(message["id"])
                if kind == "done":
                    future.set_result(Localized(message["result"], message["trace"],
                                                [tuple(w) for w in message["warnings"]]))
                else:
                    future.set_exception(rebuilt(message["type"], message["message"], message.get("traceback")))
        code = self.process.wait()
        if not self.ready.done():
            self.ready.set_exception(WorkerError(f"the localization worker stopped (exit {code}) before it was ready"))
        with self.lock:
            pending, self.pending = self.pending, {}
        for future in pending.values():
            future.set_exception(WorkerError(f"the localization worker stopped (exit {code}) with tasks in flight"))


class LocalizationWorker:
    """The job's side of one worker. Spawned first (`env`: the job's environment less what names
    guarded data; the worker imports its machinery while the job builds itself), configured once
    (`configure`), asked from any thread, closed when the job ends (or when dropped, or with the process)."""

    def __init__(self, env: dict[str, str]):
        self._numbers = itertools.count()
        self.waited_s = 0.0  # what the job spent waiting for it to be ready
        # its working folder is the file system's root: nothing of the job's is relative to it
        process = subprocess.Popen([sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   env=env | {"PYTHONPATH": str(PROJECT_ROOT)}, cwd="/")
        self._channel = _Channel(process)
        threading.Thread(target=self._channel.read, name="localization-worker-reader", daemon=True).start()
        self._finalizer = weakref.finalize(self, _stop, process)

    def configure(self, setup: WorkerSetup) -> None:
        self._channel.send({"kind": "setup", **setup.__dict__})

    @property
    def pid(self) -> int:
        return self._channel.process.pid

    @property
    def ready_s(self) -> float | None:
        return self._channel.ready_s

    def wait_ready(self) -> None:
        started = time.perf_counter()
        try:
            self._channel.ready.result()
        finally:
            self.waited_s += time.perf_counter() - started

    def localize(self, task_json: str, root: Path, frozen: bool, listing_dir: Path | None, repeat: int) -> Localized:
        self.wait_ready()
        future: Future = Future()
        with self._channel.lock:
            number = next(self._numbers)
            self._channel.pending[number] = future
        self._channel.send({"kind": "task", "id": number, "task": task_json, "root": str(root), "frozen": frozen,
                            "listing_dir": None if listing_dir is None else str(listing_dir), "repeat": repeat})
        localized = future.result()
        for category, message in localized.warnings:  # as the locator warned them, in the job's process
            warnings.warn(message, _warning_category(category), stacklevel=2)
        return localized

    def close(self) -> None:
        self._finalizer()


STOP_GRACE_S = 30  # what a worker is given to finish the tasks in flight once its job closes it


def _stop(process: subprocess.Popen) -> None:
    """End of tasks: the worker finishes what is in flight and exits; the job does not wait for it
    (a thread reaps it, killing it after STOP_GRACE_S)."""
    try:
        if process.stdin and not process.stdin.closed:
            process.stdin.close()
    except OSError:
        pass

    def reap() -> None:
        try:
            process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    threading.Thread(target=reap, name="localization-worker-reaper", daemon=True).start()


def _warning_category(name: str) -> type[Warning]:
    found = rebuilt(name, "")
    return type(found) if isinstance(found, Warning) else UserWarning


# --- the worker's side --------------------------------------------------------------------------------


class _Worker:
    def __init__(self, setup: dict[str, Any]):
        from hydra.utils import instantiate
        from omegaconf import OmegaConf

        from experiments.job.audit import Audit, door_code
        from experiments.job.identity import BoundBackend
        from locator.outline import keep_on_disk
        from locator.system_one.cache import DecisionCache

        cfg = OmegaConf.create(setup["config"])
        self.cfg = cfg
        self.locator = instantiate(cfg.locator)
        check_inputs = getattr(self.locator, "check_inputs", None)
        if check_inputs is not None:
            check_inputs()  # what it reads of its own inputs, it reads now, before any task
        self.backend = None
        if setup["backend"] is not None:
            self.backend = instantiate(setup["backend"])
        elif cfg.system_one and getattr(self.locator, "uses_system_one", True):
            self.backend = BoundBackend(instantiate(cfg.system_one.backend), identity=setup["system_one_identity"])
        cache_cfg = cfg.system_one.cache if cfg.system_one else None
        self.cache = DecisionCache(cache_cfg.path) if cache_cfg and cache_cfg.enabled else None
        keep_on_disk(Path(setup["outlines_dir"]) if setup["outlines_dir"] else None)
        self.audit = Audit(setup["forbidden"], setup["allowed"], [*door_code(), _Worker._view.__code__])
        self.concurrency = setup["concurrency"]
        self.numbers = itertools.count()
        self.address = frozenset(setup["modules"])

    @staticmethod
    def _view(root: str, frozen: bool, listing_dir: str | None):
        """The task's view (its listing may lie in the cache): a door of the audit."""
        return subject_view(Path(root), frozen, Path(listing_dir) if listing_dir else None)

    def run(self, message: dict[str, Any]) -> dict[str, Any]:
        from experiments.job.audit import MeteringViolation
        from locator.runtime import localize
        from locator.system_one.client import Pricing, SystemOne
        from locator.system_one.sampling import Sampler
        from locator.task import Task
        from locator.trace import Trace

        task = Task.model_validate_json(message["task"])
        self.audit.forbid(message["root"])
        caught = _CaughtWarnings()
        with caught:
            repo = self._view(message["root"], message["frozen"], message["listing_dir"])
            trace = Trace()
            system_one = None
            if self.backend is not None:
                so, seed = self.cfg.system_one, self.cfg.sampling.seed
                system_one = SystemOne(self.backend, model=so.model, cache=self.cache, max_concurrency=so.max_concurrency,
                                       pricing=Pricing(**so.pricing) if so.get("pricing") else None,
                                       sampler=None if seed is None else Sampler(seed, message["repeat"]))
            with self.audit.localizing(next(self.numbers)) as violations:
                try:
                    result = localize(self.locator, task, repo, system_one, trace)
                except MeteringViolation:
                    result = None
                except BaseException:
                    if not violations:
                        raise
                    result = None
        if violations:
            raise MeteringViolation(f"task {task.id}: the locator reached past its metered context: "
                                    + "; ".join(dict.fromkeys(violations)))
        if self.cache is not None:
            self.cache.check_kept()  # a cache that lost what this job stored fails the task, named
        outside = sorted(loaded_loclab_modules() - self.address)
        if outside:
            raise CodeOutsideAddressError(f"task {task.id} ran loclab code its results' address does not bind: "
                                          f"{', '.join(outside)} (experiments.job.identity derives the address)")
        return {"kind": "done", "id": message["id"], "result": result.model_dump_json(), "trace": trace.text(),
                "warnings": caught.found}


def _preload() -> None:
    """The worker's own machinery, imported before its setup arrives (every module here is on the results'
    address: the production closure)."""
    import hydra.utils  # noqa: F401
    import omegaconf  # noqa: F401

    import experiments.job.audit  # noqa: F401
    import experiments.job.identity  # noqa: F401
    import locator.base  # noqa: F401
    import locator.outline  # noqa: F401
    import locator.repository  # noqa: F401
    import locator.runtime  # noqa: F401
    import locator.system_one.cache  # noqa: F401
    import locator.system_one.client  # noqa: F401
    import locator.system_one.sampling  # noqa: F401
    from locator.languages import REGISTERED

    for language in REGISTERED:  # the grammar wheels' tags queries: read and compiled before any task's audit
        for suffix in language.suffixes:
            language.query_for(f"file{suffix}")


_CAPTURE = threading.local()


class _CaughtWarnings:
    """The warnings a task's thread raises, sent back with its answer and raised again in the job
    (its filters decide what shows); a thread the locator started itself warns on stderr."""

    def __enter__(self):
        self.found: list[list[str]] = []
        _CAPTURE.found = self.found
        return self

    def __exit__(self, *exc) -> None:
        _CAPTURE.found = None


def _show(message, category, filename, lineno, file=None, line=None) -> None:
    found = getattr(_CAPTURE, "found", None)
    if found is None:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
        return
    found.append([f"{category.__module__}:{category.__qualname__}", str(message)])


def main() -> None:
    protocol = os.fdopen(os.dup(1), "wb")  # the answers; stdout itself goes to stderr, so a print never corrupts them
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    write_lock = threading.Lock()

    def send(message: dict) -> None:
        line = (json.dumps(message) + "\n").encode()
        with write_lock:
            protocol.write(line)
            protocol.flush()

    def failure(kind: str, exc: BaseException, **more) -> dict:
        return {"kind": kind, "type": _type_name(exc), "message": str(exc), "traceback": traceback.format_exc(), **more}

    job = os.getppid()

    def orphaned() -> None:  # a job ended by a signal leaves no worker computing for nobody
        while os.getppid() == job:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=orphaned, name="job-watch", daemon=True).start()
    warnings.simplefilter("always")  # every warning goes back; the job's filters decide what shows
    warnings.showwarning = _show
    _preload()  # while the job builds itself and sends the setup
    line = sys.stdin.buffer.readline()
    if not line:  # the job ended before it configured its worker
        return
    setup = json.loads(line)
    try:
        worker = _Worker(setup)
    except Exception as exc:  # noqa: BLE001 - the job raises it as its own
        send(failure("setup_failed", exc))
        protocol.close()
        return
    worker.audit.install()
    tune_gc()  # as the job does: its machinery frozen out of scans, collections rare over the memos' heap
    send({"kind": "ready"})

    def one(message: dict) -> None:
        try:
            send(worker.run(message))
        except BaseException as exc:  # noqa: BLE001 - the task fails, the worker goes on
            send(failure("failed", exc, id=message["id"]))

    with protocol, ThreadPoolExecutor(max_workers=worker.concurrency, thread_name_prefix="localize") as pool:
        for line in sys.stdin.buffer:
            pool.submit(one, json.loads(line))


if __name__ == "__main__":
    main()
