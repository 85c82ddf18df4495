from __future__ import annotations

from collections import Counter

from locator.retrieval import documents as docs
from locator.retrieval.documents import Granularity, TermCounts, documents, terms_of
from locator.outline import definitions
from locator.text import Tokenizer

SOURCE = (
    "import os\n"                      # 1
    "\n"                               # 2
    "LIMIT = 3\n"                      # 3
    "\n"                               # 4
    "class Table:\n"                   # 5
    "    rows = []\n"                  # 6
    "\n"                               # 7
    "    def render(self):\n"          # 8
    "        return self.rows\n"       # 9
    "\n"                               # 10
    "def helper(value):\n"             # 11
    "    return value\n"               # 12
)


def _lines(source: str) -> tuple[str, ...]:
    return tuple(source.splitlines(keepends=True))


def _chunked(path: str, source: str, max_lines: int):
    return documents(path, _lines(source), Granularity.DEFINITION, max_lines, tuple(definitions(path, source)))


def test_definition_chunks_are_innermost_definitions_and_the_runs_between_them():
    chunks = [(d.chunk.start_line, d.chunk.end_line, d.chunk.label)
              for d in _chunked("pkg/t.py", SOURCE, 120)]
    # the class header and its attribute are a <module> run; the method and the function are whole
    assert chunks == [(1, 7, "<module>"), (8, 9, "Table.render"), (11, 12, "helper")]


def test_blank_runs_are_not_chunks_and_every_nonblank_line_is_in_exactly_one():
    found = _chunked("pkg/t.py", SOURCE, 120)
    covered = [n for d in found for n in range(d.chunk.start_line, d.chunk.end_line + 1)]
    assert len(covered) == len(set(covered))
    nonblank = {n for n, line in enumerate(_lines(SOURCE), 1) if line.strip()}
    assert nonblank <= set(covered)
    assert 10 not in covered  # the blank line between the class and the function


def test_long_chunks_are_split_and_names_are_indexed_with_the_text():
    long = "def big():\n" + "    x = 1\n" * 30
    found = _chunked("pkg/big.py", long, 10)
    assert [(d.chunk.start_line, d.chunk.end_line) for d in found] == [(1, 10), (11, 20), (21, 30), (31, 31)]
    assert all(d.text.startswith("pkg/big.py big\n") for d in found)


def test_a_file_without_a_grammar_is_cut_into_plain_pieces():
    found = _chunked("pkg/notes.txt", "a\nb\nc\n", 2)
    assert [(d.chunk.start_line, d.chunk.end_line, d.chunk.label) for d in found] == [(1, 2, "<module>"), (3, 3, "<module>")]


def test_file_granularity_is_one_document():
    [doc] = documents("pkg/t.py", _lines(SOURCE), Granularity.FILE, 120)
    assert (doc.chunk.start_line, doc.chunk.end_line) == (1, 12) and doc.text.endswith(SOURCE)


def test_the_same_content_is_tokenized_once(monkeypatch):
    calls = []

    def counting(source: str, tokenizer: Tokenizer) -> Counter[str]:
        calls.append(source)
        return Counter(source.split())

    monkeypatch.setattr(docs, "term_counts", counting)
    monkeypatch.setattr(docs, "_TERMS", docs._LRU(16))
    content = "alpha beta alpha unique-content-for-this-test"
    expected = TermCounts(counts={"alpha": 2, "beta": 1, "unique-content-for-this-test": 1}, length=4)
    assert terms_of(content, Tokenizer.PLAIN) == terms_of(content, Tokenizer.PLAIN) == expected
    assert calls == [content]  # the second file (another task, another revision) with that content: no tokenizing
    terms_of(content + " changed", Tokenizer.PLAIN)
    assert len(calls) == 2


def test_definition_documents_without_the_files_outline_are_refused():
    """Chunks are kept by content alone, so they must come from the file's own outline, never a guess."""
    import pytest

    with pytest.raises(ValueError, match="need the file's outline"):
        documents("pkg/t.py", _lines(SOURCE), Granularity.DEFINITION, 120)
