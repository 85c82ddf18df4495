"""A definitions index over a subject: every definition name to its definitions (path, qualified
name, kind, line span, signature line), from each file's outline (its language's tags queries).
Cached per process by the content of the files it was built from.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from locator.hashing import blake3_hex
from locator.languages import language_of
from locator.languages.tags import Definition


@dataclass(frozen=True)
class IndexedDefinition:
    path: str
    name: str
    qualname: str  # `Class.method`, `function`, `Class`
    kind: str
    start_line: int
    end_line: int
    signature: str  # the definition's own first line, as written

    @property
    def language(self) -> str:
        return language_of(self.path).name


def indexed_definitions(path: str, source: str, definitions: tuple[Definition, ...]) -> list[IndexedDefinition]:
    """Every definition of one file (its outline's, outer before inner) with its signature."""
    lines = source.splitlines()
    return [IndexedDefinition(path, d.name, d.qualname, d.kind, d.start_line, d.end_line,
                              lines[d.signature_line - 1].strip() if d.signature_line <= len(lines) else "")
            for d in definitions]


class DefinitionIndex:
    def __init__(self, found: Iterable[IndexedDefinition]):
        self.by_name: dict[str, list[IndexedDefinition]] = {}
        for d in found:
            self.by_name.setdefault(d.name, []).append(d)
        for defs in self.by_name.values():
            defs.sort(key=lambda d: (d.path, d.start_line))

    def named(self, name: str) -> list[IndexedDefinition]:
        return self.by_name.get(name, [])


_CACHE: OrderedDict[str, DefinitionIndex] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 8


def build_index(files: dict[str, str], outline: Callable[[str, str], tuple[Definition, ...]]) -> DefinitionIndex:
    """The index of every file of a registered language, from each file's outline (`outline(path,
    text)`, as `locator.outline` or the context's `index_outline` gives it: a function of the file's
    content, asked only for an index not made yet); the same content is indexed once per process."""
    indexed = {p: text for p, text in files.items() if language_of(p) is not None}
    digest = blake3_hex("\n".join(f"{p}\0{blake3_hex(text)}" for p, text in sorted(indexed.items())))
    with _CACHE_LOCK:
        if digest in _CACHE:
            _CACHE.move_to_end(digest)
            return _CACHE[digest]
    index = DefinitionIndex(d for p, text in sorted(indexed.items())
                            for d in indexed_definitions(p, text, outline(p, text)))
    with _CACHE_LOCK:
        _CACHE[digest] = index
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return index
