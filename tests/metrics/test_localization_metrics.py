"""Hand-computed expectations for every metric on one small, deliberately mixed case."""

from __future__ import annotations

import pytest

from dataset.manifest import Gold, GoldSpan
from locator.result import Cost, Evidence, Handoff, LocalizationResult, PhysicalCost, Producer, ResultFile, Tokens
from metrics.definitions import METRICS
from experiments.config import build
from metrics.localization import score_task
from render.pack import render_pack

A_PY = "def one():\n    x = 1\n    y = 2\n    return x\n\nclass K:\n" + "".join(f"    a{i} = {i}\n" for i in range(7, 20)) + \
       "    def m(self):\n        x = 1\n        return x\n"
B_PY = "".join(f"v{i} = {i}\n" for i in range(1, 10)) + "def bee():\n    a = 1\n    return a\n"
D_PY = "import os\n\n\n\nX = 1\n"
SOURCES = {"a.py": A_PY, "b.py": B_PY, "d.py": D_PY}


def _ev(start, end):
    return Evidence(id=f"{start}-{end}", start_line=start, end_line=end)


RESULT = LocalizationResult(
    task="t",
    subject=None,
    producer=Producer(system="test"),
    files=[
        ResultFile(path="b.py", evidence=[_ev(10, 12)]),
        ResultFile(path="a.py", evidence=[_ev(1, 4), _ev(20, 21)]),
        ResultFile(path="c.py"),
    ],
    cost=Cost(elapsed_ms=12.5, model_calls=3, tokens=Tokens(input=100, output=20), source_lines_read=40,
              physical=PhysicalCost(model_calls=1, tokens=Tokens(input=30, output=5), cache_hits=2)),
)
GOLD = Gold(
    files=["a.py", "d.py"],
    spans=[GoldSpan(path="a.py", start_line=2, end_line=3, region=0),
           GoldSpan(path="a.py", start_line=21, end_line=22, region=1),
           GoldSpan(path="d.py", start_line=5, end_line=5, region=2)],
    rule="test",
)


RENDER = build("render")


def _score(result, gold):
    return score_task(result, gold, SOURCES.get, render_pack(result, SOURCES.get, RENDER))


@pytest.fixture(scope="module")
def scores():
    return _score(RESULT, GOLD)


def test_file_level(scores):
    assert scores["file_precision"] == pytest.approx(1 / 3)
    assert scores["file_recall"] == pytest.approx(1 / 2)
    assert scores["file_f1"] == pytest.approx(0.4)
    assert scores["file_mrr"] == pytest.approx(0.5)
    assert scores["file_set_match"] == 0.0
    assert (scores["file_acc_all@1"], scores["file_acc_all@10"]) == (0.0, 0.0)
    assert (scores["file_hit_any@1"], scores["file_hit_any@3"]) == (0.0, 1.0)


def test_line_level(scores):
    assert scores["line_recall"] == pytest.approx(3 / 5)
    assert scores["line_precision"] == pytest.approx(3 / 9)
    assert scores["gold_region_recall"] == pytest.approx(2 / 3)


def test_entity_and_module_level(scores):
    # predicted entities, in order: b.py:bee, a.py:one, a.py:K.m; gold: a.py:one, a.py:K.m
    assert (scores["entity_acc_all@1"], scores["entity_acc_all@3"]) == (0.0, 1.0)
    # predicted modules: b.py:bee, a.py:one, a.py:K; gold: a.py:one, a.py:K
    assert (scores["module_acc_all@1"], scores["module_acc_all@3"]) == (0.0, 1.0)


def test_explicit_gold_entities_take_precedence():
    gold = GOLD.model_copy(update={"entities": ["a.py:K.m"]})
    assert _score(RESULT, gold)["entity_acc_all@1"] == 0.0
    assert _score(RESULT, gold)["entity_acc_all@3"] == 1.0


def test_entity_metrics_are_undefined_without_gold_entities():
    gold = Gold(files=["d.py"], spans=[GoldSpan(path="d.py", start_line=5, end_line=5, region=0)], rule="t")
    assert _score(RESULT, gold)["entity_acc_all@5"] is None


def test_cost_passes_through(scores):
    assert (scores["model_calls"], scores["physical_model_calls"], scores["cache_hits"]) == (3, 1, 2)
    assert (scores["input_tokens"], scores["physical_input_tokens"], scores["source_lines_read"]) == (100, 30, 40)


def test_a_perfect_answer_scores_one():
    perfect = RESULT.model_copy(update={"files": [ResultFile(path="a.py", evidence=[_ev(2, 3), _ev(21, 22)]),
                                                  ResultFile(path="d.py", evidence=[_ev(5, 5)])]})
    s = _score(perfect, GOLD)
    for name in ("file_precision", "file_recall", "file_set_match", "file_acc_all@3",
                 "line_recall", "line_precision", "gold_region_recall", "entity_acc_all@5"):
        assert s[name] == 1.0, name
    assert s["file_acc_all@1"] == 0.0  # two gold files cannot both be in the top 1


def test_an_empty_answer_scores_zero_not_undefined():
    empty = RESULT.model_copy(update={"files": []})
    s = _score(empty, GOLD)
    assert (s["file_precision"], s["line_precision"], s["file_mrr"]) == (0.0, 0.0, 0.0)


def test_every_registered_metric_is_scored(scores):
    assert set(scores) == set(METRICS)


def _ranked(*paths):
    return RESULT.model_copy(update={"files": [ResultFile(path=p) for p in paths]})


def test_mrr_takes_the_first_gold_file_not_the_last():
    # gold a.py at rank 1 and d.py at rank 3
    assert _score(_ranked("a.py", "b.py", "d.py"), GOLD)["file_mrr"] == 1.0
    assert _score(_ranked("b.py", "c.py", "a.py", "d.py"), GOLD)["file_mrr"] == pytest.approx(1 / 3)


def test_set_match_is_equality_not_a_superset():
    assert _score(_ranked("a.py", "d.py"), GOLD)["file_set_match"] == 1.0
    assert _score(_ranked("a.py", "d.py", "b.py"), GOLD)["file_set_match"] == 0.0
    assert _score(_ranked("a.py"), GOLD)["file_set_match"] == 0.0


def test_file_map_is_the_average_precision_of_the_ranking():
    # gold a.py at rank 2 (precision 1/2), d.py at rank 4 (2/4): AP = (1/2 + 2/4) / 2
    assert _score(_ranked("b.py", "a.py", "c.py", "d.py"), GOLD)["file_map"] == pytest.approx(0.5)
    # a missed gold file counts as 0: (1/1 + 0) / 2
    assert _score(_ranked("a.py", "b.py"), GOLD)["file_map"] == pytest.approx(0.5)
    assert _score(_ranked("a.py", "d.py"), GOLD)["file_map"] == 1.0


def test_a_producer_entity_ranking_is_scored_as_that_ranking():
    # LocAgent-style: its own ranked entities; the evidence spans would enclose many more entities
    whole_file = RESULT.model_copy(update={"files": [ResultFile(path="a.py", evidence=[_ev(1, 25)])]})
    by_spans = _score(whole_file, GOLD)
    assert by_spans["entity_acc_all@1"] == 0.0  # spans resolve to one, K.m, ... in line order
    ranked = whole_file.model_copy(update={"ranked_entities": ["a.py:K.m", "a.py:one", "a.py:K.m"],
                                           "ranked_modules": ["a.py:K", "b.py:bee", "a.py:one"]})
    scores = _score(ranked, GOLD)
    assert (scores["entity_acc_all@1"], scores["entity_acc_all@3"]) == (0.0, 1.0)
    assert (scores["module_acc_all@1"], scores["module_acc_all@3"]) == (0.0, 1.0)
    only_first = ranked.model_copy(update={"ranked_entities": ["a.py:one"]})
    assert _score(only_first, GOLD)["entity_acc_all@10"] == 0.0  # K.m was never ranked
    only_other_module = ranked.model_copy(update={"ranked_modules": ["b.py:bee"]})
    assert _score(only_other_module, GOLD)["module_acc_all@10"] == 0.0


def test_the_funnel_says_where_each_gold_file_was_lost():
    # d.py ranked 4th but not handed off (lost in Phase 1); a.py handed off and kept with evidence;
    # gold lines of a.py: 2, 3, 21, 22 — the evidence holds 2, 3 and 21.
    result = RESULT.model_copy(update={"handoff": Handoff(stage="file_discovery", ranked=["b.py", "a.py", "c.py", "d.py"],
                                                          handed_off=["b.py", "a.py", "c.py"])})
    scores = _score(result, GOLD)
    assert scores["discovery_recall"] == pytest.approx(1 / 2)
    assert (scores["discovery_rank_best"], scores["discovery_rank_worst"]) == (2, 4)
    assert scores["reader_conversion"] == 1.0
    assert scores["handoff_line_recall"] == pytest.approx(3 / 4)


def test_the_reader_dropping_a_handed_off_gold_file_shows_as_conversion():
    result = RESULT.model_copy(update={
        "files": [f for f in RESULT.files if f.path != "a.py"],
        "handoff": Handoff(stage="file_discovery", ranked=["a.py", "b.py"], handed_off=["a.py", "b.py"])})
    scores = _score(result, GOLD)
    assert scores["discovery_recall"] == pytest.approx(1 / 2)
    assert scores["discovery_rank_worst"] is None  # d.py was never ranked
    assert scores["reader_conversion"] == 0.0 and scores["handoff_line_recall"] == 0.0


def test_without_a_handoff_the_funnel_is_undefined_not_zero(scores):
    assert all(scores[m] is None for m in ("discovery_recall", "discovery_rank_best", "discovery_rank_worst",
                                           "reader_conversion", "handoff_line_recall"))


def test_index_lines_are_reported_apart_from_lines_read():
    result = RESULT.model_copy(update={"cost": RESULT.cost.model_copy(update={"index_lines": 900})})
    scores = _score(result, GOLD)
    assert (scores["index_lines"], scores["source_lines_read"]) == (900, 40)


def test_a_handed_off_gold_file_kept_without_evidence_is_not_converted():
    # keep_unconfirmed_files: a.py stays in the result as context, with no evidence
    files = [f if f.path != "a.py" else ResultFile(path="a.py") for f in RESULT.files]
    result = RESULT.model_copy(update={"files": files, "handoff": Handoff(stage="file_discovery", ranked=["a.py"],
                                                                             handed_off=["a.py"])})
    scores = _score(result, GOLD)
    assert scores["reader_conversion"] == 0.0


NESTED = '''import os


@decorator
class Outer:
    x = 1

    def first(self):
        return 1

    class Inner:
        def deep(self):
            return 2

    def last(self):
        return 3


def free():
    pass
'''


def test_entities_of_a_span_are_those_of_its_lines_one_by_one():
    from locator.outline import definitions, innermost, outermost
    from metrics.localization import _entities

    lines = NESTED.count("\n")
    for resolve in (innermost, outermost):
        for start in range(1, lines + 1):
            for end in range(start, lines + 1):
                one_by_one: dict[str, None] = {}
                for line in range(start, end + 1):
                    if (hit := resolve(definitions(NESTED), line)) is not None:
                        one_by_one.setdefault(f"m.py:{hit.qualname}", None)
                assert _entities([("m.py", start, end)], lambda _: NESTED, resolve) == list(one_by_one), (start, end)
