"""SWE-Explore's agent output: a `RELEVANT_FILES:` block of `path:10-20`, `path:5` and `path` lines.

Read as SWE-Explore's README says its agent explorers' answers are read (`explorers/parsing.py::
parse_relevant_files`; its body was not read, its documented rules are these): 1-based inclusive
ranges; `path:5` is `5-5`; a bare path is the whole file; bullets, numbering, quotes, backticks and
bold markers around an entry are ignored, as are `L10-L20` line prefixes, unicode dashes and a
trailing `:column`; a backwards or zero range is dropped. The block runs from its header to the first
blank line after an entry or the end of the text. A text without the block gives nothing (SWE-Explore
falls back to the prose; loclab does not guess).
"""

from __future__ import annotations

import re

HEADER = re.compile(r"^\W*RELEVANT_FILES\W*:?\W*$", re.IGNORECASE)
_DECORATION = re.compile(r"^\s*(?:[-*+•>]|\d+[.)])?\s*[`'\"*_]*|[`'\"*_]*\s*$")
_ENTRY = re.compile(r"^(?P<path>[^\s:]+?)(?::L?(?P<start>\d+)(?:\s*[-–—]\s*L?(?P<end>\d+))?(?::\d+)?)?$")


def relevant_files(text: str) -> list[tuple[str, int | None, int | None]]:
    """The block's entries in order: (path, start, end), start and end None for a whole file."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if HEADER.match(line.strip())), None)
    if start is None:
        return []
    entries: list[tuple[str, int | None, int | None]] = []
    for raw in lines[start + 1:]:
        line = _DECORATION.sub("", raw).strip()
        if not line:
            if entries:
                break
            continue
        found = _ENTRY.match(line)
        if found is None:
            continue
        first = int(found["start"]) if found["start"] else None
        last = int(found["end"]) if found["end"] else first
        if first is not None and (first < 1 or last < first):
            continue  # a backwards or zero range is dropped, as SWE-Explore's parser does
        entries.append((found["path"], first, last))
    return entries
