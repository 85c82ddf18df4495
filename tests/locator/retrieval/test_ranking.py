from __future__ import annotations

import pytest

from locator.retrieval.ranking import Ranking, RankedFile, ScoredSpan, ranked, reciprocal_rank_fusion


def _ranking(*paths: str, spans: dict[str, tuple[ScoredSpan, ...]] | None = None) -> Ranking:
    return Ranking(tuple(RankedFile(p, 1.0 / n, (spans or {}).get(p, ())) for n, p in enumerate(paths, 1)), "test")


def test_rrf_sums_reciprocal_ranks_and_rewards_agreement():
    fused = reciprocal_rank_fusion([_ranking("a", "b", "c"), _ranking("b", "d", "a")], k=60)
    assert [f.path for f in fused.files] == ["b", "a", "d", "c"]
    assert fused.files[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused.files[3].score == pytest.approx(1 / 63)  # absent from the second ranking: it adds nothing


def test_rrf_keeps_the_spans_of_the_first_ranking_that_has_them():
    span = ScoredSpan(3, 9, 2.0, "f")
    fused = reciprocal_rank_fusion([_ranking("a"), _ranking("a", spans={"a": (span,)})], k=60)
    assert fused.files[0].spans == (span,)


def test_a_file_scoring_zero_is_not_ranked_and_ties_go_by_path():
    r = ranked({"b": (1.0, ()), "a": (1.0, ()), "z": (0.0, ())}, "test")
    assert [f.path for f in r.files] == ["a", "b"]


def test_a_retrieval_locator_without_both_methods_cannot_be_built():
    from locator.retrieval.locator import RetrievalLocator

    class RankOnly(RetrievalLocator):
        def rank(self, task, ctx):
            return Ranking((), "none")

    with pytest.raises(TypeError, match="abstract"):
        RankOnly(top_files=1)
