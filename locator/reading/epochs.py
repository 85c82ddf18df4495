"""The progressive reader's epochs as a dataflow: each request is sent as soon as its inputs exist.

An epoch's files are the files still reading, in file order; the schedule groups them into Choice
requests, the chosen reads into observation requests. Read as a loop, every epoch waits for the
slowest request of the one before (a barrier). But a file's next epoch depends only on its own
answers, and a group's members only on the files before it in file order. So a group is sent as
soon as it is full (`Schedule.full`) or no further file can join it, and a file enters its next
epoch as soon as it and every file before it are done with this one. The groups, their requests and
every decision are those of the loop, at every concurrency; only when they are sent differs.

Some rules look at a whole epoch, and wait for it: the global schedule's one request holds every
file (its group is never full); a file that neither read nor ended (it waits, or chose a follow)
stays only if something in the epoch moved (`Steps.settle`); with FollowFile (`barrier`), what a
file may follow depends on every admission of the epoch before, so an epoch's files enter together.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from locator.reading.schedule import Choice, Schedule
from locator.reading.state import FileState


@dataclass(frozen=True)
class Resolution:
    """What a group's choices led to: the reads to run now (in the order they are observed) and the
    files admitted by a follow."""

    selected: list[Choice]
    admitted: list[FileState]


class Steps(Protocol):
    """The reader's side of one task's reading: the decisions; `EpochFlow` decides only when."""

    def enter(self, state: FileState) -> bool:
        """The file's options for its next epoch; False (and the file ended) when it has none."""
        ...

    def choose(self, group: list[FileState]) -> list[Choice]:
        """One Choice request for a group (run on a worker): a choice per file, in group order."""
        ...

    def resolve(self, choices: list[Choice]) -> Resolution:
        """A group's choices applied, groups in file order: stops, follows admitted, reads selected."""
        ...

    def observe(self, group: list[FileState]) -> int:
        """Reads the group's selected ranges and asks about them (run on a worker); requests sent."""
        ...

    def account(self, state: FileState) -> None:
        """A file's round charged after its observations."""
        ...

    def settle(self, undecided: list[Choice], moved: bool) -> Resolution:
        """The epoch's every choice is in: files that neither read nor ended stay only if it `moved`; an
        epoch that did not move may still read what its waiting files choose instead (`Schedule.unblock`)."""
        ...


@dataclass(eq=False)
class _Group:
    files: list[FileState]
    choices: list[Choice] | None = None


@dataclass(eq=False)
class _Epoch:
    number: int
    candidates: list[FileState] = field(default_factory=list)  # files that reached it, in file order
    candidates_known: bool = False  # the epoch before is done: no further file reaches this one
    entered: int = 0  # candidates whose options were asked for
    files: list[FileState] = field(default_factory=list)  # candidates with options, in file order
    grouped: int = 0
    groups: list[_Group] = field(default_factory=list)
    resolved: int = 0  # groups resolved, in order
    to_observe: list[FileState] = field(default_factory=list)
    observe_grouped: int = 0
    undecided: list[Choice] = field(default_factory=list)
    moved: bool = False  # a read was selected or a file admitted
    admitted: list[FileState] = field(default_factory=list)
    done: set[int] = field(default_factory=set)  # ids of files done with this epoch
    done_prefix: int = 0
    settled: bool = False
    finished: bool = False

    @property
    def files_known(self) -> bool:
        return self.candidates_known and self.entered == len(self.candidates)


@dataclass(order=True)
class _Work:
    priority: tuple[int, int, int]  # (epoch, phase, group): earlier epochs first, they unblock the rest
    run: Callable[[], Any] = field(compare=False)
    finish: Callable[[Any], None] = field(compare=False)


class ReadingStalledError(RuntimeError):
    """No request is ready or in flight, yet an epoch is not done: a defect of the flow, never of input."""


class EpochFlow:
    """Runs one task's epochs with up to `concurrency` requests in flight."""

    def __init__(self, steps: Steps, schedule: Schedule, concurrency: int, barrier: bool):
        self.steps, self.schedule, self.concurrency, self.barrier = steps, schedule, concurrency, barrier
        self.epochs: list[_Epoch] = []
        self.requests = 0
        self._ready: list[_Work] = []

    def run(self, states: list[FileState]) -> None:
        self.epochs = [_Epoch(1, candidates=list(states), candidates_known=True)]
        if self.concurrency == 1:
            while self._advance():
                work = heapq.heappop(self._ready)
                work.finish(work.run())
        else:
            in_flight: dict[Future, _Work] = {}
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                while self._advance() or in_flight:
                    while self._ready and len(in_flight) < self.concurrency:
                        work = heapq.heappop(self._ready)
                        in_flight[pool.submit(work.run)] = work
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=lambda f: in_flight[f].priority):
                        in_flight.pop(future).finish(future.result())
        if not all(e.finished for e in self.epochs):
            raise ReadingStalledError(f"reading stopped with epoch {next(e.number for e in self.epochs if not e.finished)} "
                                      "unfinished and no request left")

    @property
    def epochs_run(self) -> int:
        return sum(1 for e in self.epochs if e.files)

    def _advance(self) -> bool:
        """Applies every answer that arrived and forms every request whose inputs exist; whether one is ready."""
        moved = True
        while moved:
            moved = False
            for epoch in list(self.epochs):
                moved |= self._enter(epoch) | self._group(epoch) | self._resolve(epoch) | self._observe(epoch) \
                    | self._finish(epoch)
        return bool(self._ready)

    def _enter(self, e: _Epoch) -> bool:
        if e.entered == len(e.candidates) or (self.barrier and not e.candidates_known):
            return False
        for s in e.candidates[e.entered :]:
            if self.steps.enter(s):
                e.files.append(s)
        e.entered = len(e.candidates)
        return True

    def _formed(self, files: list[FileState], complete: bool) -> list[list[FileState]]:
        """The groups of `files` that can be sent now: full ones, and the rest once no file can join."""
        formed = []
        for group in self.schedule.groups(files) if files else []:
            if not (complete or self.schedule.full(group)):
                break
            formed.append(group)
        return formed

    def _group(self, e: _Epoch) -> bool:
        formed = self._formed(e.files[e.grouped :], e.files_known)
        for files in formed:
            group = _Group(files)
            e.groups.append(group)
            e.grouped += len(files)
            self.requests += 1
            self._push((e.number, 0, len(e.groups)), lambda files=files: self.steps.choose(files),
                       lambda choices, group=group: setattr(group, "choices", choices))
        return bool(formed)

    def _resolve(self, e: _Epoch) -> bool:
        progressed = False
        while e.resolved < len(e.groups) and e.groups[e.resolved].choices is not None:
            choices = e.groups[e.resolved].choices
            reading = self._apply(e, self.steps.resolve(choices))
            for c in choices:
                if id(c.state) in reading:
                    continue
                if c.state.termination is None:
                    e.undecided.append(c)
                else:
                    e.done.add(id(c.state))
            e.resolved += 1
            progressed = True
        if not e.settled and e.files_known and e.grouped == len(e.files) and e.resolved == len(e.groups):
            e.settled = progressed = True
            reading = self._apply(e, self.steps.settle(e.undecided, e.moved))
            e.done.update(id(c.state) for c in e.undecided if id(c.state) not in reading)
        return progressed

    @staticmethod
    def _apply(e: _Epoch, resolution: Resolution) -> set[int]:
        """A resolution's reads queued for observation and its admitted files for the next epoch; the
        ids of the files that read."""
        e.to_observe += [c.state for c in resolution.selected]
        e.admitted += resolution.admitted
        e.moved |= bool(resolution.selected or resolution.admitted)
        return {id(c.state) for c in resolution.selected}

    def _observe(self, e: _Epoch) -> bool:
        formed = self._formed(e.to_observe[e.observe_grouped :], e.settled)
        for files in formed:
            e.observe_grouped += len(files)
            self._push((e.number, 1, e.observe_grouped), lambda files=files: self.steps.observe(files),
                       lambda sent, files=files, e=e: self._observed(e, files, sent))
        return bool(formed)

    def _observed(self, e: _Epoch, files: list[FileState], sent: int) -> None:
        self.requests += sent
        for s in files:
            self.steps.account(s)
            e.done.add(id(s))

    def _finish(self, e: _Epoch) -> bool:
        if e.finished:
            return False
        progressed = False
        while e.done_prefix < len(e.files) and id(e.files[e.done_prefix]) in e.done:
            s = e.files[e.done_prefix]
            if s.termination is None:
                self._next(e).candidates.append(s)
            e.done_prefix += 1
            progressed = True
        if e.settled and e.done_prefix == len(e.files):
            e.finished = progressed = True
            if e.files:
                following = self._next(e)
                following.candidates += e.admitted
                following.candidates_known = True
        return progressed

    def _next(self, e: _Epoch) -> _Epoch:
        if len(self.epochs) == e.number:
            self.epochs.append(_Epoch(e.number + 1))
        return self.epochs[e.number]

    def _push(self, priority: tuple[int, int, int], run: Callable[[], Any], finish: Callable[[Any], None]) -> None:
        heapq.heappush(self._ready, _Work(priority, run, finish))

