"""Every line a locator sees goes through its metered, traced context, and it has no other way in.

Two audits. At run time, Python's audit hooks watch every file access of the process while a
locator runs: opening a file of the subject (`open`, `io.open`, `os.open`, `Path.read_*`), listing
its folders, mapping one into memory, or starting any subprocess, outside the context's own door
(`read`, `outline`, `search`, `index_read`, and the metadata `stat` / `candidate_files`), is a
violation. Statically, no module under `locator/` outside the door reaches for private attributes
of other objects (`ctx._…`, a view's line cache), introspects closures, or imports file-access
modules: the context keeps the view only inside its methods' closures, so nothing else holds it.
The lines the trace records as read, and as read for an index, must add up to the cost reported.
"""

from __future__ import annotations

import ast
import inspect
import mmap
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from experiments.config import build
from locator.base import Locator, LocatorContext, LocatorOutput
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.trace import EventKind, Trace
from tests.configs import backend
from tests.conftest import write_tree
from tests.locator.configured import SOURCE, TASK, TREE, configured_locators, system_one_for, unaudited

LOCATOR_DIR = Path(__file__).resolve().parents[2] / "locator"


class _Watch:
    """What the process-wide audit hook looks for: the subject root under audit (while a locator
    runs), and per thread whether a metered door method is on the stack."""

    def __init__(self) -> None:
        self.root: Path | None = None
        self.door = threading.local()
        self.violations: list[str] = []
        self.busy = threading.local()


WATCH = _Watch()
_SPAWNS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn")


def _inside(path) -> bool:
    if isinstance(path, int) or path is None:
        return False
    try:
        resolved = Path(os.fsdecode(path)).resolve()
    except (TypeError, ValueError, OSError):
        return False
    return resolved == WATCH.root or WATCH.root in resolved.parents


def _fd_inside(fd: int) -> bool:
    try:
        return _inside(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return False


def _hook(event: str, args: tuple) -> None:
    if WATCH.root is None or getattr(WATCH.door, "depth", 0) or getattr(WATCH.busy, "on", False):
        return
    WATCH.busy.on = True  # resolving a path must not audit itself
    try:
        if event == "open" and (_inside(args[0]) or (isinstance(args[0], int) and _fd_inside(args[0]))):
            WATCH.violations.append(f"open {args[0]}")
        elif event in ("os.listdir", "os.scandir") and _inside(args[0]):
            WATCH.violations.append(f"{event} {args[0]}")
        elif event == "mmap.__new__" and args[0] != -1 and _fd_inside(args[0]):
            WATCH.violations.append(f"mmap of fd {args[0]}")
        elif event.startswith(_SPAWNS):
            WATCH.violations.append(f"{event} {args[0] if args else ''}")
    finally:
        WATCH.busy.on = False


sys.addaudithook(_hook)  # hooks cannot be removed: this one is idle unless WATCH.root is set


class AuditedView(RepositoryView):
    """A view whose door methods mark their thread as metered while they run."""

    def _door(self, method, *args, **kwargs):
        WATCH.door.depth = getattr(WATCH.door, "depth", 0) + 1
        try:
            return method(*args, **kwargs)
        finally:
            WATCH.door.depth -= 1

    def read(self, *a, **k):
        return self._door(super().read, *a, **k)

    def outline(self, *a, **k):
        return self._door(super().outline, *a, **k)

    def search(self, *a, **k):
        return self._door(super().search, *a, **k)

    def index_read(self, *a, **k):
        return self._door(super().index_read, *a, **k)

    def files(self, *a, **k):
        return self._door(super().files, *a, **k)

    def stat(self, *a, **k):
        return self._door(super().stat, *a, **k)


def audited_localize(locator: Locator, root: Path, system_one: SystemOne | None):
    """Localize on an audited view; (result, trace, view, violations)."""
    view = AuditedView(root)
    trace = Trace()
    WATCH.violations = []
    WATCH.root = Path(root).resolve()
    try:
        result = localize(locator, TASK, view, system_one, trace)
    finally:
        WATCH.root = None
    return result, trace, view, list(WATCH.violations)


def test_every_configured_locator_reads_only_through_the_metered_context(tmp_path):
    root = write_tree(tmp_path / "subject", TREE)
    checked = []
    for name, overrides in configured_locators(tmp_path):
        configured = build("locator", *overrides)
        result, trace, view, violations = audited_localize(configured, root, SystemOne(backend(system_one_for(name)[0]),
                                                                                     system_one_for(name)[1]))
        assert violations == [], f"{name} reached the subject outside its metered context: {violations}"
        traced = sum(e.data["lines"] for e in trace.events if e.kind == EventKind.READ)
        assert traced == view.counters().lines, f"{name}: traced {traced} lines, metered {view.counters().lines}"
        if result.cost.source_lines_read is not None:
            assert result.cost.source_lines_read == traced, name
        indexed = sum(e.data.get("index_lines", 0) for e in trace.events if e.kind == EventKind.READ)
        assert indexed == view.counters().index_lines, f"{name}: traced {indexed} index lines, metered {view.counters().index_lines}"
        if result.cost.index_lines is not None:
            assert result.cost.index_lines == indexed, name
        checked.append(name)
    assert not unaudited(checked), f"configured locators went unaudited: {unaudited(checked)}"


def _the_view(ctx: LocatorContext) -> RepositoryView:
    """What a locator must never do: dig the view out of the context's closures."""
    return next(cell.cell_contents for cell in ctx.read.__closure__ if isinstance(cell.cell_contents, RepositoryView))


def _os_read(root: Path) -> None:
    fd = os.open(root / "pkg" / "parser.py", os.O_RDONLY)
    try:
        os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def _mmap(root: Path) -> None:
    WATCH.door.depth = 1  # the file is opened as the door would: only the map reaches behind it
    try:
        descriptor = os.open(root / "pkg" / "parser.py", os.O_RDONLY)
    finally:
        WATCH.door.depth = 0
    with mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ) as mapped:
        mapped.read()
    os.close(descriptor)


SNEAKS = {  # how, and what the audit must see
    "open()": (lambda root: open(root / "pkg" / "parser.py").read(), "open"),
    "io.open": (lambda root: __import__("io").open(root / "pkg" / "parser.py").read(), "open"),
    "os.open + os.read": (_os_read, "open"),
    "Path.read_text": (lambda root: (root / "pkg" / "parser.py").read_text(), "open"),
    "Path.read_bytes": (lambda root: (root / "pkg" / "parser.py").read_bytes(), "open"),
    "os.listdir": (lambda root: os.listdir(root / "pkg"), "os.listdir"),
    "Path.rglob": (lambda root: list(root.rglob("*.py")), "os.scandir"),
    "mmap": (_mmap, "mmap"),
    "subprocess": (lambda root: subprocess.run(["cat", str(root / "pkg" / "parser.py")], capture_output=True),
                   "subprocess.Popen"),
}


@pytest.mark.parametrize("how", list(SNEAKS))
def test_a_locator_that_reads_behind_the_context_is_caught(tmp_path, how):
    root = write_tree(tmp_path / "subject", {"pkg/parser.py": SOURCE})

    class Sneaky:
        name = "sneaky"
        uses_system_one = False

        def localize(self, task, ctx):
            SNEAKS[how][0](Path(_the_view(ctx).root))
            return LocatorOutput(files=[], confidence_semantics="none")

    _, _, _, violations = audited_localize(Sneaky(), root, None)
    assert any(v.startswith(SNEAKS[how][1]) for v in violations), f"{how} read the subject unseen: {violations}"


# --- The static audit: nothing under locator/ outside the door holds or digs for the view -----------

# The door itself and the layers that handle results, traces and System One, never a subject's files.
DOOR = {"base.py", "repository.py", "runtime.py", "definitions.py", "outline.py", "files.py", "hashing.py",
        "result.py", "trace.py", "redact.py"}
FILE_ACCESS = {"os", "io", "mmap", "subprocess", "shutil", "ctypes", "gc", "inspect", "builtins", "pathlib", "glob",
               "tempfile", "fcntl", "posix", "pty", "sqlite3"}
INTROSPECTION = {"__closure__", "__self__", "__globals__", "__dict__", "__code__", "__func__", "__wrapped__",
                 "__builtins__", "cell_contents", "f_locals", "f_globals"}
# Each allowance says what the module opens: never a subject's file.
ALLOWED_IMPORTS = {
    "imported.py": {"pathlib"},  # the imported outputs file, a job input (hashed into the address)
    "retrieval/vectors.py": {"pathlib", "sqlite3"},  # its embedding cache
    "retrieval/e5.py": {"pathlib"},  # the encoder's weight file (hashed into every result's identity)
    "lane/terms.py": {"builtins"},  # dir(builtins): names that are noise in a trace, no file access
}
PURE_PATHS = {"PurePosixPath", "PurePath"}


def reaches_behind_the_context(source: str, allowed: set[str] = frozenset()) -> list[str]:
    """Lines of `source` that reach past the context: private attributes of other objects,
    closure/frame introspection, file-access imports (beyond `allowed`), private imports, `open`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            if node.attr in INTROSPECTION or (private and not own):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name.split(".")[0] in FILE_ACCESS - allowed]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            pure = module == "pathlib" and all(a.name in PURE_PATHS for a in node.names)  # no I/O
            if module.split(".")[0] in FILE_ACCESS - allowed and not pure:
                found.append(f"{node.lineno}: from {module}")
            found += [f"{node.lineno}: from {module} import {a.name}" for a in node.names
                      if a.name.startswith("_") or (module == "locator.repository" and a.name == "RepositoryView")]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("open", "__import__", "eval", "exec", "vars", "globals"):
                found.append(f"{node.lineno}: {node.func.id}()")
            elif node.func.id in ("getattr", "setattr") and len(node.args) > 1 and not (
                    isinstance(node.args[1], ast.Constant) and not str(node.args[1].value).startswith("_")):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_locator_module_reaches_behind_the_context():
    offenders = {}
    for path in sorted(LOCATOR_DIR.rglob("*.py")):
        relative = path.relative_to(LOCATOR_DIR).as_posix()
        if relative in DOOR or relative.startswith("system_one/"):
            continue
        found = reaches_behind_the_context(path.read_text(encoding="utf-8"), ALLOWED_IMPORTS.get(relative, set()))
        if found:
            offenders[relative] = found
    assert offenders == {}


def test_the_static_audit_sees_the_known_ways_behind_the_context():
    for sneak in ("ctx._repo._lines_of(path)", "ctx.read.__closure__[0].cell_contents", "import os",
                  "from pathlib import Path", "open(path).read()", "getattr(ctx, '_repo')",
                  "from locator.repository import _LISTINGS", "from locator.repository import RepositoryView"):
        assert reaches_behind_the_context(sneak), sneak
    assert reaches_behind_the_context("self._cache.get(key)\nctx.read(path)\nfrom pathlib import Path",
                                      allowed={"pathlib"}) == []
    assert reaches_behind_the_context("from pathlib import PurePosixPath") == []


def test_the_context_is_the_only_door():
    assert list(inspect.signature(Locator.localize).parameters) == ["self", "task", "ctx"]
    ctx = LocatorContext(RepositoryView(LOCATOR_DIR), Trace())
    held = {name: type(value).__name__ for name, value in vars(ctx).items()}
    assert not any(isinstance(value, RepositoryView) for value in vars(ctx).values()), held
    assert set(vars(ctx)) == {"trace", "_system_one", "stages", "concurrency", "read", "index_read", "outline", "search",
                              "stat", "candidate_files", "lines_read", "index_lines"}
