"""Manifest tools.

    python -m experiments.manifest compile datasets/demo/tasks.yaml datasets/demo/manifest.jsonl
    python -m experiments.manifest seal PATH       # recompute the header after a hand edit
    python -m experiments.manifest show PATH       # header, hash check, task count
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from pydantic import TypeAdapter, ValidationError

from dataset.manifest import (Gold, GoldSpan, ManifestError, ManifestRow, SubjectSpec, build_manifest, load_manifest,
                              write_manifest)
from dataset.traces import extract_trace
from locator.task import SubjectIdentity, Task


def _metadata(item: dict) -> dict:
    """A task's package and split (`dev` to choose settings on, `test` to report them on); a trace task
    (one with a `reproducer`) says so, and carries its reproducer for re-checking."""
    split = {"split": str(item["split"])} if "split" in item else {}
    if "reproducer" not in item:
        return {"package": item["subject"]} | split
    trace = extract_trace(item["text"], len(item["text"].encode("utf-8")))
    if trace is None:
        raise ManifestError(f"task {item['id']}: a task with a reproducer needs a failure trace as its text")
    return {"package": item["subject"], "input": "failure_trace", "trace_kind": trace.kind.value,
            "reproducer": item["reproducer"]} | split


def compile_tasks(source: Path):
    """Authoring YAML (subjects declared once, file hashes once) -> a sealed manifest."""
    doc = yaml.safe_load(source.read_text(encoding="utf-8"))
    subjects, hashes = doc["subjects"], doc["file_sha256"]
    rows = []
    for index, item in enumerate(doc["tasks"]):
        where = f"{source}: tasks[{index}] ({item.get('id', '?')})"
        try:
            subject = subjects[item["subject"]]
            spans = [GoldSpan(**span) for span in item["gold"]["spans"]]
            files = list(dict.fromkeys(span.path for span in spans))
            missing = [f for f in files if f not in hashes]
            if missing:
                raise ManifestError(f"{where}: no file_sha256 for {missing}")
            rows.append(
                ManifestRow(
                    task=Task(id=item["id"], text=item["text"].strip(), subject=SubjectIdentity(**subject["identity"]),
                              languages=tuple(subject.get("languages", ())), metadata=_metadata(item)),
                    subject=TypeAdapter(SubjectSpec).validate_python(
                        {**subject["spec"], "verify_sha256": {f: hashes[f] for f in files}}),
                    gold=Gold(files=files, spans=spans, entities=item["gold"].get("entities"),
                              rule=item["gold"].get("rule", doc["gold_rule"]).strip()),
                )
            )
        except (KeyError, TypeError, ValidationError) as exc:
            raise ManifestError(f"{where}: {exc}") from None
    return build_manifest(doc["name"], str(doc["version"]), doc["description"].strip(), doc["gold_rule"].strip(), rows, str(source))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.manifest")
    sub = parser.add_subparsers(dest="command", required=True)
    compile_cmd = sub.add_parser("compile")
    compile_cmd.add_argument("source", type=Path)
    compile_cmd.add_argument("target", type=Path)
    sub.add_parser("seal").add_argument("path", type=Path)
    sub.add_parser("show").add_argument("path", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "compile":
            manifest = compile_tasks(args.source)
            write_manifest(manifest, args.target)
        elif args.command == "seal":
            loose = load_manifest(args.path, verify_hash=False)
            manifest = build_manifest(loose.header.name, loose.header.version, loose.header.description,
                                      loose.header.gold_rule, loose.rows, str(args.path))
            write_manifest(manifest, args.path)
        else:
            manifest = load_manifest(args.path)
    except ManifestError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{manifest.header.name} v{manifest.header.version}: {len(manifest.rows)} tasks, blake3 {manifest.content_hash}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
