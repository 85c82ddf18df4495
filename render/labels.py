"""Short, unambiguous file labels for notes: the shortest path suffix no other listed path shares."""

from __future__ import annotations

from collections.abc import Sequence


def shortest_unique_suffixes(paths: Sequence[str]) -> dict[str, str]:
    """`src/a/core.py` and `src/b/core.py` become `a/core.py` and `b/core.py`; a unique basename
    stays a basename. A path is never shortened to a label another path also ends with."""
    unique = list(dict.fromkeys(paths))
    parts = {p: p.split("/") for p in unique}
    labels = {}
    for path in unique:
        for n in range(1, len(parts[path]) + 1):
            suffix = "/".join(parts[path][-n:])
            if not any(other != path and (other == suffix or other.endswith("/" + suffix)) for other in unique):
                break
        labels[path] = suffix
    return labels
