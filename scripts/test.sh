#!/usr/bin/env bash
# The test suite (needs the package registry for the pip-downloaded subjects).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure_installed.sh
export MLFLOW_DISABLE_TELEMETRY=true HF_HUB_OFFLINE=1
exec .venv/bin/python -m pytest -q "$@"
