"""What BM25 reads of a corpus: each document's length and, for a query's terms, how often each
document holds them.

A file is tokenized once per content into integer term ids in order, with the offset where each of its
lines starts (`FileTokens`); every document cut from it (the whole file, its definition chunks, its
windows) is then a line range of those ids plus its own header (the path and a definition's name). A
chunk used to be tokenized apart from its file: at definition granularity a job tokenized every line
twice and built a term dict per chunk (166,553 chunk documents on 37 SWE-bench Lite tasks, the
largest part of a hybrid job). Counting a term in every document is now two binary searches over the
term's sorted positions. A word never spans a line (no line break is a word character), so a range's
counts are exactly its text's counts.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

import numpy as np

from locator.retrieval.memo import LRU
from locator.text import WORD, WORD_CACHE_SIZE, WORD_TOKENS, Tokenizer


class _Vocabulary:
    """Term -> id for this process; ids never leave it (memos hold them, results never do). Unbounded:
    one entry per distinct term the process tokenized (the term strings themselves are interned by
    the tokenizer already), unlike the bounded word caches, since a memoized file's ids must keep
    their meaning."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._lock = threading.Lock()

    def ids(self, terms: Iterable[str]) -> tuple[int, ...]:
        found = self._ids
        out = []
        for term in terms:
            term_id = found.get(term)
            if term_id is None:
                with self._lock:
                    term_id = found.setdefault(term, len(found))
            out.append(term_id)
        return tuple(out)

    def known(self, terms: Iterable[str]) -> dict[str, int]:
        """The ids of those terms some tokenized text held (a term never seen is in no document)."""
        return {t: self._ids[t] for t in terms if t in self._ids}


_VOCABULARY = _Vocabulary()


def _word_ids_of(tokenizer: Tokenizer):
    word_tokens = WORD_TOKENS[tokenizer]
    return lru_cache(maxsize=WORD_CACHE_SIZE)(lambda word: _VOCABULARY.ids(word_tokens(word)))


# A word's term ids, per tokenizer (one argument: the lookup is a file's inner loop)
WORD_IDS = {tokenizer: _word_ids_of(tokenizer) for tokenizer in Tokenizer}


@dataclass(frozen=True)
class FileTokens:
    ids: np.ndarray  # int32 term ids of the whole file, in order
    line_starts: np.ndarray  # int64, one per line and one past the last: where line n's ids start is [n - 1]

    def span(self, start_line: int, end_line: int) -> tuple[int, int]:
        """Lines start_line..end_line (1-based, inclusive, clamped to the file) as a range of `ids`."""
        last = len(self.line_starts) - 1
        return int(self.line_starts[min(start_line - 1, last)]), int(self.line_starts[min(end_line, last)])


_FILES = LRU(50_000)

# Lines joined by a character no line holds (checked) so that one regex pass over the file finds its
# words and its line ends together.
_JOIN = "\x00"
_WORD_OR_JOIN = re.compile(WORD.pattern + "|" + _JOIN)


def file_token_lookups() -> tuple[int, int]:
    """(hits, misses) of the file-tokens memo."""
    return _FILES.hits, _FILES.misses


def files_tokens(contents: dict[str, tuple[str, ...]], tokenizer: Tokenizer) -> dict[str, FileTokens]:
    """Each file's term ids and line starts (by its content's BLAKE3), made once per (tokenizer, content).
    (Tokenizing the files not memoized together, in one pass, was measured no faster: the cost is per word.)"""
    return {digest: _FILES.get((tokenizer, digest), lambda lines=lines: tokenize_lines(lines, tokenizer))
            for digest, lines in contents.items()}


def tokenize_lines(lines: Sequence[str], tokenizer: Tokenizer) -> FileTokens:
    """The ids of a sequence of texts in order (a file's lines; a corpus's headers), with where each starts."""
    words = _WORD_OR_JOIN.findall(_JOIN.join(lines))
    if words.count(_JOIN) != max(len(lines) - 1, 0):  # a line holds the joining character: go line by line
        per_line = [tuple(chain.from_iterable(map(WORD_IDS[tokenizer], WORD.findall(line)))) for line in lines]
        starts = np.zeros(len(lines) + 1, dtype=np.int64)
        np.cumsum([len(ids) for ids in per_line], out=starts[1:])
        return FileTokens(np.fromiter(chain.from_iterable(per_line), dtype=np.int32, count=int(starts[-1])), starts)
    distinct = list(dict.fromkeys(words))
    index = dict(zip(distinct, range(len(distinct))))
    occurrences = np.fromiter(map(index.__getitem__, words), dtype=np.int64, count=len(words))
    # each distinct word's ids, laid end to end (the joining character is no word: it has none)
    per_word = list(map(WORD_IDS[tokenizer], distinct))
    word_length = np.fromiter(map(len, per_word), dtype=np.int64, count=len(per_word))
    word_first = np.zeros(len(per_word), dtype=np.int64)
    np.cumsum(word_length[:-1], out=word_first[1:])
    flat = np.fromiter(chain.from_iterable(per_word), dtype=np.int32, count=int(word_length.sum()))
    # every occurrence's ids, in order: occurrence k contributes flat[word_first[w_k] : + word_length[w_k]]
    taken = word_length[occurrences]
    before = np.zeros(len(occurrences) + 1, dtype=np.int64)
    np.cumsum(taken, out=before[1:])
    total = int(before[-1])
    offset = np.repeat(word_first[occurrences] - before[:-1], taken) + np.arange(total, dtype=np.int64)
    ids = flat[offset] if total else np.zeros(0, dtype=np.int32)
    join = index.get(_JOIN)
    breaks = before[:-1][occurrences == join] if join is not None else np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], breaks, [total])).astype(np.int64) if lines else np.zeros(1, dtype=np.int64)
    return FileTokens(ids, starts)


class DocumentTerms:
    """A corpus as ranges of one id stream (each distinct file's ids once) plus per-document headers,
    built from arrays (a corpus is tens of thousands of chunks: no per-document objects)."""

    def __init__(self, files: Sequence[FileTokens], owner: np.ndarray, start_lines: np.ndarray,
                 end_lines: np.ndarray, header_ids: np.ndarray, header_lengths: np.ndarray):
        """Document k is lines start_lines[k]..end_lines[k] (1-based, inclusive, clamped to the file)
        of files[owner[k]], after its header: header_lengths[k] ids of header_ids, in document order."""
        id_base = np.zeros(len(files) + 1, dtype=np.int64)
        np.cumsum([len(f.ids) for f in files], out=id_base[1:])
        line_count = np.array([len(f.line_starts) - 1 for f in files], dtype=np.int64)
        line_base = np.zeros(len(files) + 1, dtype=np.int64)
        np.cumsum(line_count + 1, out=line_base[1:])
        line_starts = np.concatenate([f.line_starts + base for f, base in zip(files, id_base)]) if files else id_base
        self.stream = np.concatenate([f.ids for f in files]) if files else np.zeros(0, dtype=np.int32)
        first = line_base[owner] + np.minimum(start_lines - 1, line_count[owner])
        last = line_base[owner] + np.minimum(end_lines, line_count[owner])
        self.starts, self.ends = line_starts[first], line_starts[last]
        self.header_ids = header_ids
        self.header_owner = np.repeat(np.arange(len(owner)), header_lengths)
        self.lengths = (self.ends - self.starts) + header_lengths  # every token, repeats included

    def __len__(self) -> int:
        return len(self.lengths)

    def frequencies(self, term_ids: Sequence[int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """For each term: the documents holding it (ascending) and how often each does."""
        wanted = np.asarray(sorted(set(term_ids)), dtype=np.int32)
        positions = np.flatnonzero(np.isin(self.stream, wanted))
        found = self.stream[positions]
        in_headers = np.isin(self.header_ids, wanted)
        header_found, header_owner = self.header_ids[in_headers], self.header_owner[in_headers]
        out = {}
        for term in wanted:
            at = positions[found == term]  # ascending
            counts = np.searchsorted(at, self.ends) - np.searchsorted(at, self.starts)
            counts += np.bincount(header_owner[header_found == term], minlength=len(self))
            rows = np.flatnonzero(counts)
            out[int(term)] = (rows, counts[rows])
        return out


def known_term_ids(terms: Iterable[str]) -> dict[str, int]:
    return _VOCABULARY.known(terms)
