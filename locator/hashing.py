"""Canonical JSON and content hashes: the identities that caches and manifests are keyed on."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import blake3


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def blake3_hex(data: str | bytes) -> str:
    return blake3.blake3(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def blake3_file(path: str | Path) -> str:
    """A file's BLAKE3, read in 16 MiB blocks on every core (model weights run to gigabytes)."""
    digest = blake3.blake3(max_threads=blake3.blake3.AUTO)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            digest.update(block)
    return digest.hexdigest()
