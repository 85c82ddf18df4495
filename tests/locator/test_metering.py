"""Every line a locator sees goes through its metered, traced context, and it has no other way in.

Two audits. At run time, the audit every localizing process runs under (`experiments.job.audit`, in
every production job's worker) watches every reach of the process while a locator runs: opening a
file of the subject (`open`, `io.open`, `os.open`, `Path.read_*`), listing its folders, mapping one
into memory, libc through ctypes, the garbage collector's object lists, frames (`sys._getframe`, a
traceback's), tracing, or starting any subprocess, outside the context's own door (`read`,
`outline`, `search`, `index_read`, `index_outline`, and the metadata `stat` / `source_files` / `files`),
is a violation; the
caller is read from the stack, not from a flag. Statically, no module under `locator/` outside the
door reaches for private attributes of other objects (`ctx._…`, a view's line cache), introspects
closures, or imports file-access modules: the context keeps the view only inside its methods'
closures, so nothing else holds it. The lines the trace records as read, and as read for an index,
must add up to the cost reported.
"""

from __future__ import annotations

import ast
import ctypes
import gc
import inspect
import mmap
import operator
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from experiments.job.audit import Audit, MeteringViolation, door_code
from experiments.job.config import build
from locator.base import Locator, LocatorContext, LocatorOutput
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.system_one.client import SystemOne
from locator.trace import EventKind, Trace
from tests.configs import backend
from tests.conftest import write_tree
from tests.locator.configured import SOURCE, TASK, TREE, configured_locators, system_one_for, unaudited

LOCATOR_DIR = Path(__file__).resolve().parents[2] / "locator"

# the production audit, as the localization worker installs it (hooks cannot be removed: it judges
# nothing unless a task is in flight)
AUDIT = Audit(forbidden=[], allowed=[], trusted=door_code())
AUDIT.install()


def audited_localize(locator: Locator, root: Path, system_one: SystemOne | None):
    """Localize on a view of `root` under the production audit; (result, trace, view, violations)."""
    AUDIT.forbid(root)
    view = RepositoryView(root)
    trace = Trace()
    with AUDIT.localizing(0) as violations:
        try:
            result = localize(locator, TASK, view, system_one, trace)
        except Exception:  # noqa: BLE001 - what a violation broke (os.walk swallows one, then nothing is found)
            result = None
    return result, trace, view, list(violations)


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


_OPENED: dict[str, int] = {}  # a descriptor of the subject's file, opened before the task, for the mmap sneak


def _mmap(root: Path) -> None:
    with mmap.mmap(_OPENED["fd"], 0, access=mmap.ACCESS_READ) as mapped:
        mapped.read()


def _frame_of_the_caller(root: Path) -> None:
    try:
        raise LookupError("a way to a frame")
    except LookupError as exc:
        frame = exc.__traceback__.tb_frame.f_back  # the runtime's frame: the view is one of its locals
        frame.f_back.f_locals["repo"].read("pkg/parser.py")


def _libc(root: Path) -> None:
    libc = ctypes.CDLL(None)
    fd = libc.open(str(root / "pkg" / "parser.py").encode(), os.O_RDONLY)
    libc.read(fd, ctypes.create_string_buffer(1 << 16), 1 << 16)


def _thread_on_a_builtin(root: Path) -> None:
    thread = threading.Thread(target=open, args=(root / "pkg" / "parser.py",))  # no locator frame on its stack
    thread.start()
    thread.join()


def _a_view_of_its_own(root: Path) -> None:
    """Through sys.modules and attrgetter, which the static audit cannot follow: a new, unmetered view."""
    view_type = operator.attrgetter("RepositoryView")(sys.modules["locator.repository"])
    view_type(root).read("pkg/parser.py")


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
    "gc.get_objects": (lambda root: [o for o in gc.get_objects() if isinstance(o, RepositoryView)], "gc.get_objects"),
    "gc.get_referrers": (lambda root: gc.get_referrers(root), "gc.get_referrers"),
    "sys._getframe": (lambda root: sys._getframe().f_back.f_locals, "sys._getframe"),
    "a traceback's frame": (_frame_of_the_caller, "traceback.tb_frame"),
    "sys._current_frames": (lambda root: sys._current_frames(), "sys._current_frames"),
    "sys.settrace": (lambda root: sys.settrace(lambda *a: None), "sys.settrace"),
    "libc through ctypes": (_libc, "ctypes.dlopen"),
    "a thread started on a builtin": (_thread_on_a_builtin, "open"),
    "a view of its own via sys.modules": (_a_view_of_its_own, "os.scandir"),
}


@pytest.mark.parametrize("how", list(SNEAKS))
def test_a_locator_that_reads_behind_the_context_is_caught(tmp_path, how):
    root = write_tree(tmp_path / "subject", {"pkg/parser.py": SOURCE})
    _OPENED["fd"] = os.open(root / "pkg" / "parser.py", os.O_RDONLY)

    class Sneaky:
        name = "sneaky"
        uses_system_one = False

        def localize(self, task, ctx):
            try:
                SNEAKS[how][0](Path(_the_view(ctx).root))
            except MeteringViolation:
                pass  # swallowed: the task must fail closed all the same
            return LocatorOutput(files=[], confidence_semantics="none")

    try:
        _, _, _, violations = audited_localize(Sneaky(), root, None)
    finally:
        os.close(_OPENED.pop("fd"))
    sys.settrace(None)
    assert any(v.startswith(SNEAKS[how][1]) for v in violations), f"{how} read the subject unseen: {violations}"
    assert all("outside the metered context" in v for v in violations)


def test_the_door_itself_is_not_a_violation_and_a_swallowed_violation_still_counts(tmp_path):
    root = write_tree(tmp_path / "subject", {"pkg/parser.py": SOURCE})

    class Honest:
        name = "honest"
        uses_system_one = False

        def localize(self, task, ctx):
            ctx.read("pkg/parser.py")
            ctx.outline("pkg/parser.py")
            return LocatorOutput(files=[], confidence_semantics="none")

    result, _, view, violations = audited_localize(Honest(), root, None)
    assert violations == [] and view.counters().lines > 0 and result is not None


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
    "lane/terms.py": {"builtins"},
    "languages/language.py": {"pathlib"},  # the grammar wheels' own queries/tags.scm  # dir(builtins): names that are noise in a trace, no file access
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
    assert set(vars(ctx)) == {"trace", "_system_one", "_selection", "stages", "concurrency", "read", "index_read", "index_outline",
                              "outline", "search", "stat", "source_files", "files", "lines_read", "index_lines"}


def test_a_locator_yaml_added_without_an_entry_is_audited_as_it_composes(tmp_path, monkeypatch):
    """README's "Adding a locator", word for word, turned the suite red: a new YAML went unaudited until
    it was listed in tests/locator/configured.py. It is audited by itself now."""
    import shutil

    import experiments.job.paths
    from tests.locator.configured import configured_locators

    conf = tmp_path / "conf"
    shutil.copytree(experiments.job.paths.CONF_DIR / "locator", conf / "locator")
    (conf / "locator" / "first_lines.yaml").write_text("_target_: locator.first_lines.FirstLines\nlines: 40\n")
    monkeypatch.setattr(experiments.job.paths, "CONF_DIR", conf)
    yielded = dict(configured_locators(tmp_path))
    assert yielded["first_lines"] == ["locator=first_lines"]
    assert "bm25" in yielded and "two_phase" not in yielded  # the listed ones keep their entries alone
