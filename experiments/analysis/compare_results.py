"""`python -m experiments.analysis.compare_results LEFT.json RIGHT.json`: the canonical comparator.

Symmetric: neither side is ground truth. Refuses (exit 2) when a subject identity is missing or
the two results are about different repositories, revisions or tasks.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import ValidationError

from locator.result import LocalizationResult
from metrics.comparator import ComparatorError, compare_results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.analysis.compare_results", description=__doc__.split("\n")[0])
    parser.add_argument("left", type=Path)
    parser.add_argument("right", type=Path)
    parser.add_argument("--out", type=Path, help="write the comparison as JSON here")
    args = parser.parse_args(argv)
    try:
        comparison = compare_results(LocalizationResult.read(args.left), LocalizationResult.read(args.right))
    except (ComparatorError, ValidationError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    c = comparison
    print(f"{c.task} @ {c.repository}@{c.revision}: {c.left_producer} (left) vs {c.right_producer} (right)")
    print(f"  files: shared {len(c.shared_files)}, left only {len(c.left_only_files)}, right only "
          f"{len(c.right_only_files)}, Jaccard {c.file_jaccard:.3f}")
    fmt = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731
    print(f"  evidence lines: left covered by right {fmt(c.left_lines_covered_by_right)}, right covered by left "
          f"{fmt(c.right_lines_covered_by_left)}, Jaccard {fmt(c.evidence_line_jaccard)}")
    print(f"  regions missed: by right {len(c.left_regions_missed_by_right)}, by left {len(c.right_regions_missed_by_left)}")
    print(f"  cost: left {c.left_cost.model_dump()}\n        right {c.right_cost.model_dump()}")
    if args.out:
        args.out.write_text(c.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
