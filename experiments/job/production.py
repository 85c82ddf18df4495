"""From a task's id to its saved result: materialize, build the view, localize (idempotent).

Everything that can change what a locator sees or returns lives here or is imported from here, so
this module's import closure, with the data set's loader, is on every result's address
(`experiments.job.identity`). The task a locator is given flows from the loader to the localization
worker (`experiments.job.isolation`) only through this module: its callers name a task by its id, and
the manifest it holds is a sealed copy, checked against its content hash, so code off the address
(the runner, rendering, scoring, which re-run on saved results) cannot change what is localized.
"""

from __future__ import annotations

import os
import threading
import warnings
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from pydantic import ValidationError

from dataset.gold import check_gold, place_gold
from dataset.manifest import Gold, Manifest, ManifestRow, rows_hash
from dataset.subjects import SubjectStore, source_reader
from experiments.job.identity import bound_backend, code_identity, module_closure, targets
from experiments.job.isolation import LocalizationWorker, WorkerSetup, subject_view, worker_env
from experiments.job.paths import PROJECT_ROOT
from locator.base import Locator
from locator.hashing import blake3_hex, canonical_json
from locator.outline import keep_on_disk as keep_outlines_on_disk
from locator.repository import PathOutsideSubjectError, RepositoryView, UnknownFileError
from locator.files import write_atomically
from locator.result import CodeIdentity, LocalizationResult, Provenance
from locator.system_one.backend import Backend
from locator.trace import read_trace

RESULT_FILE = "localization-result.json"
TRACE_FILE = "trace.jsonl"


class NoSavedResultError(FileNotFoundError):
    pass


class StaleResultError(ValueError):
    """A saved result whose provenance does not match the address it was found at."""


class ManifestChangedError(ValueError):
    """A manifest whose rows no longer match the content hash it was loaded with."""


@dataclass(frozen=True)
class Produced:
    """A task's result as the job has it, and what scoring needs beside it: the subject's view (for
    the job's process: the locator never had it) and the gold placed in that subject."""

    row: ManifestRow
    repo: RepositoryView
    gold: Gold
    result: LocalizationResult
    reused: bool


def sealed(manifest: Manifest) -> Manifest:
    """A copy of the manifest that no caller holds, its rows checked against its content hash."""
    if rows_hash(manifest.rows) != manifest.content_hash:
        raise ManifestChangedError(f"{manifest.source}: the manifest's rows were changed after it was loaded "
                                   "(they no longer match its content hash)")
    return manifest.model_copy(deep=True)


class Producer:
    """What a job builds once from its config to turn subjects into results."""

    def __init__(self, cfg: DictConfig, manifest: Manifest, locator_name: str, backend: Backend | None = None):
        """`backend`: System One to use instead of the configured one (a replay's decision snapshot,
        whose identity is the recorded one, built in the worker from its `spec()`)."""
        self.cfg = cfg
        self.manifest = sealed(manifest)
        self._rows = {row.task.id: row for row in self.manifest.rows}
        self.locator_name = locator_name
        self.locator: Locator = instantiate(cfg.locator)
        check_inputs = getattr(self.locator, "check_inputs", None)
        if check_inputs is not None:
            check_inputs()  # a bad input fails the job before any subject is fetched
        self._backend_spec = backend.spec() if backend is not None and hasattr(backend, "spec") else None
        if backend is not None and self._backend_spec is None:
            raise ValueError("a System One backend given to a job must say how its worker builds it (spec())")
        # a locator that asks no System One has none built: its code would run off the results' address
        self.backend: Backend | None = backend or bound_backend(
            instantiate(cfg.system_one.backend) if cfg.system_one and self.uses_system_one else None)
        self.store = SubjectStore(cfg.paths.cache_dir, Path(manifest.source).parent)
        self.outlines_dir = Path(cfg.paths.cache_dir) / "outlines"
        keep_outlines_on_disk(self.outlines_dir)  # every job parses the same files
        self._worker: LocalizationWorker | None = None
        self._worker_lock = threading.Lock()

    @property
    def sampling_seed(self) -> int | None:
        seed = self.cfg.sampling.seed
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"sampling.seed must be null (answers as given) or an integer seed, got {seed!r}")
        return seed

    @property
    def system_one_identity(self) -> str:
        if self.backend is None:
            return "none"
        seed = self.sampling_seed
        return self.backend.identity + ("" if seed is None else f"|sampled(seed={seed})")

    @property
    def uses_system_one(self) -> bool:
        return getattr(self.locator, "uses_system_one", True)

    @cached_property
    def code(self) -> CodeIdentity:
        return job_code(self.cfg, self.uses_system_one)

    @cached_property
    def run_key(self) -> str:
        """Content address of the results: the locator's config, the code on its path with its
        dependencies (`code.digest`), its inputs' identity (e.g. the hash of an imported file), and
        the System One identity when the locator asks System One. Computed once per job."""
        key = {"locator": OmegaConf.to_container(self.cfg.locator, resolve=True),
               "code": self.code.digest,
               "inputs": getattr(self.locator, "input_identity", None)}
        if self.uses_system_one:
            key["system_one"] = self.system_one_identity
        return f"{self.locator_name}-{blake3_hex(canonical_json(key))[:12]}"

    def provenance(self) -> Provenance:
        return Provenance(code=self.code, run_key=self.run_key,
                          system_one=self.system_one_identity if self.uses_system_one else None)

    @property
    def results_dir(self) -> Path:
        dataset_dir = f"{self.manifest.header.name}-{self.manifest.content_hash[:12]}"
        return Path(self.cfg.paths.results_dir) / dataset_dir / self.run_key

    def result_dir(self, task_id: str, repeat: int) -> Path:
        """Where a task's result, trace and error lie at this address."""
        return self.results_dir / task_id / f"r{repeat}"

    def row(self, task_id: str) -> ManifestRow:
        try:
            return self._rows[task_id]
        except KeyError:
            raise KeyError(f"{self.manifest.source}: no task {task_id!r} in the manifest") from None

    def worker_setup(self) -> WorkerSetup:
        """What the localization worker is told: the config it builds from, resolved, and the paths its
        audit guards (caches, results, the data set's files, `../shared`) and those the locator's
        config names as its own inputs."""
        cfg = self.cfg
        config = {"locator": OmegaConf.to_container(cfg.locator, resolve=True),
                  "system_one": OmegaConf.to_container(cfg.system_one, resolve=True) if cfg.system_one else None,
                  "sampling": OmegaConf.to_container(cfg.sampling, resolve=True)}
        # the job's own process too: its memory holds the gold (/proc/<pid>/mem, environ, …)
        forbidden = [*guarded_paths(cfg), str(Path(self.manifest.source).parent), f"/proc/{os.getpid()}"]
        return WorkerSetup(config=config, system_one_identity=self.system_one_identity if self.backend else None,
                           backend=self._backend_spec, forbidden=sorted(set(forbidden)),
                           allowed=sorted(_absolute_paths(config["locator"])),
                           concurrency=int(cfg.concurrency.tasks), outlines_dir=str(self.outlines_dir),
                           modules=sorted({*self.code.modules, *self._backend_modules()}))

    def _backend_modules(self) -> tuple[str, ...]:
        """A backend given instead of the configured one (a replay's snapshot) runs its own code, bound
        by the recorded System One identity, not by the results' address: the worker may load it."""
        if self._backend_spec is None:
            return ()
        return module_closure(targets(self._backend_spec))[0]

    def start_worker(self, spawned: LocalizationWorker | None = None) -> LocalizationWorker:
        """The job's localization worker, configured once: `spawned` (by `spawn_worker`, before the job
        was built, so its imports overlapped the job's own setup), else a new one."""
        with self._worker_lock:
            if self._worker is None:
                self._worker = spawned or spawn_worker(self.cfg)
                self._worker.configure(self.worker_setup())
            elif spawned is not None and spawned is not self._worker:
                spawned.close()
            return self._worker

    def worker_seconds(self) -> dict[str, float]:
        """The isolation's cost: the worker's start (spawn to ready: imports, locator and System One
        built; it overlaps the job's own setup) and what the job waited for it."""
        worker = self._worker
        if worker is None or worker.ready_s is None:
            return {}
        return {"worker_ready_s": worker.ready_s, "worker_wait_s": worker.waited_s}

    def close(self) -> None:
        with self._worker_lock:
            if self._worker is not None:
                self._worker.close()
                self._worker = None

    def produce(self, task_id: str, repeat: int, localize_missing: bool, clock=None) -> Produced:
        """The task's subject and gold, and its result: the saved one at this address, else (when
        `localize_missing`) a new one from the worker, saved. `clock(stage)` times the steps."""
        clock = clock or _no_clock
        row = self.row(task_id)
        out_dir = self.result_dir(task_id, repeat)
        result_path = out_dir / RESULT_FILE
        with clock("subject"):
            repo, gold = self.view(row)
        saved = self.saved(result_path, localize_missing)
        reused = saved is not None
        if saved is not None:
            result = saved
        elif localize_missing:
            with clock("localize"):
                result = self.localize(row, repo, out_dir, repeat)
        else:
            raise NoSavedResultError(f"{row.task.id}: no saved result at {result_path}; run experiments.run first")
        if result.task != row.task.id or result.subject != row.task.subject:
            raise ValueError(f"{result_path}: result is for {result.task}@{result.subject}, not {row.task.id}")
        return Produced(row, repo, gold, result, reused)

    def view(self, row: ManifestRow) -> tuple[RepositoryView, Gold]:
        """The task's subject, materialized and verified, as the read-only view a locator gets, and
        its gold as it lies in that subject (hunks placed where their text is, every span inside its
        file; never shown to the locator), so gold that does not fit fails the task closed."""
        repo = subject_view(self.store.materialize(row.subject, what=row.task.id), frozen=self.store.frozen(row.subject),
                            listing_dir=self.store.derived_dir(row.subject))
        gold, notes = place_gold(row.gold, source_reader(repo.root), what=row.task.id)
        for note in notes:
            warnings.warn(note, stacklevel=2)
        check_gold(gold, line_count_in(repo), what=row.task.id)
        return repo, gold

    def saved(self, path: Path, localize_missing: bool) -> LocalizationResult | None:
        """The result saved at this address, if it may be reused. An unreadable one is rebuilt
        (with a warning) when localizing, and an error naming the file when only scoring."""
        if not path.is_file() or (self.cfg.force and localize_missing):
            return None
        trace = path.parent / TRACE_FILE
        try:
            result = LocalizationResult.read(path)
            if trace.is_file():  # the trace beside it is part of the result (its decisions, the MLflow trace)
                read_trace(trace)
        except (ValidationError, ValueError, OSError) as exc:
            broken = trace if isinstance(exc, (ValidationError, ValueError)) and _readable(path) else path
            if not localize_missing:
                raise StaleResultError(f"{broken}: saved result is unreadable ({type(exc).__name__}); "
                                       "rebuild it with experiments.run force=true") from None
            warnings.warn(f"{broken}: saved result is unreadable ({type(exc).__name__}); localizing again", stacklevel=2)
            return None
        if result.provenance is None or result.provenance.run_key != self.run_key:
            found = result.provenance.run_key if result.provenance else "none"
            raise StaleResultError(f"{path}: saved result was produced for address {found}, not {self.run_key}; "
                                   "it was moved or copied — delete it or run with force=true")
        return result

    def localize(self, row: ManifestRow, repo: RepositoryView, out_dir: Path, repeat: int = 0) -> LocalizationResult:
        """The task localized in the job's worker, which gets its text and its subject's root, never
        its gold; the result and its trace saved here, with their provenance."""
        localized = self.start_worker().localize(row.task.model_dump_json(), repo.root, self.store.frozen(row.subject),
                                                 self.store.derived_dir(row.subject), repeat)
        result = LocalizationResult.model_validate_json(localized.result_json)
        result = result.model_copy(update={"provenance": self.provenance()})
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "error.txt").unlink(missing_ok=True)
        write_atomically(out_dir / TRACE_FILE, localized.trace_text)
        result.write(out_dir / RESULT_FILE)
        return result


def _readable(path: Path) -> bool:
    try:
        LocalizationResult.read(path)
    except (ValidationError, ValueError, OSError):
        return False
    return True


def job_code(cfg: DictConfig, uses_system_one: bool) -> CodeIdentity:
    """The code on a job's path: production (with the localization worker), the data set's loader,
    the modules its locator config names and, when the locator asks System One, the backend's."""
    roots = targets(cfg.locator) + targets(cfg.dataset.loader)
    if uses_system_one and cfg.get("system_one"):
        roots += targets(cfg.system_one.backend)
    return code_identity(tuple(sorted(set(roots))))


def line_count_in(repo: RepositoryView):
    def line_count(path: str) -> int | None:
        try:
            return repo.stat(path).line_count
        except (UnknownFileError, PathOutsideSubjectError):
            return None

    return line_count


def guarded_paths(cfg: DictConfig) -> list[str]:
    """What a localizing process may not reach, known from the config alone: caches, results, the data
    set's files (every absolute path its loader names: a folder itself, a file with the folder it lies
    in — a mirrors folder's parent may hold the checkout), the tracking store's files, `../shared`, the
    checkout's runs and the configured runs folder, and the data the environment names."""
    data = [Path(p) if os.path.isdir(p) else Path(p).parent
            for p in _absolute_paths(OmegaConf.to_container(cfg.dataset.loader, resolve=True))]
    tracking = _absolute_paths(OmegaConf.to_container(cfg.tracking, resolve=True))  # the store's own files
    found = [cfg.paths.cache_dir, cfg.paths.results_dir, *data, *tracking, *shared_dirs(), PROJECT_ROOT / "runs",
             cfg.paths.runs_dir,
             *(value for name, value in os.environ.items() if name in DATA_VARIABLES and os.path.isabs(value))]
    return sorted({str(p) for p in found})


def spawn_worker(cfg: DictConfig) -> LocalizationWorker:
    """A localization worker for a job of this config, spawned before the job is built: its environment
    names nothing `guarded_paths` guards, but the variables System One reads its keys from."""
    system_one = OmegaConf.to_container(cfg.system_one, resolve=True) if cfg.system_one else None
    return LocalizationWorker(worker_env(guarded_paths(cfg), secrets=sorted(_key_variables(system_one))))


def _no_clock(stage: str):
    return nullcontext()


def _leaves(node, key: str | None = None):
    """(key, value) of every scalar in a resolved config."""
    if isinstance(node, dict):
        for name, value in node.items():
            yield from _leaves(value, str(name))
    elif isinstance(node, list):
        for value in node:
            yield from _leaves(value, key)
    else:
        yield key, node


def _key_variables(node) -> set[str]:
    """The environment variables a config names for its keys (`api_key_env`)."""
    return {value for key, value in _leaves(node) if key == "api_key_env" and isinstance(value, str)}


def _absolute_paths(node) -> set[str]:
    """Absolute paths among a config's string values."""
    return {value for _, value in _leaves(node) if isinstance(value, str) and os.path.isabs(value)}


# environment variables that name data a locator must not read (data sets, mirrors, peers' outputs)
DATA_VARIABLES = ("LOCLAB_SWEBENCH_LITE", "LOCLAB_SWEBENCH_ROWS", "LOCLAB_GIT_MIRRORS", "LOCLAB_LOCAGENT_OUTPUTS",
                  "LOCLAB_MULTI_SWE_BENCH",
                  "LOCLAB_SHARED_DIR", "LOCLAB_CACHE_DIR", "LOCLAB_RESULTS_DIR", "LOCLAB_MLFLOW_DB",
                  "LOCLAB_MLFLOW_ARTIFACTS")


def shared_dirs() -> list[Path]:
    """`../shared` (the data, the seeds, the peers' outputs), where it is."""
    found = [PROJECT_ROOT.parent / "shared"]
    if os.environ.get("LOCLAB_SHARED_DIR"):
        found.append(Path(os.environ["LOCLAB_SHARED_DIR"]))
    return found
