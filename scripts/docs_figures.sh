#!/usr/bin/env bash
# Redraw the figures the docs show from the committed transfer study: `report` draws every
# figure under results/transfer/figures (not committed), and the docs keep copies of three.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/embedding-ttc report results/transfer >/dev/null
for name in pareto heatmap trajectory; do
  cp "results/transfer/figures/$name.svg" "docs/figures/$name.svg"
done
echo "docs/figures: pareto, heatmap, trajectory redrawn from results/transfer"
