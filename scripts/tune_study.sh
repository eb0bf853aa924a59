#!/usr/bin/env bash
# The tune study: `embedding-ttc tune` on each discovery-wide task, one command a task, each
# resuming from its run folder (results/tune/<task>/; RUN/runs.jsonl records every session's
# wall time). Never a held-out or multilingual task: `tune` refuses them.
#
#   bash scripts/tune_study.sh              # every task, in order (resumes the unfinished)
#   bash scripts/tune_study.sh adi lisa     # some of them
set -euo pipefail
cd "$(dirname "$0")/.."
TASKS=("$@")
if [[ ${#TASKS[@]} -eq 0 ]]; then
  TASKS=(aila_casedocs aila_statutes financebench financebench_pages lemb_qmsum limit-small
         lemb_passkey lemb_needle adi lisa legal_summarization birco_doris_mae_dev time
         cystic_fibrosis)
fi
for task in "${TASKS[@]}"; do
  echo "== $task"
  .venv/bin/embedding-ttc tune --task "$task" --run-dir "results/tune/$task" \
    --budget-minutes 30 --no-progress
done
# The study's table (results/tune/table.md) and figure (docs/figures/tune-study.svg), which
# docs/tune.md includes, from every run that has its report.
.venv/bin/python - <<'EOF'
from pathlib import Path

from embedding_ttc.tune.figure import draw_study
from embedding_ttc.tune.study import study_rows, write_study

print(write_study("results/tune"))
print(draw_study(study_rows(Path("results/tune")), Path("docs/figures/tune-study.svg")))
EOF
