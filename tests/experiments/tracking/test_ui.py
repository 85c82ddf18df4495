"""The MLflow UI answers "which setting wins?" at a glance: `scripts/ui_check.py` (two sweeps, a repeats
job and a pasted compare report, then the landing page, the chart view, each parent's table, Compare,
a job's page, the sweep's view and the parent's figure in Debian's Chromium) passes, and leaves its
screenshots where the test output says."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from experiments.job.paths import PROJECT_ROOT
from tests.conftest import SCREENSHOT_LIST

SHOTS = ("landing", "run_page", "chart_view_bests", "compare_9_jobs", "repeats_job", "job_traces", "job_page", "sweep_view",
         "chart_view", "parent_page", "parent_figure")


@pytest.mark.long
@pytest.mark.skipif(not (Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()),
                    reason="Debian's Chromium is not installed: apt-get install -y chromium chromium-driver")
@pytest.mark.skipif(importlib.util.find_spec("selenium") is None, reason="the ui extra is not installed: LOCLAB_EXTRAS=test,ui bash scripts/setup.sh")
def test_the_mlflow_ui_shows_which_setting_wins():
    out = PROJECT_ROOT / "runs" / "ui-check"
    proc = subprocess.run([sys.executable, str(PROJECT_ROOT / "scripts" / "ui_check.py"), "--out", str(out)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert all((out / f"{name}.png").stat().st_size > 10_000 for name in SHOTS)
    (out / SCREENSHOT_LIST).write_text("".join(f"{line}\n" for line in proc.stdout.splitlines()
                                               if line.startswith(("screenshot:", "landing:", "run page:", "store:", "chart view", "parent table",
                                                                   "compare of", "job page:", "sweep view:"))))
