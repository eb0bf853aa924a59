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
HF_HUB_OFFLINE=1 .venv/bin/pytest -q "$@"
