"""`python -m experiments.analysis.replay_render RUN --versions flagged,measured`: seed 002's deterministic replay.

Renders the stored results of a job run (never re-localized) through each render version, on the
same subjects and under the run's render settings (`--cap-tokens` to change the cap), and prints
the seed's table: whether the source sections are byte-identical (only the epilogue may change),
how many packs claim complete source and how many of those had a section trimmed (audited from the
pack's text), trimmed notes, pointer lists and entries (and whether any list got shorter than the
first version's), packs offering Read, and packs over the cap.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hydra.errors import InstantiationException
from hydra.utils import instantiate

from dataset.subjects import SubjectStore, source_reader
from experiments.analysis.runs import AnalysisError, find_runs, open_store
from experiments.job.paths import register_resolvers
from experiments.job.pipeline import RESULT_FILE
from experiments.job.record import RecordError, open_record
from metrics.context_pack import pack_metrics
from render.notes import NoteKind
from render.pack import ContextPack, render_pack
from render.settings import RenderVersion

register_resolvers()


@dataclass
class Tally:
    packs: int = 0
    sections_identical: int = 0
    claims_complete: int = 0
    claims_while_trimmed: int = 0
    trimmed_notes: int = 0
    named_notes: int = 0
    with_pointer_list: int = 0
    pointer_entries: int = 0
    shorter_lists: int = 0
    offers_read: int = 0
    over_cap: int = 0

    def add(self, pack: ContextPack, scores: dict[str, float | None], baseline: ContextPack) -> None:
        self.packs += 1
        self.sections_identical += pack.text[:len(pack.text) - len(pack.epilogue)] == \
            baseline.text[:len(baseline.text) - len(baseline.epilogue)]
        self.claims_complete += bool(scores["claims_complete"])
        self.claims_while_trimmed += bool(scores["false_complete_claims"])
        self.trimmed_notes += bool(scores["trimmed_notes"])
        self.named_notes += pack.note == NoteKind.TRIMMED_NAMED
        self.with_pointer_list += pack.pointer_entries > 0
        self.pointer_entries += pack.pointer_entries
        self.shorter_lists += pack.pointer_entries < baseline.pointer_entries
        self.offers_read += bool(scores["offers_read"])
        self.over_cap += bool(scores["over_cap"])


ROWS = (("source sections byte-identical", lambda t, first: "—" if first else f"{t.sections_identical} / {t.packs}"),
        ('packs claiming "Complete source"', lambda t, first: str(t.claims_complete)),
        ("… of which a section was actually trimmed", lambda t, first: str(t.claims_while_trimmed)),
        ("packs with the trimmed note", lambda t, first: f"{t.trimmed_notes} ({t.named_notes} naming elided definitions)"),
        ("packs with a pointer list", lambda t, first: str(t.with_pointer_list)),
        ("pointer entries, total", lambda t, first: str(t.pointer_entries) if first
         else f"{t.pointer_entries} ({t.shorter_lists} lists shorter than the first version's)"),
        ("packs offering Read", lambda t, first: str(t.offers_read)),
        ("packs over the inline cap", lambda t, first: str(t.over_cap)))


def table(versions: list[RenderVersion], tallies: dict[RenderVersion, Tally]) -> str:
    lines = ["| | " + " | ".join(f"`{v.value}`" for v in versions) + " |", "|---|" + "---|" * len(versions)]
    for label, cell in ROWS:
        lines.append(f"| {label} | " + " | ".join(cell(tallies[v], i == 0) for i, v in enumerate(versions)) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.analysis.replay_render", description=__doc__.split("\n")[0])
    parser.add_argument("run", help="job run id or run name")
    parser.add_argument("--versions", default="flagged,measured", help="render versions, the first is the baseline")
    parser.add_argument("--cap-tokens", type=int, help="inline cap (default: the run's render.cap_tokens)")
    parser.add_argument("--dataset", help="dataset whose experiment holds the run (for a run name)")
    parser.add_argument("--experiment", help="MLflow experiment of the run (for a run name)")
    parser.add_argument("--db", help="MLflow SQLite file (default: as the runner)")
    args = parser.parse_args(argv)
    try:
        versions = [RenderVersion(v.strip()) for v in args.versions.split(",") if v.strip()]
    except ValueError:
        print(f"error: --versions takes {', '.join(v.value for v in RenderVersion)}; got {args.versions!r}", file=sys.stderr)
        return 2
    if args.cap_tokens is not None and args.cap_tokens < 1:
        print(f"error: --cap-tokens is a positive number of tokens, got {args.cap_tokens}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="loclab-replay-render-") as work:
        return _render_again(args, versions, Path(work))


def _render_again(args: argparse.Namespace, versions: list[RenderVersion], work: Path) -> int:
    try:
        client = open_store(args)
        record = open_record(client, find_runs(client, args.experiment, args.run)[0], work)
        cfg = record.config([f"render.cap_tokens={args.cap_tokens}"] if args.cap_tokens is not None else [])
        manifest = record.manifest(cfg)
        stored = record.results_dir()
        base = instantiate(cfg.render)
    except (AnalysisError, RecordError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except InstantiationException as exc:  # the render settings refused the cap: say which and why
        print(f"error: render settings with --cap-tokens {args.cap_tokens}: {exc.__cause__ or exc}", file=sys.stderr)
        return 2
    settings = {v: base.model_copy(update={"version": v}) for v in versions}
    store = SubjectStore(cfg.paths.cache_dir, Path(manifest.source).parent)
    tallies = {v: Tally() for v in versions}
    try:
        for row in manifest.rows:
            for path in sorted((stored / row.task.id).glob(f"r*/{RESULT_FILE}")):
                result = record.stored_result(path)
                source_of = source_reader(store.materialize(row.subject, what=row.task.id))
                packs = {v: render_pack(result, source_of, settings[v]) for v in versions}
                for v in versions:
                    tallies[v].add(packs[v], pack_metrics(packs[v], result, row.gold, source_of), packs[versions[0]])
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"run {record.run_id} ({record.run.info.run_name}): {tallies[versions[0]].packs} stored results rendered "
          f"under a {base.cap_tokens:,}-token cap\n")
    print(table(versions, tallies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
