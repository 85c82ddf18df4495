#!/usr/bin/env bash
# Creates .venv (if needed) and installs loclab, every package pinned by requirements.lock.
# LOCLAB_EXTRAS picks the extras (default: test; CI: test,embed,ray,llm). Installing takes about
# 5 minutes on 2 cores with the default extras (torch and ray make it longer). A stamp of what was
# installed (pyproject.toml, requirements.lock, the extras) lets test.sh and bench.sh reinstall
# when a pin changes instead of running on an old environment.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${LOCLAB_EXTRAS:-test}"
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "error: loclab needs Python 3.11 or newer; $PYTHON is $("$PYTHON" --version 2>&1 || echo missing)." \
       "Set PYTHON=/path/to/python3.11 and run again." >&2
  exit 2
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
echo "setup: installing loclab[$EXTRAS] with requirements.lock into .venv (a few minutes)..." >&2
# pip says what it collects and installs: a quiet install looked hung for minutes
.venv/bin/python -m pip install --disable-pip-version-check --progress-bar off -c requirements.lock -e ".[$EXTRAS]" >&2
bash scripts/install_stamp.sh "$EXTRAS" > .venv/loclab-install.stamp
echo "$EXTRAS" > .venv/loclab-install.extras
echo "setup: done ($(.venv/bin/python -m pip list --format=freeze 2>/dev/null | wc -l) packages)" >&2
