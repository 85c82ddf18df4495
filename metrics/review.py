"""Blind quality review (seed 000): an evaluator reads ONE anonymized candidate result with the
frozen subject's code it cites and returns the seed's seven dimensions (0-10), an overall score
(0-100) and `can_proceed` (would an engineer start the fix from this?).

Blind: the evaluator is never told the locator, the backend or the gold; it sees the task, the
candidate's files and evidence (the context pack, rendered from the frozen subject) and the
subject's file list. It is run by a System One backend that generates (`review.system_one`), its
answers going through the decision cache like any other generation.

The answer is parsed fail-closed (`parse_review`): the first JSON object in the text that holds
every field, whether bare, inside prose or in a fenced block; `overall.files` nested under
`overall` is moved to the top level when the top level has none (the seed's one lossless
normalization); anything else is a `ReviewParseError` naming what is missing. A rejected review
scores nothing: it is counted (`review_rejected`), never replaced by a default.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from locator.task import Record

DIMENSIONS = ("completeness", "relevance_precision", "evidence_grounding", "redundancy_efficiency",
              "downstream_actionability", "organization_prioritization", "risk_uncertainty_coverage")
REVIEW_METRICS = (*DIMENSIONS, "overall_quality", "can_proceed", "review_rejected")  # metrics.definitions
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


class ReviewParseError(ValueError):
    """The evaluator's text holds no valid review object; the message says what was missing."""


class QualityReview(Record):
    schema_version: int = 1
    dimensions: dict[str, float]
    overall: float = Field(ge=0, le=100)
    can_proceed: bool
    files: list[Any] | None = None  # the evaluator's per-file assessments, kept as given

    def scores(self) -> dict[str, float]:
        return {**self.dimensions, "overall_quality": self.overall, "can_proceed": float(self.can_proceed),
                "review_rejected": 0.0}


def _key(name: str) -> str:
    return re.sub(r"[^a-z]+", "_", name.lower()).strip("_").replace("organisation", "organization")


def _objects(text: str) -> list[str]:
    """Candidate JSON objects: fenced blocks first, then every balanced {...} at top level."""
    found = [m.group(1) for m in _FENCED.finditer(text)]
    depth, start, in_string, escaped = 0, None, False, False
    for i, ch in enumerate(text):
        if in_string:
            escaped = not escaped and ch == "\\"
            if ch == '"' and not escaped:
                in_string = False
            continue
        if ch == '"' and depth:
            in_string = True
        elif ch == "{":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0 and start is not None:
                found.append(text[start:i + 1])
    return list(dict.fromkeys(c.strip() for c in found))  # a fenced object is also a balanced one


def _number(value: Any, what: str, high: float) -> float:
    if isinstance(value, dict) and "score" in value:
        value = value["score"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
        raise ReviewParseError(f"{what}: expected a number in [0, {high:g}], got {value!r}")
    return float(value)


def _review(data: dict) -> QualityReview:
    data = dict(data)
    overall = data.get("overall")
    if "files" not in data and isinstance(overall, dict) and isinstance(overall.get("files"), list):
        overall = dict(overall)
        data["files"] = overall.pop("files")  # the seed's one lossless normalization
        data["overall"] = overall
    raw = data.get("dimensions", data)
    if not isinstance(raw, dict):
        raise ReviewParseError(f"dimensions: expected an object, got {type(raw).__name__}")
    given = {_key(k): v for k, v in raw.items()}
    missing = [d for d in DIMENSIONS if d not in given]
    if missing:
        raise ReviewParseError(f"missing dimensions {missing}")
    if "overall" not in data:
        raise ReviewParseError("missing overall")
    proceed = data.get("can_proceed")
    if not isinstance(proceed, bool):
        raise ReviewParseError(f"can_proceed: expected true or false, got {proceed!r}")
    files = data.get("files")
    if files is not None and not isinstance(files, list):
        raise ReviewParseError(f"files: expected a list, got {type(files).__name__}")
    return QualityReview(dimensions={d: _number(given[d], d, 10) for d in DIMENSIONS},
                         overall=_number(data["overall"], "overall", 100), can_proceed=proceed, files=files)


def parse_review(text: str) -> QualityReview:
    """The review in an evaluator's text, or ReviewParseError: never a partial or default review."""
    problems = []
    for candidate in _objects(text):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as exc:
            problems.append(f"not JSON ({exc.msg})")
            continue
        if not isinstance(data, dict):
            continue
        try:
            return _review(data)
        except ReviewParseError as exc:
            problems.append(str(exc))
    detail = "; ".join(problems[:3]) if problems else "no JSON object in it"
    raise ReviewParseError(f"the evaluator's answer is not a review ({detail}): {text[:200]!r}")


class ReviewSettings(BaseModel):
    """`conf/review/*.yaml`: whether each result is reviewed, and the evaluator's prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    enabled: bool
    max_tokens: int = Field(ge=1)
    max_listed_files: int = Field(ge=0)
    system: str
    user: str  # {task}, {candidate}, {files}


def review_messages(settings: ReviewSettings, task_text: str, candidate: str, files: list[str]) -> list[dict[str, str]]:
    listing = "\n".join(files[: settings.max_listed_files])
    if len(files) > settings.max_listed_files:
        listing += f"\n… {len(files) - settings.max_listed_files} more files"
    return [{"role": "system", "content": settings.system},
            {"role": "user", "content": settings.user.format(task=task_text, candidate=candidate, files=listing)}]
