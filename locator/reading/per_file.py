"""Per-file runtimes run concurrently: each file's loop is independent of the others (they share
only the task text), so the context runs as many at once as the endpoint takes requests
(`LocatorContext.run_concurrently`), each with one request in flight, and no result depends on the
order they finish in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from locator.base import LocatorContext
from locator.reading.state import FileState

R = TypeVar("R")


def run_per_file(ctx: LocatorContext, runtimes: list[R], state_of: Callable[[R], FileState],
                 run: Callable[[R], None]) -> None:
    """Runs `run` on every runtime, longest file first: long files tend to take the most epochs, so
    one that started last would hold the tail."""
    ctx.run_concurrently(run, sorted(runtimes, key=lambda r: (-state_of(r).line_count, state_of(r).path)))
