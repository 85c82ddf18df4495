"""The identity of the loclab code that produces results.

A result's content address includes a hash of the source of the packages that decide a
localization (`locator/`: the algorithms, the reading and discovery machinery, the System One
layer and its backends), so a changed algorithm never reuses a result saved by older code, and
identical code always does, whatever else changed in the repository (README, tests, analysis).
"""

from __future__ import annotations

import subprocess
from functools import lru_cache

import blake3

from experiments.paths import PROJECT_ROOT, git_revision
from locator.result import CodeIdentity

CODE_PACKAGES = ("locator",)


def source_hash(root=PROJECT_ROOT, packages: tuple[str, ...] = CODE_PACKAGES) -> str:
    digest = blake3.blake3()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _packages_dirty(packages: tuple[str, ...]) -> bool:
    """Whether the packages differ from the checked-out revision (untracked files included)."""
    try:
        status = subprocess.run(["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--", *packages],
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return True  # no git: nothing proves the source matches a revision
    return bool(status.strip())


@lru_cache(maxsize=1)
def code_identity() -> CodeIdentity:
    return CodeIdentity(source_blake3=source_hash(), packages=list(CODE_PACKAGES),
                        git_revision=git_revision().removesuffix("-dirty"), dirty=_packages_dirty(CODE_PACKAGES))
