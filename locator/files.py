"""Files that several processes or threads may write at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Each writer stages its own copy and renames it over the target, so a reader sees one whole
    version, never half of one, and the last writer wins."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        staging.write_text(text, encoding="utf-8")
        os.replace(staging, path)
    except OSError as exc:  # a full disk: no half-written staging file left, and the error names the target
        staging.unlink(missing_ok=True)
        raise OSError(exc.errno, f"cannot write {path}: {exc.strerror}") from exc
