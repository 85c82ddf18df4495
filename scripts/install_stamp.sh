#!/usr/bin/env bash
# What an install of loclab depends on: the pins (pyproject.toml, requirements.lock) and the extras.
# setup.sh writes it after installing; test.sh and bench.sh compare it to decide whether to reinstall.
set -euo pipefail
cd "$(dirname "$0")/.."
{ cat pyproject.toml requirements.lock; echo "extras=$1"; } | sha256sum | cut -d' ' -f1
