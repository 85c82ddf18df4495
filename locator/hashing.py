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
