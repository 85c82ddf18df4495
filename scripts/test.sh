#!/usr/bin/env bash
# The test suite (needs the package registry for the pip-downloaded subjects), on two pytest-xdist
# workers: most tests wait on subprocesses, so two share two cores well. LOCLAB_TEST_WORKERS=0 runs
# it in one process (for a debugger or `-x`). The 15 slowest tests are listed at the end, so CI's log
# says where its time went.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure_installed.sh
export MLFLOW_DISABLE_TELEMETRY=true HF_HUB_OFFLINE=1
# each worker's model and encoder processes compute on its share of the cores: two workers each
# running torch on both cores spin against each other (one local-model test: 11 s alone; two at once
# 107 s on 2 threads each, 42 s on 1 each)
workers="${LOCLAB_TEST_WORKERS:-2}"
share=$(( $(nproc) / (workers > 1 ? workers : 1) ))
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$(( share > 0 ? share : 1 ))}"
export LOCLAB_MODEL_THREADS="${LOCLAB_MODEL_THREADS:-$OMP_NUM_THREADS}"
exec .venv/bin/python -m pytest -q -n "$workers" --dist worksteal --durations=15 "$@"
