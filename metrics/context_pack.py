"""Scoring the context pack (seed 002): what its note claims against what its text actually sent.

The audit does not trust the renderer's own bookkeeping: the lines sent are parsed back from the
pack's text (numbered source lines under each file header), the wanted spans are derived again
from the result and the source, and a "complete" claim is false when a file the pack shows has a
wanted span whose lines the text does not carry. Gold enters only for `pack_line_recall`.
"""

from __future__ import annotations

import re

from dataset.manifest import Gold
from locator.result import LocalizationResult
from locator.system_one.tokens import count_tokens
from render.notes import COMPLETE_CLAIM, TRIMMED_MARK
from render.pack import ContextPack
from render.sections import FENCE, FileSource, SourceOf, wanted_spans

_OPENING = re.compile(re.escape(FENCE) + r"\w*$")  # a section's fence opens with its language's name
_HEADER = re.compile(r"^### (?P<path>.+?) · [^·]+ · lines .+ of \d+$")
_SOURCE_LINE = re.compile(r"^\s*(\d+)\t")
_READ_OFFER = re.compile(r"\bRead\b")


def sent_lines(text: str) -> dict[str, set[int]]:
    """Per path, the line numbers the pack's text carries inside that file's fenced sections."""
    sent: dict[str, set[int]] = {}
    path, fence = None, None
    for line in text.split("\n"):
        if fence is None and (header := _HEADER.match(line)):
            path = header["path"]
            sent.setdefault(path, set())
        elif path is not None and fence is None and _OPENING.match(line):
            fence = line
        elif fence is not None and line == FENCE:
            path, fence = None, None
        elif fence is not None and (numbered := _SOURCE_LINE.match(line)):
            sent[path].add(int(numbered[1]))
    return sent


def _wanted_lines(result: LocalizationResult, source_of: SourceOf) -> dict[str, set[int]]:
    entities = list(result.ranked_entities or [])
    wanted: dict[str, set[int]] = {}
    for entry in result.files:
        text = source_of(entry.path)
        if text is None:
            continue
        for w in wanted_spans(entry, FileSource.of(entry.path, text), entities):
            wanted.setdefault(entry.path, set()).update(range(w.range.start_line, w.range.end_line + 1))
    return wanted


def pack_metrics(pack: ContextPack, result: LocalizationResult, gold: Gold, source_of: SourceOf) -> dict[str, float]:
    sent = sent_lines(pack.text)
    wanted = _wanted_lines(result, source_of)
    trimmed = [path for path in sent if wanted.get(path, set()) - sent[path]]
    claims = COMPLETE_CLAIM in pack.epilogue
    gold_lines = {(s.path, n) for s in gold.spans for n in range(s.start_line, s.end_line + 1)}
    tokens = count_tokens(pack.text)
    return {
        "claims_complete": float(claims),
        "false_complete_claims": float(claims and bool(trimmed)),
        "trimmed_notes": float(TRIMMED_MARK in pack.epilogue),
        "trimmed_files": float(len(trimmed)),
        "offers_read": float(bool(_READ_OFFER.search(pack.epilogue))),
        "pointer_entries": float(sum(1 for line in pack.epilogue.split("\n")
                                     if line.startswith("- ") and not line.startswith("- … and"))),
        "rendered_tokens": float(tokens),
        "over_cap": float(tokens > pack.cap_tokens),
        "wanted_lines": float(sum(len(lines) for lines in wanted.values())),
        "wanted_lines_sent": float(sum(len(lines & sent.get(path, set())) for path, lines in wanted.items())),
        "pack_line_recall": (sum(1 for path, n in gold_lines if n in sent.get(path, ())) / len(gold_lines)
                             if gold_lines else None),
    }


PACK_METRICS = ("claims_complete", "false_complete_claims", "trimmed_notes", "trimmed_files", "offers_read",
                "pointer_entries", "rendered_tokens", "over_cap", "wanted_lines", "wanted_lines_sent", "pack_line_recall")
