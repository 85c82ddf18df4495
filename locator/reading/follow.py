"""FollowFile (seed 000's next step): actions generated from what a reader has read, so the set of
files it works on can grow during reading.

What was read is searched for references to other files: Python imports (absolute and relative),
dotted qualified names, and path strings. Each is resolved against the subject's file listing
(metadata, as Phase 1 sees it; never gold) and becomes a `FollowFile` action that System One judges
like any read action. A followed file enters the reader with its own state, budget and metering;
bounds: files followed per source file and per task, and the depth of a chain of follows. Nothing
here reads a line: references come from lines the reader was already handed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pydantic import Field

from locator.discovery import Candidate
from locator.reading.state import Entry, FileState
from locator.repository import FileInfo
from locator.settings import Settings

FOLLOW_INSTRUCTIONS = "Will the file this reference points to need to be read to find the code the task is about?"

_IMPORT = re.compile(r"^\s*import\s+([^#]+)")
_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?([^#)]*)")
_NAME = re.compile(r"[\w.]+")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_PATH = re.compile(r"(?<![\w/.-])[\w.-]+(?:/[\w.-]+)+\.py\b")


@dataclass(frozen=True)
class FollowFile:
    """A follow action: open `target`, referenced as `reference` on line `line` of `source`."""

    key: str
    target: str
    reference: str
    source: str
    line: int
    depth: int  # the followed file's depth: its source's + 1

    @property
    def description(self) -> str:
        return f"follow: open {self.target}, referenced as `{self.reference}` on line {self.line} of {self.source}"


class ModuleIndex:
    """The subject's Python files by module name: the full dotted name, and every dotted suffix of at
    least two parts that names exactly one file (so `pkg.models` resolves in a `src/` layout)."""

    def __init__(self, listing: list[FileInfo]):
        self.infos = {f.path: f for f in listing}
        self._full: dict[str, str] = {}
        suffixes: dict[str, set[str]] = {}
        for path in sorted(self.infos):
            if not path.endswith(".py"):
                continue
            parts = path[: -len(".py")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts:
                continue
            self._full.setdefault(".".join(parts), path)
            for i in range(1, len(parts) - 1):
                suffixes.setdefault(".".join(parts[i:]), set()).add(path)
        self._suffix = {name: next(iter(paths)) for name, paths in suffixes.items() if len(paths) == 1}
        self._by_tail: dict[str, set[str]] = {}
        for path in self.infos:
            parts = path.split("/")
            for i in range(1, len(parts)):
                self._by_tail.setdefault("/".join(parts[i:]), set()).add(path)

    def module(self, name: str) -> str | None:
        return self._full.get(name) or self._suffix.get(name)

    def longest_module(self, dotted: str) -> str | None:
        """The file of the longest prefix of `dotted` that names a module (`pkg.mod.Class.method` -> pkg/mod.py)."""
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            found = self.module(".".join(parts[:n]))
            if found is not None:
                return found
        return None

    def path(self, written: str) -> str | None:
        written = written.removeprefix("./")
        if written in self.infos:
            return written
        tails = self._by_tail.get(written, set())
        return next(iter(tails)) if len(tails) == 1 else None


def _imported(clause: str) -> list[str]:
    """The names an import clause binds from: `a as x, b.c` -> [a, b.c]."""
    return [m.group(0) for part in clause.split(",") if (m := _NAME.match(part.strip()))]


def _package_of(path: str, dots: int) -> str:
    """The package a relative import with `dots` leading dots starts from, in `path`."""
    parts = list(PurePosixPath(path).parent.parts)
    return ".".join(parts[: len(parts) - (dots - 1)] if dots > 1 else parts)


def references(path: str, line: str, index: ModuleIndex) -> list[tuple[str, str]]:
    """(target path, the reference as written) for each file `line` of `path` refers to, in order."""
    found: list[tuple[str, str]] = []
    if m := _FROM.match(line):
        dots, module, names = len(m.group(1)), m.group(2), _imported(m.group(3))
        base = module if not dots else ".".join(p for p in (_package_of(path, dots), module) if p)
        written = m.group(1) + module
        for name in names:
            target = index.module(f"{base}.{name}" if base else name)
            if target is not None:
                found.append((target, f"{written}.{name}" if module else f"{written}{name}"))
        if base and (target := index.module(base)) is not None:
            found.append((target, written))
    elif m := _IMPORT.match(line):
        for name in _imported(m.group(1)):
            if (target := index.longest_module(name)) is not None:
                found.append((target, name))
    else:
        for written in _PATH.findall(line):
            if (target := index.path(written)) is not None:
                found.append((target, written))
        for dotted in _DOTTED.findall(line):
            if (target := index.longest_module(dotted)) is not None and "." in dotted:
                found.append((target, dotted))
    return found


class FollowFiles(Settings):
    """`locator/follow=references`: FollowFile actions from a file's observations, bounded per file, per
    task and in depth, at most `max_offered` offered to one decision."""

    max_per_file: int = Field(ge=1, description="files one file may bring in")
    max_per_task: int = Field(ge=1, description="files followed in one task, all sources together")
    max_depth: int = Field(ge=1, description="follows in a chain: 1 lets only handed-off files follow")
    max_offered: int = Field(ge=1, description="follow actions offered to one decision")


@dataclass
class FollowLedger:
    """One task's follows: which files are present, which references each file has been offered, and
    the bounds. Admission is in the order follows are asked for, so a run is deterministic."""

    bounds: FollowFiles
    index: ModuleIndex
    present: set[str]
    offered: dict[str, set[str]] = field(default_factory=dict)  # source -> targets already offered
    followed: dict[str, int] = field(default_factory=dict)  # source -> files it brought in
    refused: int = 0  # follows System One wanted that a bound refused
    admitted: list[FileState] = field(default_factory=list)

    def propose(self, state: FileState, once: bool) -> list[FollowFile]:
        """Follow actions from what `state` has read: targets not present, best first by first
        occurrence, none once the file or the task is at its bound. With `once`, a target offered to
        this file before is not offered again (a Noul decision is final; a Choice offers it again)."""
        if (state.depth >= self.bounds.max_depth or self.followed.get(state.path, 0) >= self.bounds.max_per_file
                or len(self.admitted) >= self.bounds.max_per_task):
            return []
        offered = self.offered.setdefault(state.path, set())
        actions: dict[str, FollowFile] = {}
        for raw in state.raw:
            for n, line in enumerate(raw.lines, raw.span.start_line):
                for target, written in references(state.path, line, self.index):
                    if target == state.path or target in self.present or target in actions or (once and target in offered):
                        continue
                    actions[target] = FollowFile(f"follow{len(actions)}", target, written, state.path, n, state.depth + 1)
        proposed = list(actions.values())[: self.bounds.max_offered]
        if once:
            offered.update(a.target for a in proposed)
        return proposed

    def admit(self, action: FollowFile, score: float) -> FileState | None:
        """The followed file's own state, or None when it is present already or a bound refuses it."""
        if action.target in self.present:
            return None
        if (len(self.admitted) >= self.bounds.max_per_task
                or self.followed.get(action.source, 0) >= self.bounds.max_per_file):
            self.refused += 1
            return None
        self.present.add(action.target)
        self.followed[action.source] = self.followed.get(action.source, 0) + 1
        state = FileState(Candidate(self.index.infos[action.target], score), None, entry=Entry.FOLLOW,
                          followed_from=action.source, depth=action.depth)
        self.admitted.append(state)
        return state

    def details(self) -> dict[str, int]:
        """The counts a reader reports for its follows."""
        return {"files_followed": len(self.admitted), "follows_refused_by_bound": self.refused}
