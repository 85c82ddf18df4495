"""What a retriever indexes: whole files, or definition-level chunks (tree-sitter), each with its
line span so a file's best chunks can become its evidence.

A document is indexed as a line range of its file's tokens (`locator.retrieval.terms`), which are
made once per process by (tokenizer, content hash): a file that is the same in two tasks or two
revisions of a repository is tokenized once, however many documents it is cut into. The caches change
time, never a score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from locator.hashing import blake3_hex
from locator.languages import language_of
from locator.languages.tags import Definition
from locator.retrieval.memo import LRU
from locator.retrieval.terms import DocumentTerms, file_token_lookups, files_tokens, tokenize_lines
from locator.text import Tokenizer
from locator.windows import LineRange

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


@dataclass(slots=True, eq=False)  # not frozen: a job makes one per chunk, hundreds of thousands (4.6x cheaper)
class Document:
    path: str
    chunk: Chunk
    lines: tuple[str, ...]  # the whole file's
    digest: str  # the whole file's BLAKE3: what its tokens are memoized by
    header: tuple[str, ...]  # indexed before the lines, as one line: the path and a definition's name; () none

    @property
    def text(self) -> str:
        """What is indexed: the header's line, then the chunk's lines."""
        body = "".join(self.lines[self.chunk.start_line - 1 : self.chunk.end_line])
        return f"{' '.join(self.header)}\n{body}" if self.header else body


_CHUNKS = LRU(100_000)


def memo_lookups() -> dict[str, tuple[int, int]]:
    """(hits, misses) of this process's document memos: a file's tokens and its chunks, by content."""
    return {"document_tokens": file_token_lookups(), "document_chunks": (_CHUNKS.hits, _CHUNKS.misses)}


def document_terms(docs: list[Document], tokenizer: Tokenizer) -> DocumentTerms:
    """What BM25 reads of these documents: each file tokenized once (by content), each document a line
    range of it plus its header."""
    files: dict[str, int] = {}  # every chunk of a file shares its file's tokens
    contents: dict[str, tuple[str, ...]] = {}
    owner = np.empty(len(docs), dtype=np.int64)
    for k, d in enumerate(docs):
        index = files.get(d.digest)
        if index is None:
            index = files[d.digest] = len(files)
            contents[d.digest] = d.lines
        owner[k] = index
    tokens = files_tokens(contents, tokenizer)
    headers = tokenize_lines([" ".join(d.header) for d in docs], tokenizer)  # all in one pass, unmemoized: unique
    return DocumentTerms(list(tokens.values()), owner,
                         np.fromiter((d.chunk.start_line for d in docs), dtype=np.int64, count=len(docs)),
                         np.fromiter((d.chunk.end_line for d in docs), dtype=np.int64, count=len(docs)),
                         headers.ids, np.diff(headers.line_starts))


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
              definitions: Callable[[], tuple[Definition, ...]] | None = None, digest: str | None = None) -> list[Document]:
    """A file's documents; at definition granularity, chunked by its `definitions` (asked only when
    this content's chunks are not memoized), which must be the file's outline
    (`locator.outline.definitions`, as the context's `index_outline` gives them): a function of its
    language and text, so the chunks are kept by those alone (hashing and comparing every definition
    on each lookup was a hot path; loading them for a memoized content, another). `digest`: the
    lines' BLAKE3 where the read gave it."""
    digest = digest or blake3_hex("".join(lines))
    if granularity is Granularity.FILE:
        chunks = [Chunk(1, max(len(lines), 1), "<file>")]
    else:
        if definitions is None:
            raise ValueError(f"{path}: definition-level documents need the file's outline (index_documents reads it)")
        key = (path.rsplit(".", 1)[-1], digest, max_chunk_lines)
        chunks = _CHUNKS.get(key, lambda: _definition_chunks(path, lines, definitions(), max_chunk_lines))
    # The path (and a definition's name) is indexed with every chunk: an issue that names the module
    # or the function should find it.
    return [Document(path, c, lines, digest, (path, "" if c.label.startswith("<") else c.label)) for c in chunks]


def window_documents(path: str, lines: tuple[str, ...], windows: list[LineRange]) -> list[Document]:
    """A file's windows as documents without a header (whole-file bm25's evidence)."""
    digest = blake3_hex("".join(lines))
    return [Document(path, Chunk(w.start_line, w.end_line, "<window>"), lines, digest, ()) for w in windows]


def index_documents(ctx: LocatorContext, path: str, granularity: Granularity, max_chunk_lines: int) -> list[Document]:
    """A candidate file's documents, read for an index through the context (a whole file, and at
    definition granularity its definitions: the context's outline cache parses a content once)."""
    if granularity is Granularity.FILE:
        read = ctx.index_read(path)
        return documents(path, read.lines, granularity, max_chunk_lines, digest=read.digest)
    found = ctx.index_outline(path)
    return documents(path, found.read.lines, granularity, max_chunk_lines, lambda: found.definitions, found.read.digest)
