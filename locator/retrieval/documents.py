"""What a retriever indexes: whole files, or definition-level chunks (tree-sitter), each with its
line span so a file's best chunks can become its evidence.

A document is indexed as its term counts (a bag of words: all BM25 reads), cached per process by
(tokenizer, content hash): a file that is the same in two tasks or two revisions of a repository is
tokenized once. The cache changes time, never a score.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from locator.hashing import blake3_hex
from locator.languages import language_of
from locator.languages.tags import Definition
from locator.text import Tokenizer, term_counts, tokens

if TYPE_CHECKING:
    from locator.base import LocatorContext


class Granularity(StrEnum):
    FILE = "file"  # one document per file
    DEFINITION = "definition"  # one per innermost definition and per run of lines outside them


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    label: str  # the definition's qualified name, or `<module>`


@dataclass(frozen=True)
class TermCounts:
    counts: dict[str, int]  # token -> occurrences in the document
    length: int  # all its tokens, repeats included (BM25's document length)


@dataclass(frozen=True)
class Document:
    path: str
    chunk: Chunk
    text: str  # what is indexed: the path and label, then the lines


class _LRU:
    """A bounded, thread-safe memo (tasks of one job may run concurrently)."""

    def __init__(self, size: int):
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._size = size
        self.hits = self.misses = 0  # lookups answered from the memo, and made afresh (a job logs the rate)

    def get(self, key, make: Callable):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
        value = make()
        with self._lock:
            self.misses += 1
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


_TERMS = _LRU(400_000)
_CHUNKS = _LRU(100_000)


def memo_lookups() -> dict[str, tuple[int, int]]:
    """(hits, misses) of this process's document memos: a file's tokens and its chunks, by content."""
    return {"document_tokens": (_TERMS.hits, _TERMS.misses), "document_chunks": (_CHUNKS.hits, _CHUNKS.misses)}


def terms_of(text: str, tokenizer: Tokenizer) -> TermCounts:
    """A document's term counts, made once per content."""
    return _TERMS.get((tokenizer, blake3_hex(text)), lambda: _terms(text, tokenizer))


def _terms(text: str, tokenizer: Tokenizer) -> TermCounts:
    counts = term_counts(text, tokenizer)
    return TermCounts(counts=dict(counts), length=sum(counts.values()))


def tokens_of(text: str, tokenizer: Tokenizer) -> tuple[str, ...]:
    """A query's tokens, in order (a repeated token weighs more)."""
    return tuple(tokens(text, tokenizer))


def _split(start: int, end: int, label: str, max_lines: int) -> list[Chunk]:
    return [Chunk(s, min(s + max_lines - 1, end), label) for s in range(start, end + 1, max_lines)]


def _definition_chunks(path: str, lines: tuple[str, ...], defs: tuple[Definition, ...], max_lines: int) -> list[Chunk]:
    """Innermost definitions whole (split past `max_lines`), and each run of lines outside them
    (module code, class headers and attributes) as `<module>` chunks; blank runs are dropped."""
    if language_of(path) is None or not lines:
        return _split(1, len(lines), "<module>", max_lines) if lines else []
    # Pre-order (a definition, then those inside it): a definition is innermost unless the next one
    # starts inside it. Linear, where comparing every pair was quadratic in a file's definitions.
    leaves = sorted((d for d, following in zip(defs, [*defs[1:], None])
                     if following is None or following.start_line > d.end_line), key=lambda d: d.start_line)
    chunks: list[Chunk] = []
    line = 1
    for leaf in leaves:
        if leaf.start_line < line:  # overlapping leaves cannot happen in a parse tree; be safe
            continue
        if leaf.start_line > line:
            chunks += _gap(lines, line, leaf.start_line - 1, max_lines)
        chunks += _split(leaf.start_line, leaf.end_line, leaf.qualname, max_lines)
        line = leaf.end_line + 1
    if line <= len(lines):
        chunks += _gap(lines, line, len(lines), max_lines)
    return chunks


def _gap(lines: tuple[str, ...], start: int, end: int, max_lines: int) -> list[Chunk]:
    if not any(lines[n - 1].strip() for n in range(start, end + 1)):
        return []
    return _split(start, end, "<module>", max_lines)


def documents(path: str, lines: tuple[str, ...], granularity: Granularity, max_chunk_lines: int,
              definitions: tuple[Definition, ...] | None = None) -> list[Document]:
    """A file's documents; at definition granularity, chunked by its `definitions`, which must be the
    file's outline (`locator.outline.definitions`, as the context's `index_outline` gives them): a
    function of its language and text, so the chunks are kept by those alone (hashing and comparing
    every definition on each lookup was a hot path)."""
    if granularity is Granularity.FILE:
        chunks = [Chunk(1, max(len(lines), 1), "<file>")]
    else:
        if definitions is None:
            raise ValueError(f"{path}: definition-level documents need the file's outline (index_documents reads it)")
        key = (path.rsplit(".", 1)[-1], blake3_hex("".join(lines)), max_chunk_lines)
        chunks = _CHUNKS.get(key, lambda: _definition_chunks(path, lines, definitions, max_chunk_lines))
    # The path (and a definition's name) is indexed with every chunk: an issue that names the module
    # or the function should find it.
    return [Document(path, c, f"{path} {'' if c.label.startswith('<') else c.label}\n"
                              + "".join(lines[c.start_line - 1 : c.end_line])) for c in chunks]


def index_documents(ctx: LocatorContext, path: str, granularity: Granularity, max_chunk_lines: int) -> list[Document]:
    """A candidate file's documents, read for an index through the context (a whole file, and at
    definition granularity its definitions: the context's outline cache parses a content once)."""
    if granularity is Granularity.FILE:
        return documents(path, ctx.index_read(path).lines, granularity, max_chunk_lines)
    found = ctx.index_outline(path)
    return documents(path, found.read.lines, granularity, max_chunk_lines, found.definitions)
