#!/usr/bin/env bash
# The main job: the default benchmark (demo task set, two_phase and bm25, embedded lexical
# System One, MLflow on runs/mlflow.db). Extra arguments go to Hydra, e.g. dataset=swebench_lite_pypi.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure_installed.sh
export MLFLOW_DISABLE_TELEMETRY=true HF_HUB_OFFLINE=1
exec .venv/bin/python -m experiments.run -m experiment=default "$@"
