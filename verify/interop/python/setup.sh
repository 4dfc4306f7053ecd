#!/usr/bin/env bash
# Creates verify/interop/python/.venv with the official Python SDK pinned below.
# Idempotent: when the venv already has exactly these versions it returns at once.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
REBUNO_VERSION="0.29.2"     # newest version served by PyPI when pinned (see docs/interop.md)
python="${PYTHON:-python3}"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" - "$REBUNO_VERSION" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(0 if version("rebuno") == sys.argv[1] else 1)
PY
then
  echo "interop venv ready: rebuno==$REBUNO_VERSION ($venv)"
  exit 0
fi

rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "rebuno==$REBUNO_VERSION"
"$venv/bin/python" -c 'import rebuno, importlib.metadata as m; print("installed rebuno", m.version("rebuno"))'
