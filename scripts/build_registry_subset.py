"""Build a registry-served subset of a SWE-bench-style data set: its rows whose gold files at the base
commit are byte-identical in a published npm tarball or Debian `librust-*-dev` crate source, written
as a pins file (`instance_id`, `subject`, `gold_file_sha256`) that `dataset.loader.subjects` reads,
so the registry serves those subjects and a git mirror is needed only to build the pins.

    python scripts/build_registry_subset.py dataset=multi_swe_bench_js_ts \\
        --sources datasets/multi_swe_bench_registry/sources.yaml \\
        --out datasets/multi_swe_bench_registry/javascript-typescript.pins.jsonl

Rows and gold files are the data set's own (the loader with its gold rule, subjects from the mirrors).
Candidates per repository come from `--sources`: an npm package (the release the base commit
describes, `git describe --tags`, the one before it and the next three), or Debian crate packages by
repository folder (the archive's version). A candidate is kept only when the real subject store
materializes it with every gold file's sha256 equal to the base commit's: the check a job repeats.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import yaml
from hydra.utils import instantiate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dataset.manifest import DebianSubject, GitSubject, ManifestRow, NpmSubject  # noqa: E402
from dataset.subjects import SubjectError, SubjectStore  # noqa: E402
from experiments.job.config import compose_config  # noqa: E402
from locator.hashing import sha256_file  # noqa: E402

NPM = "https://registry.npmjs.org"


def _release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def npm_candidates(package: str, mirror: str, commit: str) -> list[str]:
    """The release the commit describes, the one before, and the next three (stable releases only)."""
    tag = subprocess.run(["git", "-C", mirror, "describe", "--tags", "--abbrev=0", commit], capture_output=True,
                         text=True).stdout.strip().lstrip("v")
    with urllib.request.urlopen(f"{NPM}/{package}", timeout=120) as response:
        releases = sorted((v for v in json.load(response)["versions"] if re.fullmatch(r"\d+\.\d+\.\d+", v)),
                          key=_release_key)
    if tag not in releases:
        return []
    at = releases.index(tag)
    return releases[max(0, at - 1):at + 4]


def npm_subject(package: str, version: str, work: Path) -> NpmSubject:
    basename = package.rsplit("/", 1)[-1]
    artifact = work / f"{basename}-{version}.tgz"
    if not artifact.is_file():
        urllib.request.urlretrieve(f"{NPM}/{package}/-/{basename}-{version}.tgz", artifact)
    return NpmSubject(name=package, version=version, artifact_sha256=sha256_file(artifact), path_map={"": "package"})


def debian_subject(package: str, folder: str) -> DebianSubject:
    """The archive's version of a crate package, its crate source mapped to the repository folder."""
    fields = dict(re.findall(r"^([A-Za-z0-9-]+): (.*)$",
                             subprocess.run(["apt-cache", "show", package], capture_output=True, text=True,
                                            check=True).stdout.split("\n\n")[0], re.MULTILINE))
    upstream = fields["Version"].split(":")[-1].rsplit("-", 1)[0]
    crate = package.removeprefix("librust-").removesuffix("-dev")
    return DebianSubject(package=package, version=fields["Version"], artifact_filename=Path(fields["Filename"]).name,
                         artifact_sha256=fields["SHA256"],
                         path_map={folder: f"usr/share/cargo/registry/{crate}-{upstream}"})


def candidates(row: ManifestRow, source: dict, work: Path) -> list[NpmSubject | DebianSubject]:
    files = row.gold.files
    if not isinstance(row.subject, GitSubject):
        raise SystemExit(f"{row.task.id}: the data set must give git subjects (its mirrors) to build pins from")
    if set(source) not in ({"npm"}, {"debian"}):
        raise SystemExit(f"--sources: {row.task.subject.repository}: give either `npm: NAME` or `debian: {{FOLDER: "
                         f"PACKAGE}}`, got {sorted(source)}")
    if "npm" in source:
        return [npm_subject(source["npm"], v, work)
                for v in npm_candidates(source["npm"], row.subject.repository, row.subject.revision)]
    crates = source["debian"]  # repository folder -> package
    folders = {max((f for f in crates if path.startswith(f)), key=len, default=None) for path in files}
    if len(folders) != 1 or None in folders:
        return []  # the gold spans several crates (or none a package ships): no one artifact holds it
    [folder] = folders
    return [debian_subject(crates[folder], folder)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("overrides", nargs="+", help="the data set, as a job names it (dataset=…, dataset.loader.…=…)")
    parser.add_argument("--sources", type=Path, required=True, help="YAML: repository -> {npm: NAME} or {debian: {FOLDER: PACKAGE}}")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cfg = compose_config(*args.overrides)
    sources = yaml.safe_load(args.sources.read_text(encoding="utf-8"))
    rows = instantiate(cfg.dataset.loader).rows
    pins = []
    with tempfile.TemporaryDirectory() as folder:
        work, store = Path(folder), SubjectStore(Path(folder) / "cache")
        for row in rows:
            source = sources.get(row.task.subject.repository)
            found = None
            for spec in candidates(row, source, work) if source else []:
                checked = spec.model_copy(update={"verify_sha256": row.subject.verify_sha256})
                try:
                    store.materialize(checked, row.task.id)
                except SubjectError:
                    continue  # a gold file differs from the base commit's (or is not shipped)
                found = spec
                break
            named = found.name if isinstance(found, NpmSubject) else found.package if found else None
            print(f"{row.task.id}: {f'{found.kind} {named} {found.version}' if found else '-'}")
            if found is not None:
                pins.append({"instance_id": row.task.id, "subject": found.model_dump(exclude={"verify_sha256"}),
                             "gold_file_sha256": dict(row.subject.verify_sha256)})
    args.out.write_text("".join(json.dumps(p, sort_keys=True) + "\n" for p in sorted(pins, key=lambda p: p["instance_id"])),
                        encoding="utf-8")
    print(f"{len(pins)} of {len(rows)} rows pinned to a registry artifact -> {args.out}")


if __name__ == "__main__":
    main()
