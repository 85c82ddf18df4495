from __future__ import annotations

from locator.retrieval import documents as docs
from locator.retrieval import terms
from locator.retrieval.documents import Granularity, documents
from locator.retrieval.memo import LRU
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
    return documents(path, _lines(source), Granularity.DEFINITION, max_lines, lambda: tuple(definitions(path, source)))


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


def test_the_same_content_is_tokenized_once_however_many_documents_it_is_cut_into(monkeypatch):
    calls = []
    real = terms.tokenize_lines

    def counting(lines, tokenizer):
        calls.append(lines)
        return real(lines, tokenizer)

    monkeypatch.setattr(terms, "tokenize_lines", counting)
    monkeypatch.setattr(terms, "_FILES", LRU(16))
    source = SOURCE + "# unique content for this test\n"
    chunks = _chunked("pkg/t.py", source, 120)
    whole = documents("pkg/t.py", _lines(source), Granularity.FILE, 120)
    first = docs.document_terms(chunks + whole, Tokenizer.PLAIN)
    again = docs.document_terms(documents("other/t.py", _lines(source), Granularity.FILE, 120), Tokenizer.PLAIN)
    assert calls == [_lines(source)]  # one file, its chunks and whole; then another task's copy: no tokenizing
    assert again.lengths[0] == first.lengths[-1]  # the same lines, a header as long
    docs.document_terms(documents("pkg/t.py", _lines(source + "changed\n"), Granularity.FILE, 120), Tokenizer.PLAIN)
    assert len(calls) == 2


def test_definition_documents_without_the_files_outline_are_refused():
    """Chunks are kept by content alone, so they must come from the file's own outline, never a guess."""
    import pytest

    with pytest.raises(ValueError, match="need the file's outline"):
        documents("pkg/t.py", _lines(SOURCE), Granularity.DEFINITION, 120)


def test_a_contents_outline_is_asked_for_only_while_its_chunks_are_not_memoized():
    asked = []
    source = SOURCE + "# content of the outline-asked test\n"

    def outline():
        asked.append(1)
        return tuple(definitions("pkg/t.py", source))

    first = documents("pkg/t.py", _lines(source), Granularity.DEFINITION, 120, outline)
    again = documents("other/t.py", _lines(source), Granularity.DEFINITION, 120, outline)
    assert asked == [1] and [d.chunk for d in first] == [d.chunk for d in again]
