"""The runtime audit every localizing process runs under (`experiments.job.isolation`'s worker).

A locator sees the code only through its metered, traced context. In the worker, gold was never
loaded; what is left to reach is the subject's files, the data sets, saved results and caches on
disk, and the process's own memory (the view's lines, the frames that hold it). Python's audit hooks
see every such reach: `open`, the `os.*` calls that name a path, `mmap` of a file, ctypes' `dlopen`
and `dlsym` (libc's `open`/`read`), `gc.get_objects`/`get_referrers`/`get_referents`, `sys._getframe`,
`sys._current_frames`, a traceback's or a generator's frame, `sys.settrace`/`setprofile`, and every
way of starting a process.

Who made a call is read from the stack, innermost frame first, not from a flag a locator could set:

- a frame of a trusted door (the context's reading closures, System One's request path, the worker's
  own view construction) allows it: what the door hands out is metered there;
- a frame of loclab code outside the door (a locator, its components) denies it;
- a frame of the import machinery allows a non-path event: a library's module body runs there;
- library frames (the standard library, site-packages) say nothing and the walk goes on; a stack with
  no decision (a thread a locator started on a builtin) is denied while a task localizes.

Path events are judged only for paths under a forbidden root (the subject, the data sets, results,
caches, `../shared`), unless the path is one the locator's own config names (its input file, its own
embedding cache); the other events always. A denied call raises `MeteringViolation` where it was made
and is recorded against every task in flight, which then fails closed, naming the call and the path,
even if the locator swallowed the exception. Nothing outside this module holds the audit's state: the
hook is a closure, and the only ways to reach a closure's cells are the introspection it denies.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, FrameType

from experiments.job.paths import PROJECT_ROOT

# the door modules: they handle the view, results, traces and System One, never a locator's choice of
# what to read; their frames neither allow nor deny (the context's closures are the door itself)
DOOR_FILES = frozenset(str(PROJECT_ROOT / "locator" / name) for name in (
    "base.py", "repository.py", "definitions.py", "outline.py", "files.py", "hashing.py", "result.py", "trace.py",
    "redact.py", "runtime.py"))
DOOR_DIRS = (str(PROJECT_ROOT / "locator" / "system_one") + os.sep, str(PROJECT_ROOT / "experiments") + os.sep)
# loclab's own code (a virtual environment inside the checkout is not): a locator, its components, a test's probe
_LOCLAB = tuple(str(PROJECT_ROOT / name) + os.sep for name in ("locator", "dataset", "metrics", "render", "experiments",
                                                            "tests", "benchmarks", "scripts"))
# A library loaded, a process started, a file mapped is judged by who called it, not by what is further
# out: torch loading libc or running `ldconfig` (ctypes.util) under an encoder a locator calls is the
# library's doing; a locator's own `CDLL(None)` or `subprocess.run(["cat", …])` is not. The frames of the
# modules that implement those calls are passed over to find that caller.


def _origin_of(module: str) -> str | None:
    spec = importlib.util.find_spec(module)
    return os.path.realpath(spec.origin) if spec is not None and spec.origin else None


_CTYPES = _origin_of("ctypes")
_IMPLEMENTATIONS = tuple(p for p in (os.path.dirname(_CTYPES) + os.sep if _CTYPES else None, _origin_of("subprocess"),
                                     _origin_of("os"), _origin_of("pty")) if p)
_IMPORT_MACHINERY = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")

# events that name a path (its position in the event's arguments)
PATH_EVENTS = {"open": 0, "sqlite3.connect": 0, "os.listdir": 0, "os.scandir": 0, "os.chdir": 0, "os.remove": 0, "os.rename": 0,
               "os.rmdir": 0, "os.mkdir": 0, "os.truncate": 0, "os.utime": 0, "os.chmod": 0, "os.chown": 0,
               "os.link": 0, "os.symlink": 0, "glob.glob": 0, "shutil.copyfile": 0, "shutil.copytree": 0,
               "shutil.rmtree": 0, "os.chflags": 0, "os.setxattr": 0, "os.getxattr": 0, "os.listxattr": 0}
# events that reach out of the process (a library, a process, a file's memory, raw memory through
# ctypes), whatever they name: judged by their immediate caller (see above)
REACHES_OUT = frozenset({"ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.call_function",
                         "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at", "subprocess.Popen", "os.system",
                         "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn", "os.startfile",
                         "mmap.__new__"})
# events that reach into this process's memory: its objects and its frames
IN_MEMORY = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._getframe", "sys._current_frames",
                       "sys.settrace", "sys.setprofile", "object.__getattr__"})
CALL_EVENTS = REACHES_OUT | IN_MEMORY
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_code", "gi_code", "cr_code",
                              "ag_code"})


class MeteringViolation(PermissionError):
    """A locator reached the subject, the data, results or caches, or the process's memory, outside
    its metered context."""


class _Verdict:
    ALLOW, DENY = "allow", "deny"


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in roots)


def _resolved(raw: object) -> str | None:
    if isinstance(raw, int) and not isinstance(raw, bool):
        try:
            return os.path.realpath(os.readlink(f"/proc/self/fd/{raw}"))
        except OSError:
            return None
    if isinstance(raw, (str, bytes, os.PathLike)):
        try:
            return os.path.realpath(os.fsdecode(raw))
        except (TypeError, ValueError):
            return None
    return None


class Audit:
    """One process's audit. `install()` once; `localizing()` around each task's localization."""

    def __init__(self, forbidden: Iterable[str | Path], allowed: Iterable[str | Path], trusted: Iterable[CodeType]):
        self._forbidden = tuple(sorted({os.path.realpath(p) for p in forbidden}))
        # a path the locator's config names, and the folder it lies in (a cache file is created there),
        # unless that folder is itself a guarded root
        named = {os.path.realpath(p) for p in allowed}
        self._allowed = tuple(sorted(named | {os.path.dirname(p) for p in named} - set(self._forbidden)))
        self._trusted = frozenset(trusted)
        self._lock = threading.Lock()
        self._in_flight: dict[int, list[str]] = {}  # task number -> its violations
        self._busy = threading.local()
        self._installed = False

    def forbid(self, path: str | Path) -> None:
        """A subject root, known when its task arrives."""
        resolved = os.path.realpath(path)
        with self._lock:
            if resolved not in self._forbidden:
                self._forbidden = tuple(sorted({*self._forbidden, resolved}))

    @contextmanager
    def localizing(self, number: int) -> Iterator[list[str]]:
        """While the block runs the task is in flight: every call is judged, and the violations of
        every task in flight are appended to the list it yields."""
        found: list[str] = []
        with self._lock:
            self._in_flight[number] = found
        try:
            yield found
        finally:
            with self._lock:
                self._in_flight.pop(number, None)

    def install(self) -> None:
        if self._installed:
            return
        self._installed = True
        sys.addaudithook(self._hook)

    # --- the hook --------------------------------------------------------------------------------

    def _hook(self, event: str, args: tuple) -> None:
        position = PATH_EVENTS.get(event)
        if position is None and event not in CALL_EVENTS:
            return
        if not self._in_flight or getattr(self._busy, "on", False):
            return
        self._busy.on = True  # resolving a path or walking the stack audits itself: never judge those
        try:
            what = self._reach(event, args, position)
            if what is None:
                return
            verdict, where = (self._immediate_caller(sys._getframe(1)) if event in REACHES_OUT
                              else self._caller(sys._getframe(1), reaches_out=position is not None))
            if verdict == _Verdict.ALLOW:
                return
            message = f"{what}, outside the metered context" + (f" (from {where})" if where else "")
            with self._lock:
                for found in self._in_flight.values():
                    found.append(message)
        finally:
            self._busy.on = False
        raise MeteringViolation(message)

    def _reach(self, event: str, args: tuple, position: int | None) -> str | None:
        """What the event reaches, said for the error; None when it reaches nothing guarded."""
        if position is not None:
            if not args:
                return None
            path = _resolved(args[position])
            if path is None or not _under(path, self._forbidden) or _under(path, self._allowed):
                return None
            return f"{event} {path}"
        if event == "object.__getattr__":
            return f"{type(args[0]).__name__}.{args[1]}" if len(args) > 1 and args[1] in FRAME_ATTRIBUTES else None
        if event == "mmap.__new__":
            if not args or args[0] == -1:
                return None  # anonymous memory
            return f"mmap of {_resolved(args[0]) or f'fd {args[0]}'}"
        if event.startswith(("subprocess", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "pty")):
            return f"{event} {args[0] if args else ''}".strip()
        if event == "ctypes.dlopen":
            return f"ctypes.dlopen {args[0] if args else None}"
        if event in ("ctypes.dlsym", "ctypes.dlsym/handle"):
            return f"{event} {args[1] if len(args) > 1 else ''}"
        return event

    def _is_locator(self, code: CodeType) -> bool:
        filename = code.co_filename
        return filename.startswith(_LOCLAB) and filename not in DOOR_FILES and not filename.startswith(DOOR_DIRS)

    def _caller(self, frame: FrameType | None, reaches_out: bool) -> tuple[str, str | None]:
        """Walk out from the innermost frame: the first trusted door, loclab code outside it, or
        (for an event that stays in memory) the import machinery decides. A stack with neither is a
        thread started on a builtin: denied a path, allowed what stays in memory (a builtin target's
        return value is lost; the interpreter's own report of a thread's exception walks its traceback)."""
        while frame is not None:
            code = frame.f_code
            if code in self._trusted:
                return _Verdict.ALLOW, None
            if self._is_locator(code):
                return _Verdict.DENY, _where(frame)
            if not reaches_out and code.co_filename in _IMPORT_MACHINERY:
                return _Verdict.ALLOW, None
            frame = frame.f_back
        if reaches_out:
            return _Verdict.DENY, "a thread with no locator frame, while a task localizes"
        return _Verdict.ALLOW, None

    def _immediate_caller(self, frame: FrameType | None) -> tuple[str, str | None]:
        """A library loaded, a process started, a file mapped: the caller of the module that does it
        decides (a library's own doing is allowed, a locator's denied); a thread started on a builtin,
        with no caller at all, is denied."""
        while frame is not None and os.path.realpath(frame.f_code.co_filename).startswith(_IMPLEMENTATIONS):
            frame = frame.f_back
        if frame is None:
            return _Verdict.DENY, "a thread with no locator frame, while a task localizes"
        if frame.f_code not in self._trusted and self._is_locator(frame.f_code):
            return _Verdict.DENY, _where(frame)
        return _Verdict.ALLOW, None


def _where(frame: FrameType) -> str:
    return f"{os.path.relpath(frame.f_code.co_filename, PROJECT_ROOT)}:{frame.f_lineno} in {frame.f_code.co_name}"


def door_code() -> list[CodeType]:
    """The code objects of the doors: the context's reading closures and System One's request path."""
    from locator.base import LocatorContext
    from locator.system_one.client import SystemOne

    closures = [c for c in LocatorContext.__init__.__code__.co_consts if isinstance(c, CodeType)]
    return [*closures, SystemOne._ask.__code__, SystemOne.generate.__code__]
