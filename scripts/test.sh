#!/usr/bin/env bash
# Set up (idempotent), then lint, type-check and run the default test suite.
# Slow end-to-end tests are excluded here; run them with: .venv/bin/pytest -m slow
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=${EXTRAS:-encoders,dev} bash scripts/setup.sh
echo "== ruff"
.venv/bin/ruff check src tests
.venv/bin/ruff format --check src tests
echo "== mypy"
.venv/bin/mypy
echo "== docs"
site=$(mktemp -d)
.venv/bin/mkdocs build --strict --quiet --site-dir "$site"
rm -rf "$site"
echo "== pytest"
if [[ $# -gt 0 ]]; then
  HF_HUB_OFFLINE=1 .venv/bin/pytest -q "$@"
else
  # The tests that start a local Ray run in a process of their own, after the others: a fault
  # in Ray's runtime can end the process that started it, and must not take the rest of the
  # suite's report with it.
  HF_HUB_OFFLINE=1 .venv/bin/pytest -q -m "not slow and not ray"
  echo "== pytest: the tests that start a local Ray"
  HF_HUB_OFFLINE=1 .venv/bin/pytest -q -m "ray and not slow"
fi
