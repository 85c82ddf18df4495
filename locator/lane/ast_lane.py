"""`locator=ast_lane`: a base retrieval plus seed 001's AST structural lane, under one task source budget.

    base ranked files and excerpts -> bounded trace terms -> one bounded indexed search per term ->
    owners (structural definition hits; auxiliary text hits only corroborate an owner range they
    fall in) -> v1: up to `focus_paths` soft focus paths appended to the candidates | v2: owner
    paths ranked, up to `diagnostic_paths` emitted, the first eligible owner definition reserved as
    one excerpt of at most `excerpt_tokens` exact source tokens, subtracted from the budget ->
    selection: base excerpts in base order while they fit `source_budget` tokens.

The result lists every generated candidate: a file with source sent has its excerpts as evidence;
one without is `context` (a path only). Gold is applied only at scoring.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator

from locator.base import LocatorContext, LocatorOutput
from locator.languages import language_of
from locator.lane.terms import Terms, TraceTerms
from locator.repository import SearchHit, SearchKind
from locator.result import Confidence, Evidence, ResultFile, Role
from locator.settings import Settings
from locator.system_one.tokens import count_tokens
from locator.task import Task

OWNER_EXCERPT = "owner excerpt"  # the reason of the one reserved owner-definition excerpt
DIAGNOSTIC = "diagnostic owner path"


class LaneVersion(StrEnum):
    OFF = "off"  # the base alone, under the same budget and rendering (the null arm)
    V1 = "v1"
    V2 = "v2"


@dataclass(frozen=True)
class Owner:
    """A definition found by structural search, with what supports it."""

    hit: SearchHit
    term: str
    qualified: bool  # found by a qualified-owner term
    exact: bool  # a qualified match, or a name with exactly one definition in the subject

    @property
    def path(self) -> str:
        return self.hit.path


class AstLane(Settings):
    version: LaneVersion
    terms: TraceTerms
    max_hits: int = Field(ge=1, description="hits per indexed search")
    max_response_tokens: int = Field(ge=1, description="exact o200k tokens of one search's response")
    focus_paths: int = Field(ge=0, description="v1: soft focus paths added to the candidates")
    diagnostic_paths: int = Field(ge=0, description="v2: owner paths emitted as diagnostics")
    excerpt_tokens: int = Field(ge=1, description="v2: exact source tokens of the reserved owner excerpt, at most")
    source_budget: int = Field(ge=1, description="exact source tokens the response may carry per task")


class AstLaneLocator(Settings):
    name: str
    base: Any = Field(description="any locator that returns ranked files (bm25 by default)")
    lane: AstLane

    @field_validator("base")
    @classmethod
    def _a_locator(cls, base: Any) -> Any:
        if not callable(getattr(base, "localize", None)):
            raise ValueError(f"locator.base must be a locator, got {type(base).__name__}")
        return base

    @property
    def uses_system_one(self) -> bool:
        return getattr(self.base, "uses_system_one", True)

    @property
    def input_identity(self) -> str | None:
        return getattr(self.base, "input_identity", None)

    def check_inputs(self) -> None:
        check = getattr(self.base, "check_inputs", None)
        if check is not None:
            check()

    def localize(self, task: Task, ctx: LocatorContext) -> LocatorOutput:
        base = self.base.localize(task, ctx)
        lane = self.lane
        with ctx.stage("ast_lane") as stage:
            terms = (lane.terms.extract(task.text, task.languages) if lane.version is not LaneVersion.OFF
                     else Terms((), (), ()))
            owners, corroborations, searches = self._search(ctx, terms)
            languages = task.languages
            candidates = [f.path for f in base.files]
            generated: list[tuple[str, str]] = []  # (path, reason) added by the lane, without source
            excerpt: tuple[Owner, Evidence] | None = None
            if lane.version is LaneVersion.V1:
                by_hits = Counter(o.path for o in owners)
                for path, _ in sorted(by_hits.items(), key=lambda kv: (-kv[1], kv[0])):
                    if len(generated) == lane.focus_paths:
                        break
                    if path not in candidates:
                        generated.append((path, "soft focus path"))
            elif lane.version is LaneVersion.V2:
                ranked = self._rank(owners, corroborations, languages)
                generated = [(p, DIAGNOSTIC) for p in ranked[: lane.diagnostic_paths]]
                excerpt = self._owner_excerpt(ctx, ranked, owners, corroborations)
            files = self._select(base.files, generated, excerpt)
            stage.set(lane_version=lane.version.value, ast_terms=len(terms.ast), owner_terms=len(terms.owners),
                      argument_terms=len(terms.arguments), searches=searches, owners=len(owners),
                      corroborations=sum(corroborations.values()), generated_paths=len(generated),
                      owner_excerpt_tokens=count_tokens(excerpt[1].content) if excerpt else None)
            ctx.decide(stage="ast_lane", terms={"ast": terms.ast, "owners": terms.owners, "arguments": terms.arguments},
                       owner_paths=[p for p, r in generated if r == DIAGNOSTIC],
                       owner_excerpt=excerpt[1].id if excerpt else None)
        return LocatorOutput(files=files, confidence_semantics=base.confidence_semantics)

    def _search(self, ctx: LocatorContext, terms: Terms) -> tuple[list[Owner], Counter, int]:
        """One bounded search per retained term; auxiliary hits count only inside an owner's range."""
        lane, owners, searches = self.lane, [], 0
        for term, qualified in [*((t, False) for t in terms.ast), *((t, True) for t in terms.owners)]:
            result = ctx.search(term, SearchKind.DEFINITION, lane.max_hits, lane.max_response_tokens)
            searches += 1
            for hit in result.hits:
                owners.append(Owner(hit, term, qualified, exact=qualified or (len(result.hits) == 1 and not result.truncated)))
        corroborations: Counter = Counter()
        for term in terms.arguments:
            result = ctx.search(term, SearchKind.TEXT, lane.max_hits, lane.max_response_tokens)
            searches += 1
            for hit in result.hits:
                for owner in owners:
                    if owner.path == hit.path and owner.hit.line <= hit.line <= owner.hit.end_line:
                        corroborations[(owner.path, owner.hit.line)] += 1
        return owners, corroborations, searches

    @staticmethod
    def _rank(owners: list[Owner], corroborations: Counter, languages: tuple[str, ...]) -> list[str]:
        """Source-language owner paths of exact owners: qualified-owner and named-argument
        corroboration first, then a declared language's extension, then co-occurrence (distinct
        terms), hits, and the path."""
        by_path: dict[str, list[Owner]] = {}
        for o in owners:
            if o.exact and language_of(o.path) is not None:
                by_path.setdefault(o.path, []).append(o)

        def key(path: str) -> tuple:
            found = by_path[path]
            declared = language_of(path).name in languages
            return (-sum(o.qualified for o in found), -sum(corroborations[(path, o.hit.line)] for o in found),
                    not declared, -len({o.term for o in found}), -len(found), path)

        return sorted(by_path, key=key)

    def _owner_excerpt(self, ctx: LocatorContext, ranked: list[str], owners: list[Owner],
                       corroborations: Counter) -> tuple[Owner, Evidence] | None:
        """The first eligible definition of the best owner path (qualified owners first, then the most
        corroborated, then the earliest), cut at a line boundary to at most `excerpt_tokens` exact
        source tokens (a definition whose first line alone is longer is not eligible)."""
        for path in ranked[:1]:
            exact = [o for o in owners if o.path == path and o.exact]
            for owner in sorted(exact, key=lambda o: (not o.qualified, -corroborations[(path, o.hit.line)], o.hit.line)):
                lines = ctx.read(path, owner.hit.line, owner.hit.end_line).lines
                kept: list[str] = []
                for line in lines:
                    if count_tokens("".join([*kept, line])) > self.lane.excerpt_tokens:
                        break
                    kept.append(line)
                if kept:
                    end = owner.hit.line + len(kept) - 1
                    return owner, Evidence(id=f"{path}#{owner.hit.symbol}", start_line=owner.hit.line, end_line=end,
                                           confidence=Confidence(type="structural", basis=f"definition of {owner.term!r}"),
                                           reason=OWNER_EXCERPT, content="".join(kept))
        return None

    def _select(self, base_files: list[ResultFile], generated: list[tuple[str, str]],
                excerpt: tuple[Owner, Evidence] | None) -> list[ResultFile]:
        """Base candidates in base order, each base excerpt kept while it fits the budget left after
        the reserved owner excerpt (the owner's file is not moved up); then the lane's paths."""
        budget = self.lane.source_budget
        owner_path = excerpt[0].path if excerpt else None
        if excerpt:
            budget -= count_tokens(excerpt[1].content)
        files: list[ResultFile] = []
        for f in base_files:
            kept = [excerpt[1]] if f.path == owner_path else []
            for e in f.evidence:
                cost = count_tokens(e.content or "")
                if e.content and cost <= budget:
                    kept.append(e)
                    budget -= cost
            files.append(f.model_copy(update={"evidence": kept, "role": f.role if kept else Role.CONTEXT}))
        listed = {f.path for f in files}
        if owner_path and owner_path not in listed:
            files.append(ResultFile(path=owner_path, role=Role.SUPPORTING, reason=OWNER_EXCERPT, evidence=[excerpt[1]]))
            listed.add(owner_path)
        for path, reason in generated:
            if path not in listed:
                files.append(ResultFile(path=path, role=Role.CONTEXT, reason=reason))
                listed.add(path)
            elif reason == DIAGNOSTIC:
                at = next(i for i, f in enumerate(files) if f.path == path)
                files[at] = files[at].model_copy(update={"reason": f"{files[at].reason or ''}; {DIAGNOSTIC}".lstrip("; ")})
        return files
