"""Components for tests, composed from the YAML (the only source of defaults) plus the test's
own overrides: `two_phase(reader={"window_lines": 20})` is the YAML's two_phase with 20-line windows."""

from __future__ import annotations

from typing import Any

from experiments.job.config import build


def _flat(prefix: str, values: dict[str, Any]) -> list[str]:
    out = []
    for key, value in values.items():
        if isinstance(value, dict):
            out += _flat(f"{prefix}.{key}", value)
        else:
            out.append(f"{prefix}.{key}={'null' if value is None else value}")
    return out


def locator(name: str, *groups: str, **params: Any):
    """`locator("two_phase", "locator/schedule=global", reader={"epoch_width": 1})`."""
    return build("locator", f"locator={name}", *groups, *_flat("locator", params))


def backend(name: str = "lexical", **params: Any):
    return build("system_one.backend", f"system_one={name}", *_flat("system_one.backend", params))
