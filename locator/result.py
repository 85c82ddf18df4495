"""The canonical code-localization result (schema_version 4) of the System One research.

Missing values are null, never invented: a producer that cannot count tokens says None.
Version 2 added `provenance` (the code, configuration address and System One that produced the
result), per-file stage cost, and a producer's own ranked module/entity lists. Version 3 adds
`handoff` (what the first stage ranked and passed on, so scoring can show where a gold file was
lost) and `index_lines` (lines read to build an index, apart from lines read). Version 4 binds the
provenance to every loclab module on the result's path and the distributions they import
(`CodeIdentity.modules`, `dependencies`, `python`), not one package. Version 5 adds `sources`: the
languages looked for and the generated or vendored files left out of the candidates. A version 4
result still reads (scoring re-runs on saved results).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from locator.files import write_atomically
from locator.hashing import blake3_hex, canonical_json
from locator.task import Record, SubjectIdentity

SCHEMA_VERSION = 5
EXCLUDED_NAMED = 50


class Role(StrEnum):
    RELEVANT = "relevant"
    PRIMARY = "primary"
    SUPPORTING = "supporting"
    CONTEXT = "context"
    UNKNOWN = "unknown"


class ConfidenceLabel(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


def confidence_label(score: float) -> ConfidenceLabel:
    if score >= 0.80:
        return ConfidenceLabel.HIGH
    if score >= 0.60:
        return ConfidenceLabel.MEDIUM
    return ConfidenceLabel.LOW


class Confidence(Record):
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    label: ConfidenceLabel | None = None
    type: str | None = None
    basis: str | None = None

    @classmethod
    def of(cls, score: float, type: str, basis: str) -> "Confidence":
        return cls(score=score, label=confidence_label(score), type=type, basis=basis)


class Evidence(Record):
    id: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    confidence: Confidence | None = None
    reason: str | None = None
    content: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> "Evidence":
        if self.end_line < self.start_line:
            raise ValueError(f"evidence {self.id}: end_line {self.end_line} < start_line {self.start_line}")
        return self


class ResultFile(Record):
    path: str = Field(min_length=1)
    role: Role = Role.RELEVANT
    confidence: Confidence | None = None
    reason: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)


class Producer(Record):
    system: str
    model: str | None = None
    confidence_semantics: str | None = None


class Tokens(Record):
    input: int | None = None
    output: int | None = None
    cache_read_input: int | None = None
    cache_creation_input: int | None = None
    thinking: int | None = None


class FileCost(Record):
    """What one stage spent on one file and how it ended there."""

    path: str
    line_count: int = Field(ge=0)
    lines_read: int = Field(ge=0)
    coverage_pct: float = Field(ge=0.0, le=100.0, description="distinct lines read / lines of the file")
    rounds: int = Field(ge=0, description="rounds (two_phase) or epochs (runtimes) the file took part in")
    reads: int | None = Field(default=None, ge=0, description="read effects executed on the file")
    final_region_lines: list[int] | None = Field(
        default=None, description="semantic zoom: the line count of each region it ended on")
    termination: str | None = None
    entered_by: str | None = Field(default=None, description="how the file entered the stage: handoff | follow")
    followed_from: str | None = Field(default=None, description="entered_by=follow: the file it was followed from")


class StageCost(Record):
    name: str
    elapsed_ms: float | None = None
    model_calls: int | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    source_lines_read: int | None = None
    index_lines: int | None = None
    details: dict[str, int | float | str | None] = Field(default_factory=dict)
    counted: list[str] = Field(default_factory=list, description="the details that are counts, summed over a job's tasks")
    files: list[FileCost] = Field(default_factory=list)


class PhysicalCost(Record):
    """What reached a model backend, as opposed to what the algorithm asked (the logical cost)."""

    model_calls: int | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cached_input_tokens: int | None = Field(default=None, description="of tokens.input, those the backend's prefix "
                                                                      "(key/value) cache held, so not encoded")
    cache_hits: int | None = None
    cache_misses: int | None = None
    retries: int | None = None
    truncated_prompts: int | None = Field(default=None, description="prompts the backend cut in the middle to fit its "
                                                                    "model's context (local_llm's max_prompt_tokens)")
    model_wall_time_ms: float | None = None
    model_critical_path_ms: float | None = None
    usd: float | None = Field(default=None, description="billed provider cost; null without a price table")


class Cost(Record):
    elapsed_ms: float | None = None
    model_calls: int | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    source_lines_read: int | None = None
    index_lines: int | None = Field(default=None, description="lines read to build an index (retrieval, definitions); "
                                                               "charged to every task that uses the index")
    stages: list[StageCost] = Field(default_factory=list)
    physical: PhysicalCost | None = None
    usd: float | None = Field(default=None, description="provider cost of the logical calls; null without a price table")


class Dependency(Record):
    """An installed distribution on a result's path: its version and a digest of what it installed
    (the content of its Python files; the name and size of every other file)."""

    name: str
    version: str
    installed_blake3: str = Field(min_length=64, max_length=64)


class WeightFile(Record):
    """A model file a module on a result's path loads (its `weight_files()`)."""

    file: str
    blake3: str = Field(min_length=64, max_length=64)


class CodeIdentity(Record):
    """Everything of the code that produced a result: the source of every loclab module on its path
    (`modules`, hashed as `source_blake3`), the distributions they import with their versions and
    installed source, the model files those modules load, the interpreter, and the git revision it
    was at (`dirty`: those modules differed from that revision). `digest` is what an address binds."""

    source_blake3: str = Field(min_length=64, max_length=64)
    modules: list[str]
    dependencies: list[Dependency]
    weights: list[WeightFile]
    python: str
    git_revision: str
    dirty: bool

    @property
    def digest(self) -> str:
        return blake3_hex(canonical_json({"source": self.source_blake3, "python": self.python,
                                          "dependencies": [d.model_dump() for d in self.dependencies],
                                          "weights": [w.model_dump() for w in self.weights]}))

    def versions(self) -> str:
        """`name==version` of every dependency, space-separated (an MLflow tag)."""
        return " ".join(f"{d.name}=={d.version}" for d in self.dependencies)


class Provenance(Record):
    """Everything a result is bound to besides the task: the code, the results' content address
    (locator config + code + inputs + System One) and the System One identity."""

    code: CodeIdentity
    run_key: str
    system_one: str | None = Field(description="backend identity; null when the locator asks no System One")


class Handoff(Record):
    """What a locator's first stage produced: its ranking of files, best first (every file it
    scored; a file it never scored is absent), and the files it handed to the next stage. Recorded
    at localization, joined with gold only when scoring (the stage funnel)."""

    stage: str
    ranked: list[str]
    handed_off: list[str]
    followed: list[str] = Field(default_factory=list, description="files the reader followed into (FollowFile), "
                                "in the order they entered")


class SourceSelection(Record):
    """Which files were candidates: the languages looked for, and what was left out and why."""

    languages: list[str]
    declared: bool = Field(description="declared by the task or its data set; false: every registered language present")
    candidate_files: int
    excluded: dict[str, int] = Field(description="generated or vendored files of those languages left out, by reason")
    excluded_paths: list[str] = Field(description=f"the first {EXCLUDED_NAMED} left out, by path")


class LocalizationResult(Record):
    schema_version: Literal[4, 5] = SCHEMA_VERSION
    kind: Literal["code-localization-result"] = "code-localization-result"
    task: str
    subject: SubjectIdentity | None
    producer: Producer
    files: list[ResultFile]
    cost: Cost
    provenance: Provenance | None = Field(default=None, description="set by the runner when the result is saved")
    ranked_modules: list[str] | None = Field(
        default=None, description="the producer's own ranked modules (`path:Outer`), e.g. LocAgent found_modules")
    ranked_entities: list[str] | None = Field(
        default=None, description="the producer's own ranked entities (`path:Class.method`), e.g. LocAgent found_entities")
    handoff: Handoff | None = Field(default=None, description="the first stage's ranking and hand-off; null for a "
                                                              "producer without stages")
    sources: SourceSelection | None = Field(default=None, description="the candidate files chosen; null when the "
                                                                      "locator never asked for them (imported results)")

    def ranked_paths(self) -> list[str]:
        seen: dict[str, None] = {}
        for file in self.files:
            seen.setdefault(file.path, None)
        return list(seen)

    def write(self, path: Path) -> None:
        """Atomic write so an interrupted run never leaves a half result that looks finished."""
        write_atomically(path, self.model_dump_json(indent=2) + "\n")

    @classmethod
    def read(cls, path: Path) -> "LocalizationResult":
        return cls.model_validate_json(path.read_text(encoding="utf-8"))


def json_schema() -> str:
    return json.dumps(LocalizationResult.model_json_schema(), indent=2, sort_keys=True) + "\n"
