"""What a downstream agent receives, and what it costs, with seed 001's known-hash two-turn accounting.

A result is rendered as the JSON an agent receives: every file in rank order with its role, and
each evidence excerpt with its lines, its content hash and its source. Turn 1 sends everything;
turn 2 (a follow-up on the same task) sends each payload the client already holds only as its exact
content hash. Source tokens and JSON tokens are exact o200k counts. Gold is applied only here, after
retrieval: selected files (with source sent) and generated files (every file listed) against gold.
"""

from __future__ import annotations

import json
from typing import Any

from locator.hashing import blake3_hex
from locator.lane.ast_lane import OWNER_EXCERPT
from locator.result import LocalizationResult
from locator.system_one.tokens import count_tokens


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def render(result: LocalizationResult, known: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The response; an excerpt whose hash is in `known` is sent as its hash alone."""
    files = []
    for f in result.files:
        excerpts = []
        for e in f.evidence:
            digest = blake3_hex(e.content or "")
            item: dict[str, Any] = {"lines": [e.start_line, e.end_line], "blake3": digest}
            if digest not in known:
                item["source"] = e.content or ""
            excerpts.append(item)
        files.append({"path": f.path, "role": f.role.value, "excerpts": excerpts})
    return {"task": result.task, "files": files}


def sent_hashes(response: dict[str, Any]) -> frozenset[str]:
    return frozenset(e["blake3"] for f in response["files"] for e in f["excerpts"] if "source" in e)


def full_sends(*turns: dict[str, Any]) -> list[str]:
    """The content hash of every payload serialized in full, turn after turn, in order."""
    return [e["blake3"] for turn in turns for f in turn["files"] for e in f["excerpts"] if "source" in e]


def resends(*turns: dict[str, Any]) -> int:
    """Payloads serialized in full although the same exact content was already sent in full earlier
    in the conversation — within turn 1 (two excerpts with identical source) or again on turn 2."""
    sends = full_sends(*turns)
    return len(sends) - len(set(sends))


def owner_excerpt(result: LocalizationResult) -> str | None:
    """`path#symbol` of the AST lane's reserved owner excerpt, if the response carries one."""
    return next((e.id for f in result.files for e in f.evidence if e.reason == OWNER_EXCERPT), None)


def context_metrics(result: LocalizationResult, gold_files: set[str]) -> dict[str, float | None]:
    if any(e.content is None for f in result.files for e in f.evidence):
        return dict.fromkeys(CONTEXT_METRICS)  # a producer that kept no source: nothing to count
    turn1 = render(result)
    turn2 = render(result, known=sent_hashes(turn1))
    turn1_json, turn2_json = _json(turn1), _json(turn2)
    selected = {f.path for f in result.files if f.evidence}
    generated = {f.path for f in result.files}
    source = {f.path: sum(count_tokens(e.content) for e in f.evidence) for f in result.files}
    owner = [e for f in result.files for e in f.evidence if e.reason == OWNER_EXCERPT]
    return {
        "selected_labeled_files": float(len(selected & gold_files)),
        "selected_file_recall": len(selected & gold_files) / len(gold_files) if gold_files else None,
        "generated_labeled_files": float(len(generated & gold_files)),
        "source_tokens": float(sum(source.values())),
        "response_json_tokens": float(count_tokens(turn1_json)),
        "dead_end_source_tokens": float(sum(t for path, t in source.items() if path not in gold_files)),
        "two_turn_json_tokens": float(count_tokens(turn1_json) + count_tokens(turn2_json)),
        "exact_hash_resends": float(resends(turn1, turn2)),
        "owner_excerpt_tokens": float(count_tokens(owner[0].content)) if owner else None,
    }


CONTEXT_METRICS = ("selected_labeled_files", "selected_file_recall", "generated_labeled_files", "source_tokens",
                   "response_json_tokens", "dead_end_source_tokens", "two_turn_json_tokens", "exact_hash_resends",
                   "owner_excerpt_tokens")
