#!/usr/bin/env bash
# The test suite (needs the package registry for the pip-downloaded subjects), on two pytest-xdist
# workers: most tests wait on subprocesses, so two share two cores well. LOCLAB_TEST_WORKERS=0 runs
# it in one process (for a debugger or `-x`). The 15 slowest tests are listed at the end, so CI's log
# says where its time went.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure_installed.sh
export MLFLOW_DISABLE_TELEMETRY=true HF_HUB_OFFLINE=1
exec .venv/bin/python -m pytest -q -n "${LOCLAB_TEST_WORKERS:-2}" --durations=15 "$@"
