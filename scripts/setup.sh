#!/usr/bin/env bash
# Creates .venv (if needed) and installs loclab with its pinned dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
