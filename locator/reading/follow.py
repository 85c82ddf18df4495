"""FollowFile (seed 000's next step): actions generated from what a reader has read, so the set of
files it works on can grow during reading.

What was read is searched for references to other files by the rules of its language
(locator/languages: Python imports and dotted names, Rust `mod`/`use crate::`, JavaScript/TypeScript
`import … from './x'` and `require`, Go package imports, Java imports, written paths). Each is
resolved against the subject's file listing
(metadata, as Phase 1 sees it; never gold) and becomes a `FollowFile` action that System One judges
like any read action. A followed file enters the reader with its own state, budget and metering;
bounds: files followed per source file and per task, and the depth of a chain of follows. Nothing
here reads a line: references come from lines the reader was already handed."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import Field

from locator.discovery import Candidate
from locator.languages import language_of
from locator.languages.references import FileIndex
from locator.reading.state import Entry, FileState
from locator.settings import Settings

FOLLOW_INSTRUCTIONS = "Will the file this reference points to need to be read to find the code the task is about?"

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


def references(path: str, line: str, index: FileIndex) -> list[tuple[str, str]]:
    """(target path, the reference as written) for each file `line` of `path` refers to, in order,
    by the rules of the file's language (none for a file of no registered language)."""
    language = language_of(path)
    return language.references(path, line, index) if language is not None else []


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
    index: FileIndex
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
