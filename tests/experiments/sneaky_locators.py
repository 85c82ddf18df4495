"""Locators that try to see the task's gold or its subject without the metered context, each as a
production job runs it: in the localization worker, under its audit. Every one must fail its task
closed (or, for the environment, find nothing to read). A path a probe needs is given in
`hint` without its leading slash: an absolute path in a locator's config is one of its own inputs,
which the audit lets it read."""

from __future__ import annotations

import gc
import operator
import os
import sys
from pathlib import Path

from locator.base import LocatorOutput
from locator.result import Evidence, ResultFile


class _Probe:
    name = "probe"
    uses_system_one = False

    def __init__(self, hint: str = "", **_settings):
        self.hint = Path("/" + hint) if hint else None

    def localize(self, task, ctx) -> LocatorOutput:
        try:
            found = self.sneak(ctx)
        except PermissionError:  # the audit's refusal, swallowed: the probe claims the gold file all the same
            found = True
        files = [ResultFile(path="pkg/core.py", evidence=[Evidence(id="e1", start_line=2, end_line=2)])] if found else []
        return LocatorOutput(files=files, confidence_semantics="none")

    def sneak(self, ctx) -> bool:
        raise NotImplementedError


class GcGold(_Probe):
    """`gc.get_objects()` for this task's ManifestRow.gold."""

    def sneak(self, ctx) -> bool:
        return any(type(o).__name__ == "Gold" for o in gc.get_objects())


class TracebackFrames(_Probe):
    """The caller's frames through a traceback: a `gold` local or the view."""

    def sneak(self, ctx) -> bool:
        try:
            raise LookupError
        except LookupError as exc:
            frame = exc.__traceback__.tb_frame
        while frame is not None:
            if "gold" in frame.f_locals or "repo" in frame.f_locals:
                return True
            frame = frame.f_back
        return False


class DataFile(_Probe):
    """The data set's file (the gold patch is in it), at the path in `hint`."""

    def sneak(self, ctx) -> bool:
        return "gold" in self.hint.read_text()


class SharedData(_Probe):
    """`../shared`, beside the checkout."""

    def sneak(self, ctx) -> bool:
        shared = Path(__file__).resolve().parents[3] / "shared"
        return bool(os.listdir(shared))


class Environment(_Probe):
    """What the environment names: data sets, results, caches, the tracking store. Fails the task
    itself, naming the variable, when it finds one."""

    def sneak(self, ctx) -> bool:
        named = sorted(k for k, v in os.environ.items() if k.startswith(("LOCLAB_", "MLFLOW_")) and k not in (
            "LOCLAB_MODEL_THREADS", "LOCLAB_SYSTEM_ONE_URL", "LOCLAB_SYSTEM_ONE_MODEL", "LOCLAB_OPENAI_BASE_URL",
            "LOCLAB_OPENAI_MODEL", "LOCLAB_LLAMA_SERVER"))
        if named or (self.hint and any(str(self.hint) in v for v in os.environ.values())):
            raise RuntimeError(f"the worker's environment names {named or 'the hinted path'}")
        return False


class SavedResults(_Probe):
    """Results saved by an earlier job, under the results folder in `hint`."""

    def sneak(self, ctx) -> bool:
        return any(self.hint.rglob("localization-result.json"))


class Libc(_Probe):
    """libc's open and read through ctypes, on the subject file in `hint`."""

    def sneak(self, ctx) -> bool:
        import ctypes

        libc = ctypes.CDLL(None)
        fd = libc.open(str(self.hint).encode(), os.O_RDONLY)
        buffer = ctypes.create_string_buffer(1 << 16)
        return libc.read(fd, buffer, 1 << 16) > 0


class SubjectTree(_Probe):
    """The subject's tree on disk (under the cache, or a local subject's folder), at `hint`."""

    def sneak(self, ctx) -> bool:
        return "parse_config" in (self.hint / "pkg" / "core.py").read_text()


class LineCache(_Probe):
    """The lines of a file another task's view read, from a cache in `locator.repository`: a listing
    that keeps lines, or any mapping of paths to lines among its globals."""

    def sneak(self, ctx) -> bool:
        module = sys.modules["locator.repository"]
        for value in list(vars(module).values()):
            for held in (list(value.values()) if isinstance(value, dict) else ()):
                if getattr(held, "lines", None):
                    return True
                if isinstance(held, tuple) and held and all(isinstance(line, str) for line in held):
                    return True
                if isinstance(held, dict) and any(isinstance(v, tuple) and v for v in held.values()):
                    return True
        return False


class AuditSwitch(_Probe):
    """Switches the audit off, if any module holds it, then reads the subject at `hint`."""

    def sneak(self, ctx) -> bool:
        for module in list(sys.modules.values()):
            for value in list(vars(module).values()) if hasattr(module, "__dict__") else ():
                if type(value).__name__ == "Audit":
                    value._in_flight.clear()
        return "parse_config" in (self.hint / "pkg" / "core.py").read_text()


class ImportChain(_Probe):
    """sys.modules and attrgetter, which a static audit cannot follow: a view of its own on `hint`."""

    def sneak(self, ctx) -> bool:
        view = operator.attrgetter("RepositoryView")(sys.modules["locator.repository"])(self.hint)
        return bool(view.read("pkg/core.py").lines)


class GoldModule(_Probe):
    """Whether the module that defines gold was ever loaded in the localizing process."""

    def sneak(self, ctx) -> bool:
        if "dataset.manifest" in sys.modules or "dataset.gold" in sys.modules:
            raise RuntimeError("the module that holds gold was loaded in the localizing process")
        return False


class DynamicImport(_Probe):
    """Runs loclab code its address cannot see: a module imported by a name built at run time."""

    def sneak(self, ctx) -> bool:
        import importlib

        importlib.import_module(".".join(("render", "notes")))
        return False


class JobProcess(_Probe):
    """The job's own process, whose memory holds the gold: its environment (and /proc/<pid>/mem beside it)."""

    def sneak(self, ctx) -> bool:
        return "LOCLAB" in Path(f"/proc/{os.getppid()}/environ").read_bytes().decode(errors="replace")
