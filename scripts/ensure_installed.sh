#!/usr/bin/env bash
# Installs (scripts/setup.sh) when .venv is missing or was installed from other pins than these:
# a changed pyproject.toml or requirements.lock reaches the environment before anything runs.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${LOCLAB_EXTRAS:-$(cat .venv/loclab-install.extras 2>/dev/null || echo test)}"
if [ ! -x .venv/bin/python ] || [ "$(cat .venv/loclab-install.stamp 2>/dev/null)" != "$(bash scripts/install_stamp.sh "$EXTRAS")" ]; then
  [ -x .venv/bin/python ] && echo "setup: the pins changed since .venv was installed: reinstalling" >&2
  LOCLAB_EXTRAS="$EXTRAS" bash scripts/setup.sh
fi
