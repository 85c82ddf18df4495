"""From a task's subject to its saved result: materialize, build the view, localize (idempotent).

Everything that can change what a locator sees or returns lives here or is imported from here, so
this module's import closure is on every result's address (`experiments.identity`); rendering and
scoring (`experiments.pipeline`) are not, and re-run on saved results.
"""

from __future__ import annotations

import warnings
from functools import cached_property
from pathlib import Path

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from pydantic import ValidationError

from dataset.gold import check_gold, place_gold
from dataset.manifest import Gold, Manifest, ManifestRow
from dataset.subjects import SubjectStore, source_reader
from experiments.identity import bound_backend, code_identity, targets
from locator.base import Locator
from locator.hashing import blake3_hex, canonical_json
from locator.outline import keep_on_disk as keep_outlines_on_disk
from locator.repository import PathOutsideSubjectError, RepositoryView, UnknownFileError
from locator.result import CodeIdentity, LocalizationResult, Provenance
from locator.runtime import localize
from locator.system_one.backend import Backend
from locator.system_one.cache import DecisionCache
from locator.system_one.client import Pricing, SystemOne
from locator.system_one.sampling import Sampler
from locator.trace import Trace, read_trace

RESULT_FILE = "localization-result.json"
TRACE_FILE = "trace.jsonl"


class NoSavedResultError(FileNotFoundError):
    pass


class StaleResultError(ValueError):
    """A saved result whose provenance does not match the address it was found at."""


class Producer:
    """What a job builds once from its config to turn subjects into results."""

    def __init__(self, cfg: DictConfig, manifest: Manifest, locator_name: str, backend: Backend | None = None):
        """`backend`: System One to use instead of the configured one (a replay's decision snapshot,
        whose identity is the recorded one)."""
        self.cfg = cfg
        self.manifest = manifest
        self.locator_name = locator_name
        self.locator: Locator = instantiate(cfg.locator)
        check_inputs = getattr(self.locator, "check_inputs", None)
        if check_inputs is not None:
            check_inputs()  # a bad input fails the job before any subject is fetched
        self.backend: Backend | None = backend or bound_backend(
            instantiate(cfg.system_one.backend) if cfg.system_one else None)
        cache_cfg = cfg.system_one.cache if cfg.system_one else None
        self.cache = DecisionCache(cache_cfg.path) if cache_cfg and cache_cfg.enabled else None
        self.store = SubjectStore(cfg.paths.cache_dir, Path(manifest.source).parent)
        keep_outlines_on_disk(Path(cfg.paths.cache_dir) / "outlines")  # every job parses the same files

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

    def view(self, row: ManifestRow) -> tuple[RepositoryView, Gold]:
        """The task's subject, materialized and verified, as the read-only view a locator gets, and
        its gold as it lies in that subject (hunks placed where their text is, every span inside its
        file; never shown to the locator), so gold that does not fit fails the task closed."""
        repo = RepositoryView(self.store.materialize(row.subject, what=row.task.id),
                              frozen=self.store.frozen(row.subject),
                              listing_dir=self.store.derived_dir(row.subject))
        gold, notes = place_gold(row.gold, source_reader(repo.root), what=row.task.id)
        for note in notes:
            warnings.warn(note, stacklevel=2)
        check_gold(gold, _line_count_in(repo), what=row.task.id)
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
        trace = Trace()
        system_one = None
        if self.backend is not None:
            so = self.cfg.system_one
            seed = self.sampling_seed
            system_one = SystemOne(self.backend, model=so.model, cache=self.cache, max_concurrency=so.max_concurrency,
                                   pricing=Pricing(**so.pricing) if so.get("pricing") else None,
                                   sampler=None if seed is None else Sampler(seed, repeat))
        result = localize(self.locator, row.task, repo, system_one, trace)
        result = result.model_copy(update={"provenance": self.provenance()})
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "error.txt").unlink(missing_ok=True)
        trace.write(out_dir / TRACE_FILE)
        result.write(out_dir / RESULT_FILE)
        return result


def _readable(path: Path) -> bool:
    try:
        LocalizationResult.read(path)
    except (ValidationError, ValueError, OSError):
        return False
    return True


def job_code(cfg: DictConfig, uses_system_one: bool) -> CodeIdentity:
    """The code on a job's path: production, the modules its locator config names and, when the
    locator asks System One, the backend's."""
    roots = targets(cfg.locator)
    if uses_system_one and cfg.get("system_one"):
        roots += targets(cfg.system_one.backend)
    return code_identity(tuple(sorted(set(roots))))


def _line_count_in(repo: RepositoryView):
    def line_count(path: str) -> int | None:
        try:
            return repo.stat(path).line_count
        except (UnknownFileError, PathOutsideSubjectError):
            return None

    return line_count
