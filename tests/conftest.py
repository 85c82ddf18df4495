"""Shared fixtures. Data in ../shared is read in place: LOCLAB_SHARED_DIR points elsewhere."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from experiments.job.config import compose_config
from experiments.job.paths import PROJECT_ROOT

SHARED_DIR = Path(os.environ.get("LOCLAB_SHARED_DIR", PROJECT_ROOT.parent / "shared"))
SWEBENCH_FILE = SHARED_DIR / "datasets" / "swebench-lite" / "swebench-lite-pypi.jsonl"
LOCAGENT_FILE = SHARED_DIR / "peers" / "locagent-claude-3-5" / "loc_outputs.jsonl"


@pytest.fixture(scope="session")
def subject_cache(tmp_path_factory) -> Path:
    """One subject cache per test session: real pip downloads, done once. Its `models/` is the
    configured model cache (where the in-process tests convert the local model): a converted model is
    keyed by its GGUF's sha256 and the runtime's versions and its files are checked against their
    digests before every load, so jobs run by the tests share it instead of converting it again in every
    session (about a minute of one core each)."""
    cache = tmp_path_factory.mktemp("subject-cache")
    models = Path(compose_config("system_one=local_llm").system_one.backend.cache_dir)
    models.mkdir(parents=True, exist_ok=True)
    (cache / "models").symlink_to(models, target_is_directory=True)
    return cache


@pytest.fixture
def swebench_file() -> Path:
    if not SWEBENCH_FILE.is_file():
        pytest.skip(f"SWE-bench Lite PyPI subset not found at {SWEBENCH_FILE} (set LOCLAB_SHARED_DIR)")
    return SWEBENCH_FILE


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


# End-to-end tests: real jobs in subprocesses, servers, browsers, downloads. The fast tier (README:
# `bash scripts/test.sh -m "not slow"`) is everything else: the packages' own tests, in minutes.
SLOW_FOLDERS = ("experiments", "reliability")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` (several minutes each) are handed out first, so two workers finish together
    instead of one starting a long test when the other is done; tests marked `after_build` (they wait
    for a build that CI runs beside the suite) last. End-to-end tests are marked `slow`."""
    tests_root = Path(__file__).parent
    for item in items:
        relative = item.path.relative_to(tests_root).parts
        if relative[0] in SLOW_FOLDERS or relative[0] == "test_install.py" or any(
                item.get_closest_marker(m) for m in ("long", "network")):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: (item.get_closest_marker("after_build") is not None,
                                 item.get_closest_marker("long") is None))


SCREENSHOT_LIST = "screenshots.txt"  # what tests/experiments/tracking/test_ui.py saw, under runs/ui-check/
_SESSION_START = time.time()


def pytest_terminal_summary(terminalreporter) -> None:
    """The MLflow UI check's screenshots, in the test output, when this session took them."""
    listing = PROJECT_ROOT / "runs" / "ui-check" / SCREENSHOT_LIST
    if listing.is_file() and listing.stat().st_mtime >= _SESSION_START:
        terminalreporter.section("MLflow UI check")
        terminalreporter.write(listing.read_text(encoding="utf-8"))
