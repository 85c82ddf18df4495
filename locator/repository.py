"""Read-only, line-addressed view of a materialized subject that meters what it hands out."""

from __future__ import annotations

import errno
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, cached_property, partial
from pathlib import Path, PurePosixPath

from locator.definitions import DefinitionIndex, build_index
from locator.files import write_atomically
from locator.hashing import blake3_hex
from locator.languages import language_of, module_name
from locator.languages.sources import (Excluded, attribute_marks, attribute_rules, gitattributes_folder,
                                       marked_generated)
from locator.outline import Definition, definitions
from locator.system_one.tokens import count_tokens

DEFAULT_MAX_FILE_BYTES = 1_000_000
_SNIFF_BYTES = 8192


class PathOutsideSubjectError(ValueError):
    """A path that is absolute or climbs out of the subject root."""


class UnknownFileError(KeyError):
    """A path that is not a readable text file of the subject."""


class SkipReason(StrEnum):
    BINARY = "binary"
    NOT_UTF8 = "not_utf8"
    NAME_NOT_UTF8 = "name_not_utf8"  # a path that cannot be named in UTF-8 (JSON, hashes, questions)
    OVERSIZED = "oversized"
    SYMLINK_OUTSIDE_ROOT = "symlink_outside_root"
    SYMLINK_LOOP = "symlink_loop"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class FileInfo:
    path: str
    size_bytes: int
    line_count: int


@dataclass(frozen=True)
class ReadResult:
    path: str
    start_line: int
    end_line: int
    lines: tuple[str, ...]
    digest: str | None = None  # the whole file's BLAKE3, given with a whole-file index read (indexes key memos by it)

    @property
    def text(self) -> str:
        return "".join(self.lines)


@dataclass(frozen=True)
class Outline:
    """A file's definitions and the signature line of each, as shown to a locator."""

    path: str
    definitions: tuple[Definition, ...]
    signatures: dict[int, str]


@dataclass(frozen=True)
class IndexedFile:
    """A whole file and its definitions, for an index (definition-level chunks, an entity index)."""

    read: ReadResult
    load: Callable[[], tuple[Definition, ...]]  # its definitions, when first asked (the context's door)

    @cached_property
    def definitions(self) -> tuple[Definition, ...]:
        """Parsed (or read from the outline cache) when first asked: an index that memoizes what it
        made of this content by the content alone needs no outline to be loaded again."""
        return self.load()


class SearchKind(StrEnum):
    DEFINITION = "definition"  # structural: definitions named `query`; `Owner.member` / `module.Class` qualified
    TEXT = "text"  # auxiliary, lexical: lines holding `query` as a whole word


@dataclass(frozen=True)
class SearchHit:
    path: str
    line: int
    end_line: int  # a definition's last line; a text hit's own line
    symbol: str | None  # a definition's qualified name
    text: str  # the signature or the matching line, as handed out

    def render(self) -> str:
        return f"{self.path}:{self.line}-{self.end_line} {self.symbol or ''} | {self.text}"


@dataclass(frozen=True)
class SearchResult:
    query: str
    kind: SearchKind
    hits: tuple[SearchHit, ...]
    truncated: bool  # more hits existed than the caps let through
    response_tokens: int  # exact o200k tokens of the rendered hits


@dataclass(frozen=True)
class ReadCounters:
    reads: int
    lines: int  # lines handed to the locator (source_lines_read)
    bytes: int
    index_lines: int = 0  # lines read to build an index (index_lines): never handed to the locator as text


def _loops(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _indexed(path: str) -> bool:
    return language_of(path) is not None


def normalize_relpath(path: str) -> str:
    """Canonical subject-relative POSIX path; raises for anything that escapes the root."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute():
        raise PathOutsideSubjectError(f"absolute path not allowed in a subject: {path!r}")
    parts: list[str] = []
    for part in pure.parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise PathOutsideSubjectError(f"path escapes the subject root: {path!r}")
            parts.pop()
            continue
        parts.append(part)
    if not parts:
        raise PathOutsideSubjectError(f"empty path: {path!r}")
    return "/".join(parts)


@dataclass(frozen=True)
class _Listing:
    """One enumeration of a frozen tree: its files' metadata, never their lines (each view keeps the
    lines it read; no cache of subject lines outlives its view)."""

    files: dict[str, FileInfo]
    skipped: dict[SkipReason, int]
    marks: dict[str, Excluded]  # files that say they are generated, or `.gitattributes` marks so


_LISTING_SCHEMA = 2


@cache
def _listing_rules() -> str:
    """What a saved listing was made by: this module's source, so a change to what is listed or
    skipped never reuses an old listing."""
    return blake3_hex(Path(__file__).read_bytes())[:16]


def _read_listing(path: Path) -> _Listing | None:
    """A saved listing, or None when there is none or it is unreadable (it is then made again)."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved["schema_version"] != _LISTING_SCHEMA:
            return None
        files = {p: FileInfo(path=p, size_bytes=size, line_count=lines) for p, size, lines in saved["files"]}
        skipped = {reason: 0 for reason in SkipReason} | {SkipReason(r): int(n) for r, n in saved["skipped"].items()}
        return _Listing(files, skipped, {p: Excluded(r) for p, r in saved["marks"].items()})
    except (OSError, ValueError, KeyError, TypeError):
        return None


_LISTINGS: OrderedDict[tuple[Path, int], _Listing] = OrderedDict()
_LISTINGS_LOCK = threading.Lock()
_LISTINGS_SIZE = 4  # subjects; tasks of one repository revision run one after another


class RepositoryView:
    """Enumerates the tree once; every `read` is counted for cost accounting.

    Binary, non-UTF-8 and oversized files are skipped (and counted by reason) so that no
    locator can spend budget on them; symlinks are followed only when they stay inside the root.

    `frozen=True` is for a tree that cannot change while this process runs (a verified,
    content-addressed subject): its listing is shared by every view of it, so a job's tasks on one
    subject enumerate it once. Its lines are not: each view reads what it hands out itself, so no
    process-wide cache of subject lines exists for a locator to read past its meter.
    `listing_dir` (frozen only) keeps that listing between processes, so a tree that has not
    changed is not read whole again by every job.
    """

    def __init__(self, root: str | os.PathLike[str], max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 frozen: bool = False, listing_dir: Path | None = None):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise FileNotFoundError(f"subject root is not a directory: {self.root}")
        self.max_file_bytes = max_file_bytes
        self._lock = threading.Lock()
        self._reads = self._lines = self._bytes = self._index_lines = 0
        self._index: DefinitionIndex | None = None  # built on the first definition search
        self.skipped: dict[SkipReason, int] = {reason: 0 for reason in SkipReason}
        if not frozen:
            self._cache: dict[str, tuple[tuple[str, ...], str]] = {}
            self._files, self.marks = self._enumerate()
            return
        self._cache = {}
        listing = self._shared_listing(listing_dir)
        self._files, self.marks = listing.files, listing.marks
        self.skipped = dict(listing.skipped)

    def _shared_listing(self, listing_dir: Path | None) -> _Listing:
        key = (self.root, self.max_file_bytes)
        with _LISTINGS_LOCK:
            if key in _LISTINGS:
                _LISTINGS.move_to_end(key)
                return _LISTINGS[key]
        saved = listing_dir / f"listing-{_listing_rules()}-{self.max_file_bytes}.json" if listing_dir else None
        listing = _read_listing(saved) if saved else None
        if listing is None:
            files, marks = self._enumerate()
            listing = _Listing(files, dict(self.skipped), marks)
            if saved:
                write_atomically(saved, json.dumps({
                    "schema_version": _LISTING_SCHEMA, "skipped": {r.value: n for r, n in listing.skipped.items()},
                    "marks": {p: r.value for p, r in listing.marks.items()},
                    "files": [[f.path, f.size_bytes, f.line_count] for f in listing.files.values()]}))
        with _LISTINGS_LOCK:
            _LISTINGS[key] = listing
            while len(_LISTINGS) > _LISTINGS_SIZE:
                _LISTINGS.popitem(last=False)
        return listing

    def _enumerate(self) -> tuple[dict[str, FileInfo], dict[str, Excluded]]:
        """The readable files, and the marks of generated and vendored ones (see `languages.sources`):
        a file's own `@generated` line is seen while it is read here, `.gitattributes` after the walk."""
        files: dict[str, FileInfo] = {}
        generated: dict[str, Excluded] = {}
        rules = []
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            base = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if self._dir_allowed(base / d))
            for name in sorted(filenames):
                full = base / name
                rel = full.relative_to(self.root).as_posix()
                inspected = self._inspect(full, rel)
                if inspected is None:
                    continue
                info, text = inspected
                files[rel] = info
                if name == ".gitattributes":
                    rules += attribute_rules(gitattributes_folder(rel), text)
                elif language_of(rel) is not None and marked_generated(text):
                    generated[rel] = Excluded.MARKED_GENERATED
        return files, attribute_marks(rules, files) | generated

    def _symlink_problem(self, path: Path) -> SkipReason | None:
        """Why a symlink cannot be followed: it loops, or it leaves the root."""
        try:
            path.resolve(strict=True).relative_to(self.root)
        except (RuntimeError, OSError):  # RuntimeError: a loop on Python 3.11; OSError: ELOOP or dangling
            return SkipReason.SYMLINK_LOOP if _loops(path) else SkipReason.UNREADABLE
        except ValueError:
            return SkipReason.SYMLINK_OUTSIDE_ROOT
        return None

    def _dir_allowed(self, path: Path) -> bool:
        if path.is_symlink():
            problem = self._symlink_problem(path)
            if problem is not None:
                self.skipped[problem] += 1
            # A symlinked directory inside the root is the same files twice: skip it silently.
            return False
        return True

    def _inspect(self, full: Path, rel: str) -> tuple[FileInfo, str] | None:
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            self.skipped[SkipReason.NAME_NOT_UTF8] += 1
            return None
        if full.is_symlink():
            problem = self._symlink_problem(full)
            if problem is not None:
                self.skipped[problem] += 1
                return None
        try:
            if not full.is_file():
                return None
            size = full.stat().st_size
            if size > self.max_file_bytes:
                self.skipped[SkipReason.OVERSIZED] += 1
                return None
            data = full.read_bytes()
        except OSError:
            self.skipped[SkipReason.UNREADABLE] += 1
            return None
        if b"\0" in data[:_SNIFF_BYTES]:
            self.skipped[SkipReason.BINARY] += 1
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.skipped[SkipReason.NOT_UTF8] += 1
            return None
        line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        return FileInfo(path=rel, size_bytes=size, line_count=line_count), text

    def files(self) -> list[FileInfo]:
        return list(self._files.values())

    def stat(self, path: str) -> FileInfo:
        rel = normalize_relpath(path)
        try:
            return self._files[rel]
        except KeyError:
            raise UnknownFileError(f"not a readable text file of the subject: {rel!r}") from None

    def _lines_of(self, rel: str) -> tuple[str, ...]:
        return self._content_of(rel)[0]

    def _content_of(self, rel: str) -> tuple[tuple[str, ...], str]:
        """A file's lines and its text's BLAKE3 (what indexes key their memos by), read once per view."""
        with self._lock:
            cached = self._cache.get(rel)
        if cached is None:
            text = (self.root / rel).read_text(encoding="utf-8")
            cached = (tuple(text.splitlines(keepends=True)), blake3_hex(text))
            with self._lock:
                self._cache[rel] = cached
        return cached

    def read(self, path: str, start_line: int = 1, end_line: int | None = None) -> ReadResult:
        """Lines start_line..end_line, 1-based and inclusive, clamped to the file; counted."""
        info = self.stat(path)
        if start_line < 1:
            raise ValueError(f"start_line must be >= 1, got {start_line}")
        end = info.line_count if end_line is None else min(end_line, info.line_count)
        if end < start_line:
            lines: tuple[str, ...] = ()
        else:
            lines = self._lines_of(info.path)[start_line - 1 : end]
        self._count(lines)
        return ReadResult(info.path, start_line, max(end, start_line - 1), lines)

    def index_read(self, path: str) -> ReadResult:
        """A whole file read to build a retrieval index. Metering rule: its lines count as
        `index_lines`, not as lines read: an index turns them into scores, never into text a
        locator is shown (what it then shows is read again, with `read`)."""
        info = self.stat(path)
        lines, digest = self._content_of(info.path)
        with self._lock:
            self._index_lines += len(lines)
        return ReadResult(info.path, 1, len(lines), lines, digest)

    def index_outline(self, path: str) -> IndexedFile:
        """A whole file and its definitions, for an index. Metering rule: as `index_read` (its lines
        count as `index_lines`); the parse reads nothing more. The definitions come from the outline
        cache (on disk in a job: a file's content is parsed once across jobs)."""
        read = self.index_read(path)
        return IndexedFile(read, partial(self.file_definitions, read))

    def file_definitions(self, read: ReadResult) -> tuple[Definition, ...]:
        """A whole-file read's definitions (the outline cache); what `index_outline` loads when asked."""
        return tuple(definitions(read.path, "".join(read.lines)))

    def outline(self, path: str) -> Outline:
        """The file's definitions (a structure parse) and their signature lines. Metering rule: the
        signature lines handed out count as read, one line per definition; the parse that finds
        them reads nothing the locator sees."""
        info = self.stat(path)
        lines = self._lines_of(info.path)
        defs = tuple(definitions(info.path, "".join(lines)))
        signatures = {d.signature_line: lines[d.signature_line - 1] for d in defs if 1 <= d.signature_line <= len(lines)}
        self._count(signatures.values())
        return Outline(info.path, defs, signatures)

    def search(self, query: str, kind: SearchKind, max_hits: int, max_response_tokens: int) -> SearchResult:
        """One bounded indexed search: at most `max_hits` hits and `max_response_tokens` exact tokens of
        rendered hits, in (path, line) order. Metering rule: each hit's line (a definition's signature,
        a matching line) counts as read; building the definitions index (once per view) and a text
        search's scan count every line they go over as `index_lines`."""
        if kind is SearchKind.DEFINITION:
            found = self._definition_hits(query)
        else:
            pattern = re.compile(rf"(?<![\w]){re.escape(query)}(?![\w])")
            scanned = {path: self._lines_of(path) for path in sorted(p for p in self._files if _indexed(p))}
            with self._lock:
                self._index_lines += sum(len(lines) for lines in scanned.values())
            found = [SearchHit(path, n, n, None, line.strip())
                     for path, lines in scanned.items() for n, line in enumerate(lines, 1) if pattern.search(line)]
        hits, tokens = [], 0
        for hit in found[:max_hits]:
            cost = count_tokens(hit.render() + "\n")
            if tokens + cost > max_response_tokens:
                break
            hits.append(hit)
            tokens += cost
        self._count(h.text for h in hits)
        return SearchResult(query, kind, tuple(hits), len(hits) < len(found), tokens)

    def _definitions(self) -> DefinitionIndex:
        with self._lock:
            index = self._index
        if index is None:
            sources = {p: self._lines_of(p) for p in self._files if _indexed(p)}
            index = build_index({p: "".join(lines) for p, lines in sources.items()},
                                lambda path, text: tuple(definitions(path, text)))
            with self._lock:
                if self._index is None:  # another thread may have built it meanwhile: charge once
                    self._index = index
                    self._index_lines += sum(len(lines) for lines in sources.values())
                index = self._index
        return index

    def _definition_hits(self, query: str) -> list[SearchHit]:
        owner, _, name = query.rpartition(".")
        found = []
        for d in self._definitions().named(name):
            if owner and not (d.qualname.endswith(query) or (d.qualname == name and module_name(d.path) == owner)):
                continue  # `Owner.member` must be the qualified name; `module.Class` must live in that module
            found.append(SearchHit(d.path, d.start_line, d.end_line, d.qualname, d.signature))
        return found

    def _count(self, lines) -> None:
        lines = list(lines)
        with self._lock:
            self._reads += 1
            self._lines += len(lines)
            self._bytes += sum(len(line.encode("utf-8")) for line in lines)

    def counters(self) -> ReadCounters:
        with self._lock:
            return ReadCounters(self._reads, self._lines, self._bytes, self._index_lines)
