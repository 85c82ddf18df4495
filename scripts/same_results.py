"""Are two result trees the same localization? Compares every task's localization-result.json under
two results folders (one job each), with wall-clock fields, the cache-dependent physical cost and
the provenance (code identity, address) set aside — the proof a refactor changed nothing.

    .venv/bin/python scripts/same_results.py BEFORE_JOB_DIR AFTER_JOB_DIR

Exits 0 when every task is identical, 1 otherwise (listing the tasks and the first differing keys).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from metrics.comparator import what_was_found


def _comparable(path: Path) -> dict:
    return what_was_found(json.loads(path.read_text(encoding="utf-8")), keep_code=False, keep_address=False)


def _first_difference(a, b, where="") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return where or "(root)"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path, help="a job's results folder (runs/results/<dataset>/<locator>-<address>)")
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    before, after = args.before, args.after
    left = {p.relative_to(before): p for p in before.rglob("localization-result.json")}
    right = {p.relative_to(after): p for p in after.rglob("localization-result.json")}
    for folder, found in ((before, left), (after, right)):
        if not found:
            parser.error(f"{folder}: no localization-result.json below it (not a job's results folder)")
    if set(left) != set(right):
        print(f"different task sets: {len(set(left) - set(right))} only before, {len(set(right) - set(left))} only after")
        return 1
    different = [(rel, _first_difference(_comparable(left[rel]), _comparable(right[rel])))
                 for rel in sorted(left) if _comparable(left[rel]) != _comparable(right[rel])]
    for rel, where in different:
        print(f"DIFFERENT {rel.parent}: first at {where}")
    print(f"{len(left) - len(different)}/{len(left)} results identical (clock, physical cost and provenance aside)")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
