"""Runs one locator on one task and assembles the canonical result with its full cost."""

from __future__ import annotations

import time
from collections import Counter

from locator.base import Locator, LocatorContext
from locator.repository import RepositoryView
from locator.languages.sources import Selection
from locator.result import EXCLUDED_NAMED, Cost, LocalizationResult, PhysicalCost, Producer, SourceSelection, Tokens
from locator.system_one.client import SystemOne
from locator.task import Task
from locator.trace import Trace


def localize(locator: Locator, task: Task, repo: RepositoryView, system_one: SystemOne | None, trace: Trace) -> LocalizationResult:
    if system_one is not None:
        system_one.trace = trace
    ctx = LocatorContext(repo=repo, trace=trace, system_one=system_one, languages=task.languages)
    lines0, index0 = ctx.lines_read(), ctx.index_lines()
    started = time.perf_counter()
    output = locator.localize(task, ctx)
    elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
    usage = ctx.usage()
    used_model = usage.logical_calls > 0
    pricing = system_one.pricing if system_one is not None else None
    if not output.cost_known:
        return LocalizationResult(task=task.id, subject=task.subject, producer=output.producer, files=output.files,
                                  cost=Cost(), ranked_modules=output.ranked_modules,
                                  ranked_entities=output.ranked_entities)
    return LocalizationResult(
        task=task.id,
        subject=task.subject,
        producer=Producer(
            system=f"loclab/{locator.name}",
            model=system_one.model if (system_one is not None and used_model) else None,
            confidence_semantics=output.confidence_semantics,
        ),
        files=output.files,
        ranked_modules=output.ranked_modules,
        ranked_entities=output.ranked_entities,
        handoff=output.handoff,
        sources=_sources(ctx.selection),
        cost=Cost(
            elapsed_ms=elapsed_ms,
            model_calls=usage.logical_calls,
            tokens=Tokens(input=usage.logical_input_tokens, output=usage.logical_output_tokens),
            source_lines_read=ctx.lines_read() - lines0,
            index_lines=ctx.index_lines() - index0,
            stages=ctx.stages,
            usd=pricing.usd(usage.logical_input_tokens, usage.logical_output_tokens) if pricing else None,
            physical=PhysicalCost(
                model_calls=usage.physical_calls,
                tokens=Tokens(input=usage.physical_input_tokens, output=usage.physical_output_tokens),
                cached_input_tokens=usage.physical_cached_input_tokens,
                cache_hits=usage.cache_hits,
                cache_misses=usage.cache_misses,
                retries=usage.retries,
                truncated_prompts=usage.truncated_prompts,
                model_wall_time_ms=round(usage.model_wall_time_ms, 3),
                model_critical_path_ms=round(usage.model_critical_path_ms, 3),
                usd=pricing.usd(usage.physical_input_tokens, usage.physical_output_tokens) if pricing else None,
            ),
        ),
    )


def _sources(selection: Selection | None) -> SourceSelection | None:
    if selection is None:
        return None
    return SourceSelection(languages=list(selection.languages), declared=selection.declared,
                           candidate_files=len(selection.paths),
                           excluded=dict(Counter(selection.excluded.values())),
                           excluded_paths=sorted(selection.excluded)[:EXCLUDED_NAMED])
