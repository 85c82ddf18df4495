"""Per-task metrics: a pure function of one saved LocalizationResult and its gold."""

from __future__ import annotations

from collections.abc import Callable

from dataset.manifest import Gold
from locator.outline import Definition, definitions, function_level, innermost, locagent_entity, outermost
from locator.result import LocalizationResult
from render.pack import ContextPack
from metrics.agent_context import context_metrics
from metrics.context_pack import pack_metrics
from metrics.definitions import K_VALUES, METRICS, MetricKind
from metrics.explore_regions import explore_scores
from metrics.swe_explore import EXPLORE_OPTIONAL

SourceOf = Callable[[str], str | None]
# the blind review's scores come from its evaluator, the reference-relative ones from a comparison with a reference run
SCORED_ELSEWHERE = (MetricKind.REVIEW, MetricKind.REFERENCE)
Resolver = Callable[[list[Definition], int], Definition | None]


def _lines_by_file(spans: list[tuple[str, int, int]]) -> dict[str, set[int]]:
    lines: dict[str, set[int]] = {}
    for path, start, end in spans:
        lines.setdefault(path, set()).update(range(start, end + 1))
    return lines


def _entities(spans: list[tuple[str, int, int]], source_of: SourceOf, resolve: Resolver) -> list[str]:
    found: dict[str, None] = {}
    for path, start, end in spans:
        source = source_of(path)
        if source is None:
            continue
        # The definitions holding a line change only where one of them starts or ends, so one line per
        # stretch between those edges stands for the stretch (line by line, a long span against a large
        # module's definitions was most of scoring's time).
        defs = [d for d in definitions(path, source) if d.start_line <= end and d.end_line >= start]
        edges = {start} | {edge for d in defs for edge in (d.start_line, d.end_line + 1) if start < edge <= end}
        for line in sorted(edges):
            hit = resolve(defs, line)
            if hit is not None:
                found.setdefault(f"{path}:{hit.qualname}", None)
    return list(found)


def _acc_all(ranked: list[str], gold: set[str], k: int) -> float | None:
    return None if not gold else float(gold <= set(ranked[:k]))


def locagent_acc(ranked: list[str], gold: set[str], k: int) -> float | None:
    """LocAgent's Acc@k (its `acc_at_k`): the gold items among the top k number min(|gold|, k) — every
    gold item, or, when there are more than k, a top k made of gold only. Undefined without gold."""
    if not gold:
        return None
    return float(sum(1 for item in ranked[:k] if item in gold) == min(len(gold), k))


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def average_precision(ranked: list[str], gold: set[str]) -> float:
    """Mean over gold items of the precision at the rank each is retrieved (0 for a missed one)."""
    hits, total = 0, 0.0
    for rank, item in enumerate(ranked, 1):
        if item in gold:
            hits += 1
            total += hits / rank
    return total / len(gold) if gold else 0.0


def funnel_metrics(result: LocalizationResult, gold_files: set[str], gold_lines: dict[str, set[int]],
                   predicted_lines: dict[str, set[int]]) -> dict[str, float | None]:
    """Where the gold was lost: in the first stage's ranking, at its hand-off, or in the reader; and
    what FollowFile recovered that the hand-off missed."""
    handoff = result.handoff
    if handoff is None or not gold_files:
        return dict.fromkeys(("discovery_recall", "discovery_rank_best", "discovery_rank_worst", "reader_conversion",
                              "handoff_line_recall", "follow_recall"))
    rank = {path: n for n, path in enumerate(handoff.ranked, 1)}
    ranks = [rank.get(path) for path in sorted(gold_files)]
    handed = gold_files & set(handoff.handed_off)
    with_evidence = {f.path for f in result.files if f.evidence}
    handed_gold_lines = sum(len(gold_lines.get(path, ())) for path in handed)
    found = sum(len(gold_lines.get(path, set()) & predicted_lines.get(path, set())) for path in handed)
    return {
        "discovery_recall": len(handed) / len(gold_files),
        "discovery_rank_best": min((r for r in ranks if r is not None), default=None),
        "discovery_rank_worst": None if None in ranks else max(ranks),
        "reader_conversion": len(handed & with_evidence) / len(handed) if handed else None,
        "handoff_line_recall": found / handed_gold_lines if handed_gold_lines else None,
        "follow_recall": len((gold_files & set(handoff.followed)) - handed) / len(gold_files),
    }


def score_task(result: LocalizationResult, gold: Gold, source_of: SourceOf,
               pack: ContextPack, explore_k: int) -> dict[str, float | None]:
    """All metrics of METRICS for one task (`pack`: the result rendered for the agent; `explore_k`: the
    predicted regions SWE-Explore's family scores, `scoring.swe_explore_k`); None where a metric is
    undefined for it."""
    ranked = result.ranked_paths()
    gold_files = set(gold.files)
    hits = gold_files & set(ranked)
    precision, recall = _ratio(len(hits), len(ranked)), _ratio(len(hits), len(gold_files))
    first_gold = next((rank for rank, path in enumerate(ranked, 1) if path in gold_files), None)
    scores: dict[str, float | None] = {
        "file_precision": precision,
        "file_recall": recall,
        "file_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "file_mrr": 1.0 / first_gold if first_gold else 0.0,
        "file_map": average_precision(ranked, gold_files),
        "file_set_match": float(set(ranked) == gold_files),
    }

    predicted_spans = [(f.path, e.start_line, e.end_line) for f in result.files for e in f.evidence]
    gold_spans = [(s.path, s.start_line, s.end_line) for s in gold.spans]
    predicted_lines, gold_lines = _lines_by_file(predicted_spans), _lines_by_file(gold_spans)
    overlap = sum(len(lines & predicted_lines.get(path, set())) for path, lines in gold_lines.items())
    regions: dict[int, bool] = {}
    for span in gold.spans:
        touched = any(n in predicted_lines.get(span.path, ()) for n in range(span.start_line, span.end_line + 1))
        regions[span.region] = regions.get(span.region, False) or touched
    scores["line_recall"] = _ratio(overlap, sum(len(v) for v in gold_lines.values()))
    scores["line_precision"] = _ratio(overlap, sum(len(v) for v in predicted_lines.values()))
    scores["gold_region_recall"] = _ratio(sum(regions.values()), len(regions))

    # Entities two ways. LocAgent's function level (its gold stops at the outermost function, a
    # constructor is its class) under LocAgent's name and Acc@k; the stricter innermost definition
    # (nested functions included) under a name of its own, from the dataset's entities when it has them.
    gold_functions = {locagent_entity(e) for e in _entities(gold_spans, source_of, function_level)}
    gold_innermost = set(gold.entities) if gold.entities is not None else set(_entities(gold_spans, source_of, innermost))
    gold_modules = set(_entities(gold_spans, source_of, outermost))
    # A producer that ranks its own modules/entities (LocAgent) is scored on those rankings, as its
    # own metric does; loclab's span results go through span -> enclosing definition.
    own = result.ranked_entities
    predicted_functions = (list(dict.fromkeys(map(locagent_entity, own))) if own is not None
                           else list(dict.fromkeys(map(locagent_entity, _entities(predicted_spans, source_of, function_level)))))
    predicted_innermost = (list(dict.fromkeys(own)) if own is not None
                           else _entities(predicted_spans, source_of, innermost))
    predicted_modules = (list(dict.fromkeys(result.ranked_modules)) if result.ranked_modules is not None
                         else _entities(predicted_spans, source_of, outermost))
    for k in K_VALUES:
        scores[f"file_acc_all@{k}"] = _acc_all(ranked, gold_files, k)
        scores[f"file_hit_any@{k}"] = float(bool(gold_files & set(ranked[:k]))) if gold_files else None
        scores[f"module_acc_all@{k}"] = locagent_acc(predicted_modules, gold_modules, k)
        scores[f"function_acc_all@{k}"] = locagent_acc(predicted_functions, gold_functions, k)
        scores[f"innermost_entity_acc_all@{k}"] = _acc_all(predicted_innermost, gold_innermost, k)

    scores.update(funnel_metrics(result, gold_files, gold_lines, predicted_lines))

    cost = result.cost
    physical = cost.physical
    scores.update(
        {
            "model_calls": cost.model_calls,
            "physical_model_calls": physical.model_calls if physical else None,
            "input_tokens": cost.tokens.input,
            "output_tokens": cost.tokens.output,
            "physical_input_tokens": physical.tokens.input if physical else None,
            "physical_output_tokens": physical.tokens.output if physical else None,
            "physical_cached_input_tokens": physical.cached_input_tokens if physical else None,
            "cache_hits": physical.cache_hits if physical else None,
            "cache_misses": physical.cache_misses if physical else None,
            "retries": physical.retries if physical else None,
            "truncated_prompts": physical.truncated_prompts if physical else None,
            "model_wall_time_ms": physical.model_wall_time_ms if physical else None,
            "model_critical_path_ms": physical.model_critical_path_ms if physical else None,
            "cost_usd": physical.usd if physical else None,
            "logical_cost_usd": cost.usd,
            "source_lines_read": cost.source_lines_read,
            "index_lines": cost.index_lines,
            "elapsed_ms": cost.elapsed_ms,
        }
    )
    scores.update(context_metrics(result, gold_files))
    scores.update(pack_metrics(pack, result, gold, source_of))
    scores.update(dict.fromkeys(EXPLORE_OPTIONAL)  # absent without an optional tier (None, never 0)
                  | explore_scores(result, gold, source_of, explore_k))
    unknown = set(scores) ^ {name for name, spec in METRICS.items() if spec.kind not in SCORED_ELSEWHERE}
    assert not unknown, f"metric registry and scorer disagree on {sorted(unknown)}"
    return {name: None if value is None else float(value) for name, value in scores.items()}
