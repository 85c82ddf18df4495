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

from locator.languages import REGISTERED
from locator.text import Tokenizer, tokens


class MentionKind(StrEnum):
    FRAME = "frame"  # File "path", line N
    PATH = "path"
    DOTTED = "dotted"  # a.b.C.method
    CODE = "code"  # `inline code`


_PATTERNS = {
    MentionKind.PATH: re.compile(r"(?<![\w/.])((?:[\w.-]+/)*[\w-]+\.(?:"
                                 + "|".join(sorted({s[1:] for language in REGISTERED for s in language.suffixes}
                                                   | {"pyi", "pyx", "cfg", "toml", "rst", "txt", "c", "h"}, key=lambda s: (-len(s), s)))
                                 + r"))\b"),
    MentionKind.DOTTED: re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)"),
    MentionKind.CODE: re.compile(r"`([^`\n]{2,80})`"),
}


_FRAMES = tuple(p for language in REGISTERED for p in language.frames)


@dataclass(frozen=True)
class Mention:
    kind: MentionKind
    text: str


def mentions(text: str) -> list[Mention]:
    """Explicit code mentions in task text, in order of appearance per kind, each text once; a frame
    is any registered language's stack-frame line that names a file."""
    found: dict[str, Mention] = {}
    for line in text.split("\n"):
        for pattern in _FRAMES:
            if (match := pattern.search(line.strip())) and match.groupdict().get("path"):
                found.setdefault(match["path"], Mention(MentionKind.FRAME, match["path"]))
    for kind, pattern in _PATTERNS.items():
        for match in pattern.finditer(text):
            if kind is MentionKind.DOTTED and max(len(part) for part in match.group(1).split(".")) < 3:
                continue  # "e.g", "i.e": prose, not code
            found.setdefault(match.group(1), Mention(kind, match.group(1)))
    return list(found.values())


def build_query(text: str, tokenizer: Tokenizer, mention_weight: int) -> list[str]:
    query = list(tokens(text, tokenizer))
    if mention_weight:
        for mention in mentions(text):
            query += list(tokens(re.sub(r"[./\\]", " ", mention.text), tokenizer)) * mention_weight
    return query
