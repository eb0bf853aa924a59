#!/usr/bin/env bash
# Set up (idempotent), then lint, type-check, build the docs and run the default test suite.
# Every stage runs even when one before it failed; a summary names each stage's status, and the
# script exits non-zero if any failed. Slow end-to-end tests are excluded here; run them with:
# .venv/bin/pytest -m slow
set -uo pipefail
cd "$(dirname "$0")/.."
EXTRAS=${EXTRAS:-encoders,dev} bash scripts/setup.sh || { echo "== setup: FAILED"; exit 1; }

names=()
statuses=()
failed=0

# stage NAME COMMAND...: run one stage, record "ok" or "FAILED (exit N)".
stage() {
  local name=$1
  shift
  echo "== $name"
  "$@"
  local code=$?
  names+=("$name")
  if [[ $code -eq 0 ]]; then
    statuses+=("ok")
  else
    statuses+=("FAILED (exit $code)")
    failed=1
  fi
}

docs() {
  local site
  site=$(mktemp -d)
  .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
  local code=$?
  rm -rf "$site"
  return $code
}

if [[ ! -f ../shared/datasets/INDEX.tsv ]]; then
  echo "note: no ../shared/datasets beside this checkout: the tests that need it are skipped" \
    "(each with its reason); under CI=true they fail instead"
fi

stage "ruff check" .venv/bin/ruff check src tests
stage "ruff format" .venv/bin/ruff format --check src tests
stage "mypy" .venv/bin/mypy
stage "docs" docs
if [[ $# -gt 0 ]]; then
  stage "pytest $*" env HF_HUB_OFFLINE=1 .venv/bin/pytest -q "$@"
else
  # The tests that start a local Ray run in a process of their own, after the others: a fault
  # in Ray's runtime can end the process that started it, and must not take the rest of the
  # suite's report with it.
  stage "pytest" env HF_HUB_OFFLINE=1 .venv/bin/pytest -q -m "not slow and not ray"
  stage "pytest: the tests that start a local Ray" \
    env HF_HUB_OFFLINE=1 .venv/bin/pytest -q -m "ray and not slow"
fi

echo "== summary"
for i in "${!names[@]}"; do
  printf '%-45s %s\n' "${names[$i]}" "${statuses[$i]}"
done
exit $failed
