"""Mutation check: break one mechanism at a time, run the tests that are about it, expect red.

    .venv/bin/python scripts/mutation_check.py            # every mutation
    .venv/bin/python scripts/mutation_check.py -k epoch   # those whose name contains "epoch"

Each mutation replaces one exact snippet of the source (it must occur once), runs its tests and
restores the file whatever happens. A mutation the tests survive is a test that cannot fail:
the script lists it and exits 1.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
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

MUTATIONS = [
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
             "        if cfg.tracking.traces and outcome.status", "        if False and outcome.status",
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
             "FileState(c, type(ctx._repo)(ctx._repo.root).outline(c.info.path).signatures if",
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
             "    predicted_entities = (list(dict.fromkeys(result.ranked_entities)) if result.ranked_entities is not None",
             "    predicted_entities = (list(dict.fromkeys(result.ranked_entities)) if False", (METRICS,)),
    Mutation("repeats aggregated as independent rows", "metrics/aggregate.py",
             '.groupby(ok["task_id"]).mean()', '.groupby([ok["task_id"], ok["repeat"]]).mean().droplevel(1)',
             ("tests/metrics/test_aggregate.py",)),
    Mutation("the CI ignores repositories", "metrics/statistics.py", "    if ci_unit(clusters) == CiUnit.TASK:\n",
             "    if True:\n", ("tests/metrics/test_aggregate.py", "tests/metrics/test_statistics.py")),
    Mutation("code identity left out of the results' address", "experiments/pipeline.py",
             '               "code": code_identity().source_blake3,\n', "",
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
    Mutation("gold not checked against the subject", "experiments/pipeline.py",
             "            check_gold(row.gold, _line_count_in(repo), what=row.task.id)\n", "",
             ("tests/reliability/test_bad_manifests.py",)),
    Mutation("cached subject trusted without its digest", "dataset/subjects.py",
             "                self._check_tree(final, what)\n", "",
             ("tests/reliability/test_hostile_repositories.py::test_a_tampered_non_gold_file_in_the_cache_fails_closed",)),
    Mutation("artifact name not checked", "dataset/subjects.py", "    if artifact.name != spec.artifact_filename:",
             "    if False:", ("tests/reliability/test_hostile_repositories.py::test_an_artifact_whose_name_differs_from_the_manifest_fails_closed",)),
    Mutation("symlink loops crash the enumeration", "locator/repository.py",
             "        except (RuntimeError, OSError):  # RuntimeError: a loop on Python 3.11; OSError: ELOOP or dangling",
             "        except OSError:", ("tests/reliability/test_hostile_repositories.py",)),
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


def run(mutation: Mutation) -> tuple[bool, str]:
    """Whether the tests went red (the mutation was killed), and pytest's closing line."""
    path = ROOT / mutation.path
    original = path.read_text(encoding="utf-8")
    if original.count(mutation.old) != 1:
        raise SystemExit(f"{mutation.name}: the snippet occurs {original.count(mutation.old)} times in {mutation.path}")
    try:
        path.write_text(original.replace(mutation.old, mutation.new), encoding="utf-8")
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *mutation.tests],
                              cwd=ROOT, capture_output=True, text=True)
    finally:
        path.write_text(original, encoding="utf-8")
    closing = (proc.stdout.strip().splitlines() or [""])[-1]
    return proc.returncode != 0, closing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-k", default="", help="only mutations whose name contains this")
    args = parser.parse_args()
    chosen = [m for m in MUTATIONS if args.k in m.name]
    if not chosen:
        parser.error(f"no mutation's name contains {args.k!r}")
    survivors = []
    for mutation in chosen:
        killed, closing = run(mutation)
        print(f"{'killed  ' if killed else 'SURVIVED'}  {mutation.name}  ({mutation.path}): {closing}", flush=True)
        if not killed:
            survivors.append(mutation.name)
    print(f"{len(survivors)} survivors" + (f": {', '.join(survivors)}" if survivors else ""))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
