"""Every metric loclab reports, named after the definition it reproduces."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from metrics.swe_explore import LINE_BUDGETS

K_VALUES = (1, 3, 5, 10)


class MetricKind(StrEnum):
    QUALITY = "quality"
    COST = "cost"
    FUNNEL = "funnel"  # where a staged locator lost the gold: its first stage's ranking and hand-off, then the reader
    REVIEW = "review"  # the blind quality review (seed 000), only with review=blind: an evaluator model's judgment
    PACK = "pack"  # what the context pack's note claims about itself, and what it trimmed (seed 002): counts and defects
    SWE_EXPLORE = "swe_explore"  # SWE-Explore's line-budget family, named and computed as its evaluator does
    REFERENCE = "reference"  # against a reference localization instead of gold (seed 000): only by experiments.analysis.compare --reference


@dataclass(frozen=True)
class MetricSpec:
    name: str
    kind: MetricKind
    definition: str


def _specs() -> list[MetricSpec]:
    q, c, f, pk = MetricKind.QUALITY, MetricKind.COST, MetricKind.FUNNEL, MetricKind.PACK
    specs = [
        MetricSpec("file_precision", q, "|returned files ∩ gold files| / |returned files| (0 when nothing is returned)"),
        MetricSpec("file_recall", q, "|returned files ∩ gold files| / |gold files|"),
        MetricSpec("file_f1", q, "harmonic mean of file_precision and file_recall"),
        MetricSpec("file_mrr", q, "MRR@k over the returned list, k = its length (bm25: top_files; two_phase: the files "
                                  "with evidence): 1 / rank of the first gold file returned, 0 if none is (the peers' MRR@k)"),
        MetricSpec("file_map", q, "average precision of the file ranking: mean over gold files of the precision at the "
                                  "rank each is returned (0 if not returned); its mean over tasks is MAP"),
        MetricSpec("file_set_match", q, "1 if the returned file set equals the gold file set (OrcaLoca set match)"),
        MetricSpec("line_recall", q, "|evidence lines ∩ gold lines| / |gold lines|, old-side lines per file"),
        MetricSpec("line_precision", q, "|evidence lines ∩ gold lines| / |evidence lines| (0 when no evidence)"),
        MetricSpec("gold_region_recall", q, "fraction of gold hunks with at least one gold line inside the evidence"),
        MetricSpec("selected_labeled_files", q, "gold files among the files the response sends source for (seed 001)"),
        MetricSpec("selected_file_recall", q, "selected_labeled_files / |gold files| (seed 001)"),
        MetricSpec("generated_labeled_files", q, "gold files among every file the response lists (seed 001)"),
    ]
    for k in K_VALUES:
        specs += [
            MetricSpec(f"file_acc_all@{k}", q, f"1 if every gold file is in the top {k} files (LocAgent/SweRank Acc@{k})"),
            MetricSpec(f"file_hit_any@{k}", q, f"1 if any gold file is in the top {k} files (CoSIL hit@{k}); undefined "
                                               "without gold files"),
            MetricSpec(f"module_acc_all@{k}", q, f"LocAgent module Acc@{k}: the gold modules (outermost class/function "
                                                 f"enclosing a gold line) among the top {k} modules number min(|gold|, {k}); "
                                                 "modules of the evidence, or the producer's own module ranking when it has "
                                                 "one; undefined without gold modules"),
            MetricSpec(f"function_acc_all@{k}", q, f"LocAgent function-level Acc@{k}: LocAgent's gold entities (the "
                                                   "outermost function enclosing a gold line — a method or a top-level "
                                                   "function, nested functions belong to it; a class-body line its class; "
                                                   f"`Cls.__init__` is `Cls`) among the top {k} number min(|gold|, {k}); "
                                                   "entities of the evidence, or the producer's own entity ranking; "
                                                   "undefined without gold entities"),
            MetricSpec(f"innermost_entity_acc_all@{k}", q, f"1 if every gold innermost definition (function, method or "
                                                           f"class, nested functions included) is in the top {k} "
                                                           "entities — stricter than LocAgent's function level; the "
                                                           "dataset's own entities when it lists them"),
        ]
    specs += [
        MetricSpec("model_calls", c, "logical System One requests (what the algorithm asked)"),
        MetricSpec("physical_model_calls", c, "System One requests that reached a backend (cache misses)"),
        MetricSpec("input_tokens", c, "logical input tokens (o200k_base)"),
        MetricSpec("output_tokens", c, "logical output tokens (o200k_base)"),
        MetricSpec("physical_input_tokens", c, "input tokens that reached a backend"),
        MetricSpec("physical_output_tokens", c, "output tokens that reached a backend"),
        MetricSpec("physical_cached_input_tokens", c, "of the input tokens that reached a backend, those its prefix "
                                                      "(key/value) cache held, so not encoded: local_llm's own count, "
                                                      "an endpoint's prompt_tokens_details.cached_tokens, 0 where a "
                                                      "backend does not say"),
        MetricSpec("cache_hits", c, "requests answered by the decision cache"),
        MetricSpec("cache_misses", c, "requests the decision cache passed to the backend"),
        MetricSpec("retries", c, "transient failures retried by a remote backend"),
        MetricSpec("truncated_prompts", c, "prompts the backend cut in the middle to fit its model's context "
                                           "(local_llm's max_prompt_tokens: a task text over half of it, then the "
                                           "item content); answers to them read less than was asked"),
        MetricSpec("model_wall_time_ms", c, "summed wall time of backend calls"),
        MetricSpec("model_critical_path_ms", c, "wall time during which at least one backend call was in flight"),
        MetricSpec("cost_usd", c, "billed provider cost of the physical calls (needs a price table)"),
        MetricSpec("logical_cost_usd", c, "provider cost the logical calls would have had without the cache"),
        MetricSpec("source_lines_read", c, "source lines handed to the locator by the RepositoryView"),
        MetricSpec("index_lines", c, "lines read to build an index (retrieval documents, the definitions index, a text "
                                     "scan), charged to each task that uses it whether or not a cache held it"),
        MetricSpec("elapsed_ms", c, "wall time of localization"),
        MetricSpec("source_tokens", c, "exact o200k tokens of the source excerpts the response sends (seed 001)"),
        MetricSpec("response_json_tokens", c, "exact o200k tokens of the complete response JSON, turn 1 (seed 001)"),
        MetricSpec("dead_end_source_tokens", c, "source_tokens of files that are not gold (seed 001)"),
        MetricSpec("two_turn_json_tokens", c, "turn 1 + turn 2 JSON tokens, turn 2 sending held payloads as their "
                                              "exact content hashes (seed 001 known-hash accounting)"),
        MetricSpec("exact_hash_resends", c, "payloads serialized in full although the same exact content was already "
                                            "sent in full earlier in the two turns: duplicate excerpts within turn 1, "
                                            "or full payloads again on turn 2 (seed 001: 0)"),
        MetricSpec("owner_excerpt_tokens", c, "exact source tokens of the AST lane's reserved owner excerpt (v2)"),
        MetricSpec("claims_complete", pk, "1 if the context pack's note claims complete source (seed 002)"),
        MetricSpec("false_complete_claims", pk, "1 if the pack claims complete source while a file it shows lacks a wanted "
                                               "line, audited from the pack's text (seed 002; must be 0)"),
        MetricSpec("trimmed_notes", pk, "1 if the pack's note says source was trimmed for size (seed 002)"),
        MetricSpec("trimmed_files", pk, "files the pack shows with a wanted line missing from its text"),
        MetricSpec("offers_read", pk, "1 if the pack's note offers Read (seed 002's defect; must be 0 for measured)"),
        MetricSpec("pointer_entries", pk, "files listed under \"Not shown above\" (seed 002)"),
        MetricSpec("rendered_tokens", c, "exact o200k tokens of the whole context pack"),
        MetricSpec("over_cap", c, "1 if the pack is longer than render.cap_tokens (must be 0)"),
        MetricSpec("wanted_lines", c, "lines of the spans the pack set out to deliver: evidence and member-entity "
                                      "definitions"),
        MetricSpec("wanted_lines_sent", c, "wanted lines the pack's text carries"),
        MetricSpec("pack_line_recall", q, "gold lines the pack's text carries / gold lines: what reaches the agent under "
                                          "the cap"),
    ]
    specs += [
        MetricSpec("discovery_recall", f, "gold files among those the first stage handed off / gold files (undefined "
                                          "without a recorded hand-off)"),
        MetricSpec("discovery_rank_best", f, "1-based rank of the best-ranked gold file in the first stage's ranking "
                                             "(undefined if it ranked none)"),
        MetricSpec("discovery_rank_worst", f, "rank of the worst-ranked gold file: how deep a hand-off must go to pass "
                                              "every gold file (undefined if one was never ranked)"),
        MetricSpec("reader_conversion", f, "gold files handed off that ended in the result with evidence / gold files "
                                           "handed off (undefined when none was handed off)"),
        MetricSpec("handoff_line_recall", f, "evidence-line recall within the handed-off gold files: what the reader "
                                             "found of the gold it was given (undefined when none was handed off)"),
        MetricSpec("follow_recall", f, "gold files the reader followed into (FollowFile) that the first stage had not "
                                       "handed off / gold files: what following recovered (0 with locator/follow=fixed)"),
    ]
    # SWE-Explore (eval.py::ExploreEvaluator, ../shared/design/swe-explore-metrics.md): P = the first k
    # predicted regions (metrics.explore_regions), PL their lines, CL the core lines, OL the optional lines
    x = MetricKind.SWE_EXPLORE
    specs += [
        MetricSpec("precision", x, "|PL ∩ CL| / |PL| (0 without predicted lines)"),
        MetricSpec("recall", x, "|PL ∩ CL| / |CL|"),
        MetricSpec("f1_score", x, "2pr/(p+r) of the task's precision and recall (its mean is the mean of F1s)"),
        MetricSpec("hit_file_rate", x, "core files among the predicted regions' paths / core files (a fraction, not a hit)"),
        MetricSpec("noise_file_rate", x, "predicted paths neither core nor optional / predicted paths"),
        MetricSpec("hit_region_rate", x, "core regions overlapping a predicted region / core regions"),
        MetricSpec("noise_region_rate", x, "predicted regions overlapping no core or optional region / predicted regions "
                                           "(a repeated region counted again)"),
        MetricSpec("weighted_core_coverage", x, "mean of each core region's line coverage, weighted 3 in a main file, 2 else"),
        MetricSpec("context_efficiency", x, "|PL ∩ (CL ∪ OL)| / |PL|: optional lines count as useful"),
        MetricSpec("optional_coverage", x, "|PL ∩ OL| / |OL| (absent when the gold has no optional tier)"),
        *[MetricSpec(f"ndcg_at_{k}", x, f"nDCG of the predicted regions in order within a {k}-line budget; gain per core "
                                          "line 1.5 in a main file, 1 else; the ideal re-sorts the predicted regions by "
                                          "gain per line; clamped at 1") for k in LINE_BUDGETS],
        *[MetricSpec(f"recall_at_{k}", x, f"core lines seen in the first {k} predicted lines (repeats spend the budget) "
                                            "/ core lines") for k in LINE_BUDGETS],
        MetricSpec("first_useful_hit", x, "1 - i/|P| for the first predicted region i (0-based) touching a core line"),
    ]
    ref = MetricKind.REFERENCE
    specs += [
        MetricSpec("ref_primary_file_recall", ref, "the reference's primary files the result returns / its primary files"),
        MetricSpec("ref_primary_region_recall", ref, "the reference's evidence regions in its primary files that a result "
                                                     "evidence range touches / those regions"),
        MetricSpec("ref_primary_line_coverage", ref, "the reference's primary evidence lines inside the result's evidence "
                                                     "/ those lines"),
        MetricSpec("ref_precision_proxy", ref, "the result's evidence ranges touching any reference evidence range / the "
                                               "result's evidence ranges"),
    ]
    r = MetricKind.REVIEW
    seed = "the blind evaluator's score, 0-10 (seed 000's dimension: "
    specs += [
        MetricSpec("completeness", r, seed + "is all the code the fix needs there?)"),
        MetricSpec("relevance_precision", r, seed + "is what is there relevant?)"),
        MetricSpec("evidence_grounding", r, seed + "does the cited code support each file?)"),
        MetricSpec("redundancy_efficiency", r, seed + "is nothing repeated or wasted?)"),
        MetricSpec("downstream_actionability", r, seed + "could an engineer act on it?)"),
        MetricSpec("organization_prioritization", r, seed + "is the most important first?)"),
        MetricSpec("risk_uncertainty_coverage", r, seed + "are gaps and risks said?)"),
        MetricSpec("overall_quality", r, "the blind evaluator's overall score, 0-100 (seed 000)"),
        MetricSpec("can_proceed", r, "1 if the blind evaluator says an engineer could start the fix from the result"),
        MetricSpec("review_rejected", r, "1 if the evaluator's answer was not a valid review (its scores are then "
                                         "undefined, never defaulted)"),
    ]
    return specs


METRICS: dict[str, MetricSpec] = {spec.name: spec for spec in _specs()}
