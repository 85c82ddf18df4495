"""Materialize a task's subject into a directory laid out in repository paths.

Content-addressed: the cache key is the subject spec itself, so an identical spec is fetched once.
Every expected file hash is checked after materializing (and again when reusing the cache);
a mismatch fails the task closed — it is never localized or scored against the wrong code.
A downloaded artifact must carry the manifest's file name and sha256. When a subject is built,
a digest of the whole tree (every file's size and BLAKE3 hash) is recorded beside it; a cached
subject is checked against it once per process before it is used, so a file changed in the cache
(gold or not) fails the task closed.

Subjects share storage: each regular file of a built tree becomes a hard link to a read-only blob
named by its BLAKE3 (`subjects/blobs/`), so revisions of one repository, or releases of one package,
keep each distinct file once on disk, and every per-content cache (tokens, outlines, definition
chunks) finds it under the same key. Verification stays per tree: a write to a shared blob changes
every tree that holds it, and each one's own digest check catches it.

Re-hashing every tree in every process is most of a job's subject cost, so a successful check also
records every entry's lstat (size, mtime, ctime, inode) as a stamp, as git's index does. A later
process re-hashes only when a stat differs: any write to a file (or a `touch` putting its mtime
back) moves its ctime, which user space cannot set, so what the stamp vouches for is "not written
since its content matched the digest".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
import zipfile
from pathlib import Path

from packaging.utils import parse_wheel_filename

from dataset.manifest import DebianSubject, GitSubject, LocalSubject, NpmSubject, PypiSubject, SubjectSpec
import blake3

from locator.files import write_atomically
from locator.hashing import blake3_hex, canonical_json, sha256_file
from locator.repository import PathOutsideSubjectError, normalize_relpath

_MARKER = ".loclab-subject.json"
_BLOBS = "blobs"  # under <cache>/subjects/: every distinct file of every cached tree, once
_TREE_DIGEST = "tree-digest.json"
_STAT_STAMP = "tree-stat.json"  # every entry's lstat when the tree last matched its digest
# File times tick coarsely (a few ms): an entry changed within this long before the stat walk could
# be changed again with the same ctime, so such a tree gets no stamp (git's "racily clean" entries).
_RACY_NS = 1_000_000_000


class SubjectError(RuntimeError):
    """The subject could not be obtained."""


class SubjectIntegrityError(SubjectError):
    """The subject is not the code the task is about (hash mismatch or missing file)."""


def verify_files(root: Path, expected: dict[str, str], what: str) -> None:
    for rel, sha in sorted(expected.items()):
        path = root / normalize_relpath(rel)
        if not path.is_file():
            raise SubjectIntegrityError(f"{what}: expected file {rel!r} is missing from the subject")
        actual = sha256_file(path)
        if actual != sha:
            raise SubjectIntegrityError(
                f"{what}: sha256 mismatch for {rel!r}: expected {sha}, got {actual}; refusing to use this subject"
            )


def source_reader(root: Path):
    """Whole files of a materialized subject, for scoring-time analysis and gold derivation (which
    definition encloses a line). Never handed to a locator: locators read through their metered
    context. Returns None for a path that is not a readable text file of the subject."""

    def source_of(path: str) -> str | None:
        try:
            return (root / normalize_relpath(path)).read_text(encoding="utf-8")
        except (OSError, ValueError):
            return None

    return source_of


def _spec_key(spec: PypiSubject | GitSubject | DebianSubject | NpmSubject) -> str:
    """What is fetched, not what is checked: tasks sharing an artifact share one copy."""
    return blake3_hex(canonical_json(spec.model_dump(mode="json", exclude={"verify_sha256"})))[:20]


def _pip_flags(spec: PypiSubject) -> list[str]:
    if spec.artifact == "sdist":
        return ["--no-binary", ":all:"]
    _, _, _, tags = parse_wheel_filename(spec.artifact_filename)
    tag = sorted(tags, key=str)[0]
    flags = ["--only-binary", ":all:"]
    if tag.platform != "any":
        flags += ["--platform", tag.platform]
    if tag.interpreter.startswith("cp") and tag.interpreter[2:].isdigit():
        digits = tag.interpreter[2:]
        flags += ["--python-version", f"{digits[0]}.{digits[1:]}", "--implementation", "cp", "--abi", tag.abi]
    return flags


def _pip_download(spec: PypiSubject, dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check",
           "-d", str(dest), *_pip_flags(spec), spec.requirement]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SubjectError(f"pip download {spec.requirement} failed: {proc.stderr.strip()[-2000:]}")
    artifacts = sorted(dest.iterdir())
    if len(artifacts) != 1:
        raise SubjectError(f"pip download {spec.requirement}: expected one artifact, got {[a.name for a in artifacts]}")
    artifact = artifacts[0]
    if artifact.name != spec.artifact_filename:
        raise SubjectIntegrityError(f"pip download {spec.requirement} gave {artifact.name}, the manifest names "
                                    f"{spec.artifact_filename}; refusing to use it")
    if spec.artifact_sha256:
        actual = sha256_file(artifact)
        if actual != spec.artifact_sha256:
            raise SubjectIntegrityError(
                f"{artifact.name}: artifact sha256 mismatch: expected {spec.artifact_sha256}, got {actual}"
            )
    return artifact


def _apt_download(spec: DebianSubject, dest: Path) -> Path:
    """The package's .deb from the machine's Debian archive (no install, no root needed), checked."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(["apt-get", "download", f"{spec.package}={spec.version}"], cwd=dest,
                              capture_output=True, text=True)
    except FileNotFoundError:
        raise SubjectError(f"{spec.package} {spec.version}: a Debian subject needs apt-get (a Debian or Ubuntu "
                           "machine)") from None
    if proc.returncode != 0:
        raise SubjectError(f"apt-get download {spec.package}={spec.version} failed (run `apt-get update` if the "
                           f"package is unknown): {proc.stderr.strip()[-2000:]}")
    artifact = dest / spec.artifact_filename
    if not artifact.is_file():
        raise SubjectIntegrityError(f"apt-get download {spec.package}={spec.version} gave "
                                    f"{[a.name for a in dest.iterdir()]}, the manifest names {spec.artifact_filename}")
    return _checked(artifact, spec.artifact_sha256)


def _npm_download(spec: NpmSubject, dest: Path) -> Path:
    """The package's published tarball from the npm registry, checked."""
    dest.mkdir(parents=True, exist_ok=True)
    basename = spec.name.rsplit("/", 1)[-1]
    url = f"{spec.registry.rstrip('/')}/{spec.name}/-/{basename}-{spec.version}.tgz"
    artifact = dest / f"{basename}-{spec.version}.tgz"
    try:
        with urllib.request.urlopen(url, timeout=120) as response, artifact.open("wb") as out:
            shutil.copyfileobj(response, out)
    except OSError as exc:
        raise SubjectError(f"npm download {url} failed: {exc}") from None
    return _checked(artifact, spec.artifact_sha256)


def _checked(artifact: Path, expected_sha256: str) -> Path:
    """A downloaded artifact whose sha256 is the manifest's (a registry artifact is never trusted by name)."""
    actual = sha256_file(artifact)
    if actual != expected_sha256:
        raise SubjectIntegrityError(f"{artifact.name}: artifact sha256 mismatch: expected {expected_sha256}, got {actual}")
    return artifact


def _unpack_deb(artifact: Path, dest: Path) -> None:
    """A .deb is an `ar` archive; its files are the `data.tar.*` member (xz or gzip)."""
    with artifact.open("rb") as deb:
        if deb.read(8) != b"!<arch>\n":
            raise SubjectIntegrityError(f"{artifact.name}: not a Debian package (no ar header)")
        while header := deb.read(60):
            name, size = header[:16].decode().strip().rstrip("/"), int(header[48:58].decode().strip())
            if name.startswith("data.tar"):
                with tempfile.TemporaryFile() as data:
                    data.write(deb.read(size))
                    data.seek(0)
                    try:
                        with tarfile.open(fileobj=data) as archive:
                            archive.extractall(dest, filter="data")
                    except tarfile.ReadError as exc:
                        raise SubjectError(f"{artifact.name}: {name} cannot be read here ({exc})") from None
                return
            deb.seek(size + size % 2, os.SEEK_CUR)
    raise SubjectIntegrityError(f"{artifact.name}: no data.tar member")


def tree_digest(root: Path) -> dict[str, list]:
    """Every file of a tree: [size, BLAKE3] (a symlink: ["symlink", its target]), by path. Paths
    that are not UTF-8 are kept, escaped, so they are covered too."""
    digest: dict[str, list] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]):
            path = Path(dirpath) / name
            key = os.fsencode(path.relative_to(root)).decode("utf-8", "backslashreplace")
            if path.is_symlink():
                digest[key] = ["symlink", os.fsencode(os.readlink(path)).decode("utf-8", "backslashreplace")]
            else:
                data = path.read_bytes()
                digest[key] = [len(data), blake3.blake3(data).hexdigest()]
    return digest


def tree_stat(root: Path) -> dict[str, list[int]]:
    """Every entry `tree_digest` covers, by the same path: its lstat [size, mtime_ns, ctime_ns,
    inode]. Nothing is read, so it costs a directory walk."""
    stats: dict[str, list[int]] = {}
    top = os.fspath(root)
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        where = dirpath[len(top) + 1:]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            st = os.lstat(os.path.join(dirpath, name))
            key = os.fsencode(os.path.join(where, name) if where else name).decode("utf-8", "backslashreplace")
            stats[key] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    return stats


def share_blobs(tree: Path, blobs: Path) -> None:
    """Every regular, non-empty file of a just-built tree replaced by a hard link to the blob of its
    content (the first copy of a content becomes its blob, read-only). A blob whose bytes no longer
    match is replaced, never linked. Where the file system refuses a link (another device, no hard
    links, a blob's link count at its limit), the file keeps its own copy."""
    for dirpath, _, filenames in os.walk(tree):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file() or path.stat().st_size == 0:
                continue
            data = path.read_bytes()
            key = blake3.blake3(data).hexdigest()
            blob = blobs / key[:2] / key
            blob.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, blob)  # the first copy of this content: it becomes the blob
                os.chmod(blob, 0o444)
                continue
            except FileExistsError:
                pass
            except OSError:
                continue
            try:
                if blob.read_bytes() != data:  # damaged since it was linked: the tree's content replaces it
                    replacement = blob.with_name(f".{key}.{os.getpid()}.{threading.get_ident()}")
                    os.link(path, replacement)
                    os.chmod(replacement, 0o444)
                    os.replace(replacement, blob)
                    continue
                staged = path.with_name(f".{name}.{os.getpid()}.link")
                os.link(blob, staged)
                os.replace(staged, path)
            except OSError:
                continue


def _digest_differences(recorded: dict[str, list], current: dict[str, list]) -> list[str]:
    changed = [f"changed {p}" for p in sorted(set(recorded) & set(current)) if recorded[p] != current[p]]
    return (changed + [f"added {p}" for p in sorted(set(current) - set(recorded))]
            + [f"removed {p}" for p in sorted(set(recorded) - set(current))])


def _safe_target(root: Path, member: str) -> Path:
    try:
        return root / normalize_relpath(member)
    except PathOutsideSubjectError as exc:
        raise SubjectIntegrityError(f"archive member escapes the subject root: {exc}") from None


def _unpack(artifact: Path, dest: Path) -> None:
    if artifact.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(artifact) as archive:
            for member in archive.infolist():
                if member.is_dir():
                    continue
                target = _safe_target(dest, member.filename)
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out)
    elif artifact.name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(artifact) as archive:
            archive.extractall(dest, filter="data")
    else:
        raise SubjectError(f"unknown artifact type: {artifact.name}")


def _apply_path_map(unpacked: Path, tree: Path, path_map: dict[str, str]) -> None:
    """Move artifact paths to repository paths; longest artifact prefix first."""
    tree.mkdir(parents=True, exist_ok=True)
    for repo_prefix, artifact_prefix in sorted(path_map.items(), key=lambda kv: -len(kv[1])):
        source = unpacked / artifact_prefix if artifact_prefix else unpacked
        if not source.exists():
            raise SubjectError(f"path_map: {artifact_prefix!r} is not in the artifact")
        for file in sorted(p for p in source.rglob("*") if p.is_file() or p.is_symlink()):
            target = tree / repo_prefix / file.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            file.rename(target)


def _build_from_artifact(artifact: Path, unpack, path_map: dict[str, str], staging: Path, tree: Path) -> None:
    """A downloaded, checked artifact's files laid out in repository paths; the download goes."""
    unpacked = staging / "unpacked"
    unpack(artifact, unpacked)
    _apply_path_map(unpacked, tree, path_map)
    shutil.rmtree(unpacked)
    artifact.unlink()


def _publish(staging: Path, final: Path) -> None:
    """Atomic: a half-built subject is never visible; a concurrent winner is kept."""
    try:
        staging.rename(final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(staging, ignore_errors=True)


_BUILD_LOCKS: dict[Path, threading.Lock] = {}
_BUILD_LOCKS_GUARD = threading.Lock()


def _building(final: Path) -> threading.Lock:
    """One lock per subject in this process (processes are already safe: staging + atomic publish)."""
    with _BUILD_LOCKS_GUARD:
        return _BUILD_LOCKS.setdefault(final, threading.Lock())


class SubjectStore:
    _verified: set[Path] = set()  # cached trees checked against their digest in this process

    def __init__(self, cache_dir: str | Path, manifest_dir: str | Path | None = None):
        self.cache_dir = Path(cache_dir)
        self.manifest_dir = Path(manifest_dir) if manifest_dir else Path.cwd()

    @staticmethod
    def frozen(spec: SubjectSpec) -> bool:
        """Whether the subject's tree cannot change while this process runs: a PyPI or git subject
        lives in the content-addressed cache and is checked against its recorded tree digest
        (once per process); a local subject is the user's own directory, which may."""
        return not isinstance(spec, LocalSubject)

    def derived_dir(self, spec: SubjectSpec) -> Path | None:
        """Where what is computed from a frozen subject's tree is kept between processes (its
        listing): beside the tree in the cache, so it goes when the subject does. None for a local one."""
        return None if isinstance(spec, LocalSubject) else self._subject_dir(spec)

    def _subject_dir(self, spec: PypiSubject | GitSubject | DebianSubject | NpmSubject) -> Path:
        """A cached subject's directory: its tree, the digest and stamp it is checked against, its listing."""
        return self.cache_dir / "subjects" / spec.kind / _spec_key(spec)

    def materialize(self, spec: SubjectSpec, what: str) -> Path:
        if isinstance(spec, LocalSubject):
            root = Path(spec.path)
            root = root if root.is_absolute() else (self.manifest_dir / root)
            if not root.is_dir():
                raise SubjectError(f"{what}: local subject is not a directory: {root}")
        elif isinstance(spec, PypiSubject):
            root = self._cached(spec, what, self._build_pypi)
        elif isinstance(spec, DebianSubject):
            root = self._cached(spec, what, self._build_debian)
        elif isinstance(spec, NpmSubject):
            root = self._cached(spec, what, self._build_npm)
        else:
            root = self._cached(spec, what, self._build_git)
        verify_files(root, spec.verify_sha256, what)
        return root

    def _cached(self, spec: PypiSubject | GitSubject | DebianSubject | NpmSubject, what: str, build) -> Path:
        final = self._subject_dir(spec)
        with _building(final):  # concurrent tasks of one job fetch a shared subject once
            return self._cached_locked(spec, what, build, final)

    def _cached_locked(self, spec: PypiSubject | GitSubject | DebianSubject | NpmSubject, what: str, build,
                       final: Path) -> Path:
        tree = final / "tree"
        if (final / _MARKER).is_file():
            if not (final / _TREE_DIGEST).is_file():  # cached by an older loclab: nothing to check it against
                shutil.rmtree(final, ignore_errors=True)
            else:
                self._check_tree(final, what)
                return tree
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=final.parent))
        try:
            build(spec, staging, staging / "tree")
            verify_files(staging / "tree", spec.verify_sha256, what)
            share_blobs(staging / "tree", self.cache_dir / "subjects" / _BLOBS)
            (staging / _TREE_DIGEST).write_text(json.dumps(tree_digest(staging / "tree"), sort_keys=True), encoding="utf-8")
            (staging / _MARKER).write_text(canonical_json(spec.model_dump(mode="json")) + "\n", encoding="utf-8")
            _publish(staging, final)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return tree

    def _check_tree(self, final: Path, what: str) -> None:
        tree = final / "tree"
        if tree in self._verified:
            return
        recorded_text = (final / _TREE_DIGEST).read_text(encoding="utf-8")
        walked_at = time.time_ns()
        stamp = {"digest_blake3": blake3_hex(recorded_text.encode("utf-8")), "stats": tree_stat(tree)}
        if _read_json(final / _STAT_STAMP) != stamp:  # written to since it last matched: hash its content
            # stat before hashing: a write after the stat moves a ctime, so the next process re-hashes
            differences = _digest_differences(json.loads(recorded_text), tree_digest(tree))
            if differences:
                shown = ", ".join(differences[:5]) + (f" (+{len(differences) - 5} more)" if len(differences) > 5 else "")
                raise SubjectIntegrityError(f"{what}: cached subject {tree} differs from the tree it was built as: "
                                            f"{shown}; delete {final} to rebuild it")
            if all(ctime < walked_at - _RACY_NS for _, _, ctime, _ in stamp["stats"].values()):
                write_atomically(final / _STAT_STAMP, json.dumps(stamp, sort_keys=True))
        self._verified.add(tree)

    def _build_debian(self, spec: DebianSubject, staging: Path, tree: Path) -> None:
        _build_from_artifact(_apt_download(spec, staging / "download"), _unpack_deb, spec.path_map, staging, tree)

    def _build_npm(self, spec: NpmSubject, staging: Path, tree: Path) -> None:
        _build_from_artifact(_npm_download(spec, staging / "download"), _unpack, spec.path_map, staging, tree)

    def _build_pypi(self, spec: PypiSubject, staging: Path, tree: Path) -> None:
        _build_from_artifact(_pip_download(spec, staging / "download"), _unpack, spec.path_map, staging, tree)

    def _build_git(self, spec: GitSubject, staging: Path, tree: Path) -> None:
        source = Path(spec.repository)
        if not source.is_absolute() and (self.manifest_dir / source).exists():
            source = self.manifest_dir / source
        repo = str(source) if source.exists() else spec.repository
        if not source.exists():
            repo = str(staging / "clone.git")
            _git("clone", ["clone", "--bare", "--quiet", "--", spec.repository, repo], spec)
        tree.mkdir(parents=True)
        archive = staging / "tree.tar"
        _git("archive", ["-C", repo, "archive", "--format=tar", "-o", str(archive), "--end-of-options", spec.revision],
             spec)
        with tarfile.open(archive) as tar:
            tar.extractall(tree, filter="data")
        archive.unlink()


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _git(verb: str, args: list[str], spec: GitSubject) -> None:
    proc = subprocess.run(["git", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SubjectError(f"git subject {spec.repository}@{spec.revision}: git {verb} failed: {proc.stderr.strip()}")
