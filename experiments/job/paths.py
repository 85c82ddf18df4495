"""Where things live (Hydra does not chdir, so every path loclab writes is absolute), and the
config's resolvers."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import platformdirs
from omegaconf import OmegaConf

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # experiments/job/paths.py
CONF_DIR = PROJECT_ROOT / "conf"


def default_cache_dir() -> str:
    return platformdirs.user_cache_dir("loclab")


def register_resolvers() -> None:
    if not OmegaConf.has_resolver("loclab_root"):
        OmegaConf.register_new_resolver("loclab_root", lambda: str(PROJECT_ROOT))
    if not OmegaConf.has_resolver("loclab_cache"):
        OmegaConf.register_new_resolver("loclab_cache", default_cache_dir)
    if not OmegaConf.has_resolver("loclab_product"):  # a setting that follows others, e.g. connections per job
        OmegaConf.register_new_resolver("loclab_product", lambda *factors: math.prod(int(f) for f in factors))


def git_revision() -> str:
    """loclab's own revision, with -dirty when the tree has uncommitted changes."""
    try:
        rev = subprocess.run(["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{rev}-dirty" if dirty else rev
