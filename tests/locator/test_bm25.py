from __future__ import annotations

import importlib
import itertools
import random
from collections import Counter
from pathlib import Path

import bm25s
import numpy as np
import pytest

from locator.bm25 import bm25_scores
from locator.hashing import blake3_hex
from locator.retrieval.documents import Chunk, Document, document_terms
from locator.retrieval.query import build_query
from locator.retrieval.terms import known_term_ids
from locator.text import Tokenizer, tokens
from locator.repository import RepositoryView
from locator.runtime import localize
from locator.task import SubjectIdentity, Task
from locator.trace import Trace
from tests.configs import locator as compose_locator
from tests.conftest import write_tree

FILLER = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n" for i in range(30))


def _repo(tmp_path):
    return RepositoryView(
        write_tree(
            tmp_path,
            {
                "pkg/wheel.py": FILLER + "def parse_wheel_filename(name):\n    raise InvalidWheelFilename(name)\n" + FILLER,
                "pkg/other.py": FILLER,
                "pkg/notes.txt": "parse_wheel_filename parse_wheel_filename",
            },
        )
    )


TASK = Task(id="t", text="parse_wheel_filename raises InvalidWheelFilename for valid names",
            subject=SubjectIdentity(repository="r", revision="v"))


def test_ranks_the_matching_file_first_and_points_at_the_matching_lines(tmp_path):
    repo = _repo(tmp_path)
    locator = compose_locator("bm25", top_files=5, window_lines=10, window_stride=5, windows_per_file=1)
    result = localize(locator, TASK, repo, None, Trace())
    assert result.ranked_paths() == ["pkg/wheel.py"]
    evidence = result.files[0].evidence[0]
    assert evidence.start_line <= 91 <= evidence.end_line
    assert result.files[0].confidence.score == 1.0


def test_cost_charges_the_index_apart_from_the_lines_it_shows(tmp_path):
    repo = _repo(tmp_path)
    result = localize(compose_locator("bm25"), TASK, repo, None, Trace())
    every_candidate = sum(f.line_count for f in repo.files() if f.path.endswith(".py"))
    assert result.cost.index_lines == every_candidate  # the index read every candidate file
    assert result.cost.source_lines_read == repo.stat("pkg/wheel.py").line_count  # evidence: the returned file, read again
    assert result.cost.model_calls == 0 and result.producer.model is None
    assert [s.name for s in result.cost.stages] == ["retrieval", "evidence"]
    assert [s.index_lines for s in result.cost.stages] == [every_candidate, 0]


def test_definition_granularity_makes_the_best_chunk_the_evidence_and_reads_only_it(tmp_path):
    repo = _repo(tmp_path)
    result = localize(compose_locator("bm25", granularity="definition", windows_per_file=1), TASK, repo, None, Trace())
    assert result.ranked_paths() == ["pkg/wheel.py"]
    [evidence] = result.files[0].evidence
    assert (evidence.start_line, evidence.end_line) == (91, 92)  # def parse_wheel_filename, whole
    assert result.cost.source_lines_read == 2


def test_the_result_records_the_whole_ranking_and_what_was_returned(tmp_path):
    repo = _repo(tmp_path)
    task = Task(id="t", text="parse_wheel_filename helper_3 value", subject=SubjectIdentity(repository="r", revision="v"))
    result = localize(compose_locator("bm25", top_files=1), task, repo, None, Trace())
    assert result.handoff.stage == "retrieval"
    assert result.handoff.ranked == ["pkg/wheel.py", "pkg/other.py"] and result.handoff.handed_off == ["pkg/wheel.py"]


def test_plain_tokens_do_not_stem_so_an_inflection_misses(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {"pkg/a.py": "def parsing():\n    pass\n", "pkg/b.py": "x = 1\n"}))
    task = Task(id="t", text="parses", subject=SubjectIdentity(repository="r", revision="v"))
    assert localize(compose_locator("bm25"), task, repo, None, Trace()).ranked_paths() == ["pkg/a.py"]
    assert localize(compose_locator("bm25", tokenizer="plain"), task, repo, None, Trace()).files == []


def test_explicit_mentions_weigh_more_than_prose(tmp_path):
    repo = RepositoryView(write_tree(tmp_path, {
        "pkg/table.py": "def render_table(rows):\n    return rows\n" + "# rows rows rows rows table\n" * 3,
        "pkg/units.py": "def convert_units(value):\n    return value\n",
    }))
    task = Task(id="t", text="The table rows break when rows hold units: see `convert_units`.",
                subject=SubjectIdentity(repository="r", revision="v"))
    assert localize(compose_locator("bm25"), task, repo, None, Trace()).ranked_paths()[0] == "pkg/table.py"
    weighted = localize(compose_locator("bm25", mention_weight=3), task, repo, None, Trace())
    assert weighted.ranked_paths()[0] == "pkg/units.py"


def test_no_overlap_no_files(tmp_path):
    repo = _repo(tmp_path)
    task = Task(id="t", text="zebra quokka", subject=SubjectIdentity(repository="r", revision="v"))
    assert localize(compose_locator("bm25"), task, repo, None, Trace()).files == []


def _bm25s(corpus: list[list[str]], query: list[str], k1: float, b: float) -> np.ndarray:
    """bm25s itself, indexing the whole corpus as loclab did before it scored term by term."""
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.index(corpus, show_progress=False)
    known = [token for token in query if token in retriever.vocab_dict]
    if not known:
        return np.zeros(len(corpus))
    return np.asarray(retriever.get_scores(known), dtype=float)


def _real_corpus() -> list[str]:
    """Real code: the installed sources of bm25s, click and packaging (any text would do; these are here)."""
    files = [p for name in ("bm25s", "click", "packaging") for p in sorted(Path(importlib.import_module(name).__file__).parent.rglob("*.py"))]
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]


@pytest.mark.parametrize("tokenizer", list(Tokenizer))
def test_scores_are_bm25s_scores_bit_for_bit_on_real_code(tokenizer):
    texts = _real_corpus()
    corpus = [tokens(t, tokenizer) for t in texts]
    ours_docs = _whole(texts, tokenizer)
    for task, weight in ((TASK.text, 0), ("Click's `HelpFormatter.write_usage` wraps at `max_width`; see formatting.py", 3),
                         ("tokenize the corpus, build the index and retrieve the top k documents", 1)):
        query = build_query(task, tokenizer, weight)
        for k1, b in ((1.5, 0.75), (1.2, 0.3), (0.9, 1.0)):
            assert np.array_equal(bm25_scores(ours_docs, query, k1, b), _bm25s(corpus, query, k1, b)), (task, k1, b)


def _whole(texts: list[str], tokenizer: Tokenizer):
    """Each text one whole-file document without a header."""
    return document_terms([Document(f"f{i}", Chunk(1, max(t.count("\n") + 1, 1), "<file>"), tuple(t.splitlines(keepends=True)),
                                    blake3_hex(t), ())
                           for i, t in enumerate(texts)], tokenizer)


def test_scores_are_bm25s_scores_bit_for_bit_on_random_corpora():
    rng = random.Random(7)
    vocab = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]  # plain tokens of themselves
    for _ in range(40):
        corpus = [[rng.choice(vocab[: rng.randint(1, 60)]) for _ in range(rng.choice([0, 1, 3, 20, 200]))]
                  for _ in range(rng.randint(1, 30))]
        if not any(corpus):
            continue
        query = [rng.choice(vocab + ["unknown"]) for _ in range(rng.randint(1, 12))]
        docs = _whole(["\n".join(" ".join(d[i : i + 7]) for i in range(0, len(d), 7)) for d in corpus], Tokenizer.PLAIN)
        k1, b = rng.uniform(0.5, 2.0), rng.uniform(0.0, 1.0)
        assert np.array_equal(bm25_scores(docs, query, k1, b), _bm25s(corpus, query, k1, b)), (corpus, query)


def test_every_document_holds_the_counts_and_length_of_its_own_text():
    """A document is a line range of its file's ids plus its header: equal to tokenizing its text,
    for chunks, overlapping windows, ranges past the end, odd line breaks and a line holding NUL."""
    rng = random.Random(3)
    plain = _real_corpus()[:40] + ["", "x", "no newline at end", "\r\nfoo\rbar\x0cbaz\u2028qux httpServer"]
    # a line holding NUL (the joining character) is tokenized by its own path, with the batch it is in
    for tokenizer, texts in itertools.product(Tokenizer, (plain, plain[-5:] + ["a\x00b c\nd\x00\n"])):
        docs = []
        for i, text in enumerate(texts):
            lines = tuple(text.splitlines(keepends=True))
            for _ in range(4):
                start = rng.randint(1, max(len(lines), 1))
                docs.append(Document(f"pkg/f{i}.py", Chunk(start, rng.randint(start, len(lines) + 2), "Owner.method_name"),
                                     lines, blake3_hex(text), rng.choice([(), (f"pkg/f{i}.py",), (f"pkg/f{i}.py", "Owner.method_name")])))
        terms = document_terms(docs, tokenizer)
        expected = [Counter(tokens(d.text, tokenizer)) for d in docs]
        assert terms.lengths.tolist() == [sum(c.values()) for c in expected]
        query = sorted({t for c in expected for t in c})
        ids = known_term_ids(query)
        held = terms.frequencies(list(ids.values()))
        for term in query:
            rows, counts = held[ids[term]]
            assert dict(zip(rows.tolist(), counts.tolist())) == {i: c[term] for i, c in enumerate(expected) if c[term]}, term
