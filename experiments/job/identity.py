"""The identity of everything that makes a result, and of everything that makes a decision.

A result's content address includes the **source of every loclab module on its path** — the
import closure of the module that turns a subject into a result (`experiments.job.production`: the
materializers, the view and its listing, the context, the runtime) and of every module a job's
config names as a `_target_` (the locator and its components, the System One backend) — and the
**installed distributions those modules import**, with the distributions they require: each one's
version and a digest of everything it installed (Python source, compiled extensions, data: by
content), so an upgraded or edited PyStemmer, numpy, tree-sitter grammar or embedding stack never reuses
an old result. Code off that path (metrics, rendering, analysis, README, tests) is not in it:
rescoring a saved result with changed metrics is what saved results are for.

A module that loads model files declares them with a module-level `weight_files()`; every
result and decision with that module on its path binds each file's BLAKE3.

A System One backend's identity (the decision cache's key, `bound_backend`) is completed the same
way with its own module closure, its distributions and its weights, so changed backend code never
answers from old decisions.

The closure is static (every `import` anywhere in a module's source, functions included); a test
runs every configured locator and checks that each loclab module it loaded is inside it.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import importlib.metadata as metadata
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import blake3
from omegaconf import DictConfig, OmegaConf
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from experiments.job.paths import PROJECT_ROOT, default_cache_dir, git_revision
from locator.files import write_atomically
from locator.hashing import blake3_file
from locator.result import CodeIdentity, Dependency, WeightFile
from locator.system_one.backend import Backend

# The module that turns a subject into a result; everything it imports is on every result's path.
PRODUCTION_ROOT = "experiments.job.production"
LOCLAB_DISTRIBUTION = "loclab"
WEIGHTS_FUNCTION = "weight_files"  # a module that loads model files names them with this function


def _project_file(module: str) -> Path | None:
    """The source file of a module of this checkout (a folder of PROJECT_ROOT with an `__init__.py`)."""
    parts = module.split(".")
    if not (PROJECT_ROOT / parts[0] / "__init__.py").is_file():
        return None
    base = PROJECT_ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def _imports(module: str) -> tuple[frozenset[str], frozenset[str]]:
    """(loclab modules, other top-level names) that `module` imports anywhere in its source. Importing
    `a.b.c` runs `a` and `a.b` too, so parent packages are included."""
    path = _project_file(module)
    if path is None:
        return frozenset(), frozenset()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            named.add(origin)
            named.update(f"{origin}.{alias.name}" for alias in node.names)  # `from pkg import module`
    ours: set[str] = set()
    others: set[str] = set()
    for name in named:
        parts = name.split(".")
        if _project_file(parts[0]) is None:
            if parts[0] and parts[0] not in sys.stdlib_module_names:
                others.add(parts[0])
            continue
        ours.update(prefix for prefix in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                    if _project_file(prefix) is not None)
    ours.discard(module)
    return frozenset(ours), frozenset(others)


def module_closure(roots: Iterable[str]) -> tuple[tuple[str, ...], frozenset[str]]:
    """Every loclab module the roots import, transitively (sorted), and the other top-level names
    those modules import."""
    seen: set[str] = set()
    others: set[str] = set()
    parts = [r.split(".") for r in roots]  # importing a.b.c runs a and a.b too
    todo = [p for p in {".".join(r[:i]) for r in parts for i in range(1, len(r) + 1)} if _project_file(p) is not None]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        ours, theirs = _imports(module)
        others |= theirs
        todo.extend(ours - seen)
    return tuple(sorted(seen)), frozenset(others)


def source_digest(modules: Iterable[str]) -> str:
    digest = blake3.blake3()
    for module in sorted(modules):
        path = _project_file(module)
        digest.update(module.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _distributions_by_import() -> dict[str, tuple[str, ...]]:
    return {name: tuple(dists) for name, dists in metadata.packages_distributions().items()}


def _requirements(dist: metadata.Distribution) -> list[str]:
    """The distributions `dist` requires unconditionally on this interpreter (no extras)."""
    names = []
    for line in dist.requires or ():
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            names.append(requirement.name)
    return names


@cache
def _dependency(name: str) -> Dependency | None:
    """One installed distribution: its version and a digest of what it installed — the content of
    every file, Python source and compiled extensions and data alike (an extension edited in place
    keeps its name and size). The content digest of a file that is not Python source is kept by
    `FileDigests`, so a job pays it once per install."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    digest = blake3.blake3()
    digests = file_digests()
    for file in sorted(dist.files or (), key=str):
        located = Path(str(dist.locate_file(file)))
        try:
            content = located.read_bytes() if file.suffix == ".py" else digests.of(located).encode()
        except OSError:
            content = b"<missing>"
        digest.update(str(file).encode() + b"\0" + content + b"\0")
    digests.save()
    return Dependency(name=canonicalize_name(dist.metadata["Name"]), version=dist.version,
                      installed_blake3=digest.hexdigest())


class FileDigests:
    """Content digests (BLAKE3) of installed files, kept between processes by what identifies a file's
    content without reading it: path, size, modification and change times (ns) and inode. A file
    rewritten in place changes its ctime even when its mtime is set back; one replaced changes its
    inode: either is read again."""

    SCHEMA_VERSION = 1  # files: {path: [size, mtime_ns, ctime_ns, inode, blake3]}

    def __init__(self, path: Path):
        self.path = path
        self._changed = False
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            self._known: dict[str, list] = saved["files"] if saved.get("schema_version") == self.SCHEMA_VERSION else {}
        except (OSError, ValueError, KeyError, TypeError):
            self._known = {}
        self.read_bytes = 0  # what this process hashed (benchmarks/startup.py: cold against warm)

    def of(self, path: Path) -> str:
        stat = path.stat()
        key = [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]
        known = self._known.get(str(path))
        if known is not None and known[:4] == key:
            return known[4]
        value = blake3_file(path)
        self.read_bytes += stat.st_size
        self._known[str(path)] = [*key, value]
        self._changed = True
        return value

    def save(self) -> None:
        if not self._changed:
            return
        try:
            write_atomically(self.path, json.dumps({"schema_version": self.SCHEMA_VERSION, "files": self._known}))
            self._changed = False
        except OSError:  # a read-only cache: the digests are still right, only paid again next time
            pass


@cache
def file_digests() -> FileDigests:
    """This process's digests of installed files, kept under the loclab cache (LOCLAB_CACHE_DIR)."""
    base = Path(os.environ.get("LOCLAB_CACHE_DIR") or default_cache_dir())
    return FileDigests(base / "identity" / f"installed-files-{sys.implementation.cache_tag}.json")


def dependencies(import_names: Iterable[str], extra: Iterable[str] = ()) -> list[Dependency]:
    """The distributions that provide `import_names`, with every distribution they require,
    transitively, and the `extra` distributions themselves (loclab's own install: its version, not
    its requirements — those on a result's path are found by what its modules import); by name."""
    by_import = _distributions_by_import()
    todo = [dist for name in import_names for dist in by_import.get(name, ())]
    found: dict[str, Dependency] = {}
    for name in extra:
        dependency = _dependency(name)
        if dependency is not None:
            found[dependency.name] = dependency
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        dependency = _dependency(name)
        if dependency is None:
            continue
        found[name] = dependency
        todo.extend(_requirements(metadata.distribution(name)))
    return [found[name] for name in sorted(found)]


def _declares_weights(module: str) -> bool:
    path = _project_file(module)
    return any(isinstance(node, ast.FunctionDef) and node.name == WEIGHTS_FUNCTION
               for node in ast.parse(path.read_bytes()).body)


def weights(modules: Iterable[str]) -> list[WeightFile]:
    """The model files loaded by the modules that declare them (a module-level `weight_files()`).
    A module whose weights are not installed contributes none: using it fails the job, naming the
    extra to install, before any result exists."""
    found: dict[str, WeightFile] = {}
    for module in modules:
        if not _declares_weights(module):
            continue
        try:
            paths = getattr(importlib.import_module(module), WEIGHTS_FUNCTION)()
        except (ImportError, RuntimeError):
            continue
        for path in paths:
            found[path] = WeightFile(file=_display_path(path), blake3=_file_digest(path))
    return [found[p] for p in sorted(found)]


def _display_path(path: str) -> str:
    """A weight file named from its site-packages (or project) folder, not this machine's layout."""
    resolved = Path(path).resolve()
    for base in (Path(sysconfig.get_paths()["purelib"]), Path(sysconfig.get_paths()["platlib"]), PROJECT_ROOT):
        try:
            return resolved.relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return resolved.as_posix()


@lru_cache(maxsize=256)
def _file_digest(path: str) -> str:
    return blake3_file(path)


def _packages_dirty(paths: list[str]) -> bool:
    """Whether these files differ from the checked-out revision (untracked files included)."""
    try:
        status = subprocess.run(["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--", *paths],
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return True  # no git: nothing proves the source matches a revision
    return bool(status.strip())


@lru_cache(maxsize=32)
def code_identity(roots: tuple[str, ...], with_production: bool = True) -> CodeIdentity:
    """The loclab modules on the path of `roots` (with `experiments.job.production` unless a backend's
    own code is asked for), the distributions they import (and loclab's own install), the model
    files they load, the interpreter and the git revision."""
    modules, others = module_closure((PRODUCTION_ROOT, *roots) if with_production else roots)
    files = [str(path.relative_to(PROJECT_ROOT)) for path in map(_project_file, modules)
             if path.is_relative_to(PROJECT_ROOT)]
    return CodeIdentity(source_blake3=source_digest(modules), modules=list(modules),
                        dependencies=dependencies(others, extra=(LOCLAB_DISTRIBUTION,) if with_production else ()),
                        weights=weights(modules), python=f"{sys.implementation.name}-{sys.version.split()[0]}",
                        git_revision=git_revision().removesuffix("-dirty"), dirty=_packages_dirty(files))


def targets(node: Any) -> list[str]:
    """The modules of every `_target_` in a config subtree (a class path's module, or a function's)."""
    if isinstance(node, DictConfig):
        node = OmegaConf.to_container(node, resolve=False)
    found: list[str] = []
    if isinstance(node, dict):
        target = node.get("_target_")
        if isinstance(target, str):
            found.append(target.rpartition(".")[0])
        for value in node.values():
            found.extend(targets(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(targets(value))
    return found


class BoundBackend:
    """A System One backend whose identity names, beside its own parameters, the code that answers:
    its module closure, the distributions it imports and the model files it loads. It is the
    decision cache's key, so an answer is only ever reused by the code that gave it."""

    def __init__(self, backend: Backend, identity: str | None = None):
        """`identity`: the one the job computed for this backend (a localization worker answers under
        the job's identity instead of asking its endpoint again)."""
        self.backend = backend
        if identity is not None:
            self._identity = identity
            return
        preflight = getattr(backend, "preflight", None)  # what it needs installed: said before any task runs
        if preflight is not None:
            preflight()
        self._identity = f"{backend.identity}|code={backend_code(type(backend).__module__)[:16]}"
        served = getattr(backend, "served_identity", None)  # a remote endpoint: what answers there
        if served is not None:
            self._identity += f"|served={served() or 'unknown'}"

    @property
    def identity(self) -> str:
        return self._identity

    def answer(self, request):
        return self.backend.answer(request)

    def __getattr__(self, name: str):  # close(), embed(), … of the wrapped backend
        if name == "backend":  # not set yet (unpickling): never recurse
            raise AttributeError(name)
        return getattr(self.backend, name)


def backend_code(module: str) -> str:
    """Digest of a backend module's closure, the distributions it imports and its weights."""
    return code_identity((module,), with_production=False).digest


def bound_backend(backend: Backend | None) -> Backend | None:
    return None if backend is None or isinstance(backend, BoundBackend) else BoundBackend(backend)
