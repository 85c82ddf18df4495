"""What reading every language costs, and what hybrid costs beside bm25 (issue 48's targets).

Part 1, parsing per language: over each subject folder given (`NAME=PATH`; by default the demo's
click 8.1.7 from the subject cache and any folder named on the command line, e.g. clap 4.0.32 from
Debian's librust-clap-dev), files and lines of each registered language, and files/s and lines/s of
(a) the tags-query parse (`locator.languages.tags.parse`, no cache) and (b) the retrieval index's
tokens (bm25's per-file tokenizing into term ids, no cache).

Part 2, hybrid beside bm25 on one task set (default: SWE-bench Lite PyPI, test split), in one process:
each locator's pass over every task as a job runs them (memos warm from task to task), every
process-wide memo (outlines, definition indexes, document tokens) cleared before each pass, two
passes each in swapped order: the wall of `localize` alone. Outlines are kept on disk as a job keeps
them, so a locator's first pass parses (cold) and its second reads them (warm: a sweep's later jobs
over the same subjects); `--outlines memory` parses in every pass. Target: hybrid <= 1.5x bm25.

    python benchmarks/languages.py                                   # both parts
    python benchmarks/languages.py --subject clap=/tmp/clap/usr/share/cargo/registry/clap-4.0.32 --no-locators
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from hydra.utils import instantiate

from dataset.subjects import SubjectStore
from experiments.job.config import compose_config
from experiments.job.gc_tuning import tune_gc
from locator import definitions, outline
from locator.outline import keep_on_disk
from locator.hashing import blake3_hex
from locator.languages import language_of
from locator.languages.tags import parse
from locator.repository import RepositoryView
from locator.retrieval import documents, terms
from locator.runtime import localize
from locator.text import Tokenizer, _identifier_tokens
from locator.trace import Trace


def _clear_memos() -> None:
    outline._definitions_cached.cache_clear()
    definitions._CACHE.clear()
    terms._FILES.clear()
    [f.cache_clear() for f in terms.WORD_IDS.values()]
    documents._CHUNKS.clear()
    _identifier_tokens.cache_clear()


def parsing(subjects: dict[str, Path]) -> None:
    print("| subject | language | files | lines | parse files/s | parse lines/s | index files/s | index lines/s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, root in subjects.items():
        view = RepositoryView(root)
        by_language: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for info in view.files():
            language = language_of(info.path)
            if language is not None:
                by_language[language.name].append((info.path, (root / info.path).read_text(encoding="utf-8")))
        for language_name, files in sorted(by_language.items()):
            lines = sum(text.count("\n") for _, text in files)
            started = time.perf_counter()
            for path, text in files:
                parse(language_of(path), path, text.encode("utf-8"))
            parsed = time.perf_counter() - started
            _clear_memos()
            tune_gc()  # as a job's localization worker starts: the rest frozen, collections rare
            started = time.perf_counter()
            terms.files_tokens({blake3_hex(text): tuple(text.splitlines(keepends=True)) for _, text in files},
                               Tokenizer.IDENTIFIER)
            indexed = time.perf_counter() - started
            print(f"| {name} | {language_name} | {len(files)} | {lines:,} | {len(files) / parsed:,.0f} | "
                  f"{lines / parsed:,.0f} | {len(files) / indexed:,.0f} | {lines / indexed:,.0f} |")


def side_by_side(dataset: str, split: str | None, locators: list[str], outlines: Path | None) -> None:
    """Each locator over every task as a job runs them (its process-wide memos warm from task to task),
    every memo cleared before each locator's pass; the passes in turn, twice, the order swapped the
    second time; the wall of `localize` alone, summed over the tasks. With `outlines` (a fresh folder),
    outlines are kept on disk as a job keeps them: a locator's first pass parses (cold), its second
    reads what the first kept (warm: a sweep's later jobs over the same subjects)."""
    keep_on_disk(outlines)
    cfg = compose_config(f"dataset={dataset}", *([f"split={split}"] if split else []))
    rows = [r for r in instantiate(cfg.dataset.loader).rows if split is None or r.task.metadata.get("split") == split]
    store = SubjectStore(cfg.paths.cache_dir)
    roots = {row.task.id: store.materialize(row.subject, row.task.id) for row in rows}
    walls: dict[str, list[float]] = {name: [] for name in locators}
    for order in (locators, locators[::-1]):
        for name in order:
            locator = instantiate(compose_config(f"locator={name}").locator)
            _clear_memos()
            tune_gc()  # as a job's localization worker starts: the rest frozen, collections rare
            started = time.perf_counter()
            for row in rows:
                localize(locator, row.task, RepositoryView(roots[row.task.id]), None, Trace())
            walls[name].append(time.perf_counter() - started)
    print(f"{dataset}{' ' + split if split else ''}: {len(rows)} tasks, {len({r.task.subject.repository for r in rows})} "
          f"repositories; memos warm within a pass, cleared between passes; outlines "
          f"{'on disk (pass 1 cold, pass 2 warm)' if outlines else 'in memory (every pass parses)'}")
    for pass_ in (0, 1):
        base = walls[locators[0]][pass_]
        print(f"  pass {pass_ + 1}: " + ", ".join(f"{name} {values[pass_]:.1f} s ({values[pass_] / base:.2f}x "
                                                 f"{locators[0]})" for name, values in walls.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--subject", action="append", default=[], help="NAME=PATH of a source tree to parse")
    parser.add_argument("--dataset", default="swebench_lite_pypi")
    parser.add_argument("--split", default="test")
    parser.add_argument("--locators", default="bm25,hybrid")
    parser.add_argument("--no-locators", action="store_true", help="part 1 only")
    parser.add_argument("--outlines", choices=("disk", "memory"), default="disk",
                        help="keep outlines on disk as a job does (default), or parse in every pass")
    args = parser.parse_args()
    subjects = dict(s.split("=", 1) for s in args.subject)
    if not subjects:
        cfg = compose_config("dataset=demo")
        row = next(r for r in instantiate(cfg.dataset.loader).rows if r.task.subject.repository == "pypi:click")
        subjects["click-8.1.7"] = SubjectStore(cfg.paths.cache_dir).materialize(row.subject, row.task.id)
    parsing({name: Path(path) for name, path in subjects.items()})
    if not args.no_locators:
        with tempfile.TemporaryDirectory() as folder:
            side_by_side(args.dataset, args.split or None, args.locators.split(","),
                         Path(folder) if args.outlines == "disk" else None)


if __name__ == "__main__":
    main()
