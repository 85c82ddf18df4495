"""The subject's files as references resolve against them: by path, by a path's tail, by folder.

Built from the listing (metadata, as Phase 1 sees it; never gold). Each language's `references`
resolves what a line of its code refers to against this index; language-specific maps (Python's
module names) are made once per index through `memo`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Any, Protocol


class Listed(Protocol):
    """A listing entry (`locator.repository.FileInfo`): its subject path."""

    path: str


class FileIndex:
    def __init__(self, listing: list[Listed]):
        self.infos = {f.path: f for f in listing}
        self._by_tail: dict[str, set[str]] = {}
        self._in_dir: dict[str, list[str]] = {}
        for path in sorted(self.infos):
            parts = path.split("/")
            for i in range(1, len(parts)):
                self._by_tail.setdefault("/".join(parts[i:]), set()).add(path)
            self._in_dir.setdefault(posixpath.dirname(path), []).append(path)
        self._dirs_by_tail: dict[str, set[str]] = {}
        for folder in self._in_dir:
            parts = folder.split("/") if folder else []
            for i in range(len(parts)):
                self._dirs_by_tail.setdefault("/".join(parts[i:]), set()).add(folder)
        self._memo: dict[str, Any] = {}

    def exists(self, path: str) -> bool:
        return path in self.infos

    def path(self, written: str) -> str | None:
        """A written path: the subject path itself, or the one path it is the tail of."""
        written = written.removeprefix("./")
        if written in self.infos:
            return written
        tails = self._by_tail.get(written, set())
        return next(iter(tails)) if len(tails) == 1 else None

    def folder(self, tail: str) -> str | None:
        """The one folder whose path ends with `tail` (a Go import path's package)."""
        if tail in self._in_dir:
            return tail
        folders = self._dirs_by_tail.get(tail, set())
        return next(iter(folders)) if len(folders) == 1 else None

    def in_folder(self, folder: str) -> list[str]:
        return self._in_dir.get(folder, [])

    def memo(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]


def first_existing(index: FileIndex, candidates: list[str]) -> str | None:
    return next((c for c in candidates if index.exists(c)), None)


def joined(folder: str, relative: str) -> str | None:
    """`folder`/`relative` normalized, or None when it climbs out of the subject."""
    path = posixpath.normpath(posixpath.join(folder, relative))
    return None if path.startswith("../") or path == ".." or path.startswith("/") else path
