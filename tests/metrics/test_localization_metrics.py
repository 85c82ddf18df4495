"""Hand-computed expectations for every metric on one small, deliberately mixed case."""

from __future__ import annotations

import pytest

from dataset.manifest import Gold, GoldSpan
from locator.result import Cost, Evidence, Handoff, LocalizationResult, PhysicalCost, Producer, ResultFile, Tokens
from metrics.definitions import METRICS, MetricKind
from experiments.job.config import build, compose_config
from metrics.localization import score_task
from metrics.review import REVIEW_METRICS
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
              physical=PhysicalCost(model_calls=1, tokens=Tokens(input=30, output=5), cached_input_tokens=12, cache_hits=2,
                                    retries=4, truncated_prompts=6)),
)
GOLD = Gold(
    files=["a.py", "d.py"],
    spans=[GoldSpan(path="a.py", start_line=2, end_line=3, region=0),
           GoldSpan(path="a.py", start_line=21, end_line=22, region=1),
           GoldSpan(path="d.py", start_line=5, end_line=5, region=2)],
    rule="test",
)


RENDER = build("render")
EXPLORE_K = compose_config().scoring.swe_explore_k  # the YAML's, as a job scores


def _score(result, gold):
    return score_task(result, gold, SOURCES.get, render_pack(result, SOURCES.get, RENDER), EXPLORE_K)


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
    assert (scores["innermost_entity_acc_all@1"], scores["innermost_entity_acc_all@3"]) == (0.0, 1.0)
    # predicted modules: b.py:bee, a.py:one, a.py:K; gold: a.py:one, a.py:K
    assert (scores["module_acc_all@1"], scores["module_acc_all@3"]) == (0.0, 1.0)


def test_explicit_gold_entities_take_precedence():
    gold = GOLD.model_copy(update={"entities": ["a.py:K.m"]})
    assert _score(RESULT, gold)["innermost_entity_acc_all@1"] == 0.0
    assert _score(RESULT, gold)["innermost_entity_acc_all@3"] == 1.0


def test_entity_metrics_are_undefined_without_gold_entities():
    gold = Gold(files=["d.py"], spans=[GoldSpan(path="d.py", start_line=5, end_line=5, region=0)], rule="t")
    assert _score(RESULT, gold)["innermost_entity_acc_all@5"] is None


def test_cost_passes_through(scores):
    assert (scores["model_calls"], scores["physical_model_calls"], scores["cache_hits"]) == (3, 1, 2)
    assert (scores["input_tokens"], scores["physical_input_tokens"], scores["source_lines_read"]) == (100, 30, 40)
    assert (scores["physical_cached_input_tokens"], scores["retries"], scores["truncated_prompts"]) == (12, 4, 6)


def test_a_perfect_answer_scores_one():
    perfect = RESULT.model_copy(update={"files": [ResultFile(path="a.py", evidence=[_ev(2, 3), _ev(21, 22)]),
                                                  ResultFile(path="d.py", evidence=[_ev(5, 5)])]})
    s = _score(perfect, GOLD)
    for name in ("file_precision", "file_recall", "file_set_match", "file_acc_all@3",
                 "line_recall", "line_precision", "gold_region_recall", "innermost_entity_acc_all@5"):
        assert s[name] == 1.0, name
    assert s["file_acc_all@1"] == 0.0  # two gold files cannot both be in the top 1


def test_an_empty_answer_scores_zero_not_undefined():
    empty = RESULT.model_copy(update={"files": []})
    s = _score(empty, GOLD)
    assert (s["file_precision"], s["line_precision"], s["file_mrr"]) == (0.0, 0.0, 0.0)


def test_every_registered_metric_is_scored(scores):
    # the review's metrics come from the evaluator (experiments/job/review.py, tests/metrics/test_review.py)
    assert set(scores) == {n for n, spec in METRICS.items() if spec.kind not in (MetricKind.REVIEW, MetricKind.REFERENCE)}
    assert {n for n, spec in METRICS.items() if spec.kind is MetricKind.REVIEW} == set(REVIEW_METRICS)


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
    assert by_spans["innermost_entity_acc_all@1"] == 0.0  # spans resolve to one, K.m, ... in line order
    ranked = whole_file.model_copy(update={"ranked_entities": ["a.py:K.m", "a.py:one", "a.py:K.m"],
                                           "ranked_modules": ["a.py:K", "b.py:bee", "a.py:one"]})
    scores = _score(ranked, GOLD)
    assert (scores["innermost_entity_acc_all@1"], scores["innermost_entity_acc_all@3"]) == (0.0, 1.0)
    # LocAgent's Acc@1 with two gold modules: a gold top 1 (a.py:K) counts
    assert (scores["module_acc_all@1"], scores["module_acc_all@3"]) == (1.0, 1.0)
    only_first = ranked.model_copy(update={"ranked_entities": ["a.py:one"]})
    assert _score(only_first, GOLD)["innermost_entity_acc_all@10"] == 0.0  # K.m was never ranked
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
    assert scores["follow_recall"] == 0.0


def test_follow_recall_counts_the_gold_files_following_recovered_beyond_the_handoff():
    # gold a.py and d.py; d.py was not handed off but followed; a followed file already handed off counts once
    handoff = Handoff(stage="file_discovery", ranked=["a.py"], handed_off=["a.py"], followed=["d.py", "c.py"])
    assert _score(RESULT.model_copy(update={"handoff": handoff}), GOLD)["follow_recall"] == pytest.approx(1 / 2)
    handoff = handoff.model_copy(update={"handed_off": ["a.py", "d.py"], "followed": ["d.py"]})
    assert _score(RESULT.model_copy(update={"handoff": handoff}), GOLD)["follow_recall"] == 0.0


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
                                           "reader_conversion", "handoff_line_recall", "follow_recall"))


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
                    if (hit := resolve(definitions("m.py", NESTED), line)) is not None:
                        one_by_one.setdefault(f"m.py:{hit.qualname}", None)
                assert _entities([("m.py", start, end)], lambda _: NESTED, resolve) == list(one_by_one), (start, end)


NESTED = ("class Mod:\n"               # 1
          "    kind = 'mod'\n"          # 2  a class-body line: the class
          "    def __init__(self):\n"   # 3  a constructor: LocAgent names the class
          "        self.x = 1\n"        # 4
          "    def eval(self):\n"       # 5
          "        def doit(v):\n"      # 6  nested in a method: the method, for LocAgent
          "            return v\n"      # 7
          "        return doit(1)\n"    # 8
          "\n"                          # 9
          "def top():\n"                # 10
          "    def inner():\n"          # 11
          "        return 2\n"          # 12
          "    return inner()\n"        # 13
          "X = 3\n")                    # 14 module level: no entity


def _nested_score(gold_lines, evidence=(), ranked_entities=None):
    gold = Gold(files=["m.py"], spans=[GoldSpan(path="m.py", start_line=a, end_line=b, region=i)
                                       for i, (a, b) in enumerate(gold_lines)], rule="t")
    result = RESULT.model_copy(update={"files": [ResultFile(path="m.py", evidence=[_ev(a, b) for a, b in evidence])],
                                       "ranked_entities": ranked_entities})
    source = {"m.py": NESTED}.get
    return score_task(result, gold, source, render_pack(result, source, RENDER), EXPLORE_K)


def test_function_level_acc_follows_locagent_s_gold_rule_and_innermost_is_stricter():
    # gold: doit (nested in Mod.eval) and inner (nested in top): LocAgent's gold is Mod.eval and top
    named = _nested_score([(7, 7), (12, 12)], ranked_entities=["m.py:Mod.eval", "m.py:top"])
    assert named["function_acc_all@1"] == 1.0  # LocAgent's Acc@1: a gold top 1 when gold has 2 entities
    assert named["function_acc_all@5"] == 1.0
    assert named["innermost_entity_acc_all@5"] == 0.0  # the innermost rule wants Mod.eval.doit and top.inner
    # evidence spans resolve by the same rule: evidence inside doit is evidence of Mod.eval
    spans = _nested_score([(7, 7)], evidence=[(8, 8)])
    assert spans["function_acc_all@1"] == 1.0 and spans["innermost_entity_acc_all@1"] == 0.0


def test_a_constructor_is_its_class_and_a_class_body_line_is_the_class():
    assert _nested_score([(4, 4)], ranked_entities=["m.py:Mod.__init__"])["function_acc_all@1"] == 1.0
    assert _nested_score([(4, 4)], ranked_entities=["m.py:Mod"])["function_acc_all@1"] == 1.0
    assert _nested_score([(2, 2)], ranked_entities=["m.py:Mod"])["function_acc_all@1"] == 1.0
    assert _nested_score([(14, 14)], ranked_entities=["m.py:Mod"])["function_acc_all@5"] is None  # no entity


def test_locagent_acc_counts_min_of_gold_and_k():
    from metrics.localization import locagent_acc

    gold = {"a", "b", "c"}
    assert locagent_acc(["a", "b", "x"], gold, 2) == 1.0  # 2 gold in the top 2 = min(3, 2)
    assert locagent_acc(["a", "x", "b"], gold, 2) == 0.0
    assert locagent_acc(["a", "b", "x"], gold, 3) == 0.0 and locagent_acc(["a", "b", "c"], gold, 3) == 1.0
    assert locagent_acc(["a"], set(), 5) is None


def test_hit_any_at_k_sees_rank_k_and_is_undefined_without_gold_files():
    # gold d.py at rank 3 exactly
    assert _score(_ranked("b.py", "c.py", "d.py"), GOLD)["file_hit_any@3"] == 1.0
    assert _score(_ranked("b.py", "c.py", "e.py", "x.py", "d.py"), GOLD)["file_hit_any@5"] == 1.0
    no_gold = Gold.model_construct(files=[], spans=[], entities=None, rule="t")
    scores = score_task(RESULT, no_gold, SOURCES.get, render_pack(RESULT, SOURCES.get, RENDER), EXPLORE_K)
    assert all(scores[f"file_hit_any@{k}"] is None for k in (1, 3, 5, 10))


def test_mrr_is_not_cut_off_at_any_rank():
    deep = _ranked("b.py", "c.py", "e.py", "f.py", "g.py", "h.py", "a.py")
    assert _score(deep, GOLD)["file_mrr"] == pytest.approx(1 / 7)
