"""The retrieval query: the task text, plus the code it mentions explicitly, weighted.

An issue or a trace often names the code outright: a path (`astropy/io/ascii/rst.py`), a dotted
name (`module.Class.method`), a traceback frame (`File ".../core.py", line 12`), an identifier in
backticks. Those tokens are repeated `mention_weight` more times in the query (BM25 adds a repeated
query term's score again); `mention_weight: 0` is the task text alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from locator.retrieval.documents import tokens_of
from locator.text import Tokenizer


class MentionKind(StrEnum):
    FRAME = "frame"  # File "path", line N
    PATH = "path"
    DOTTED = "dotted"  # a.b.C.method
    CODE = "code"  # `inline code`


_PATTERNS = {
    MentionKind.FRAME: re.compile(r'File "([^"\n]+)", line \d+'),
    MentionKind.PATH: re.compile(r"(?<![\w/.])((?:[\w.-]+/)*[\w-]+\.(?:py|pyi|pyx|cfg|toml|rst|txt|c|h))\b"),
    MentionKind.DOTTED: re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)"),
    MentionKind.CODE: re.compile(r"`([^`\n]{2,80})`"),
}


@dataclass(frozen=True)
class Mention:
    kind: MentionKind
    text: str


def mentions(text: str) -> list[Mention]:
    """Explicit code mentions in task text, in order of appearance per kind, each text once."""
    found: dict[str, Mention] = {}
    for kind, pattern in _PATTERNS.items():
        for match in pattern.finditer(text):
            if kind is MentionKind.DOTTED and max(len(part) for part in match.group(1).split(".")) < 3:
                continue  # "e.g", "i.e": prose, not code
            found.setdefault(match.group(1), Mention(kind, match.group(1)))
    return list(found.values())


def build_query(text: str, tokenizer: Tokenizer, mention_weight: int) -> list[str]:
    query = list(tokens_of(text, tokenizer))
    if mention_weight:
        for mention in mentions(text):
            query += list(tokens_of(re.sub(r"[./\\]", " ", mention.text), tokenizer)) * mention_weight
    return query
