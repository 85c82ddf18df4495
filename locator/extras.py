"""What a feature needs installed, said the one way loclab installs it: through `scripts/setup.sh`, every
package pinned by `requirements.lock` (a plain `pip install -e '.[llm]'` bypasses the lock)."""

from __future__ import annotations


class MissingExtraError(RuntimeError):
    """A feature whose optional packages are not installed: raised before any subject is fetched,
    naming the install command."""


def install_command(*extras: str) -> str:
    """The command that installs loclab with `extras` (and the tests' packages), pinned by the lock."""
    return f"LOCLAB_EXTRAS={','.join(dict.fromkeys(('test', *extras)))} bash scripts/setup.sh"
