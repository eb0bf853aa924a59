#!/usr/bin/env bash
# OpenEvolve as a peer of our proposers: same problem, same judge, same local model.
#
#   benchmarks/openevolve_peer/run.sh RUN_DIR [ITERATIONS [MODEL]] [-- TASK...]
#
# RUN_DIR         the run directory: our ledger.jsonl, programs/, search.json, split.json, and
#                 OpenEvolve's own output in RUN_DIR/openevolve (checkpoints, logs, best program).
# ITERATIONS      OpenEvolve iterations (default 20, the generations of our runs).
# MODEL           a packaged GGUF: qwen2.5-coder-1.5b (default, what our llama-cpp proposer
#                 uses) or qwen2.5-coder-0.5b (faster, for a smoke run).
# TASK            tasks instead of the discovery suite, e.g. aila_statutes limit-small
#
# Environment: PYTHON, an interpreter that imports embedding_ttc (with the local-llm extra),
# openevolve, and llama-cpp-python's server (default: python); PORT (default 8765);
# LLM_THREADS (default 1, as our llama-cpp proposer).  A run killed midway resumes from its
# last OpenEvolve checkpoint when the same command is run again.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -ge 1 && $1 != "--" ]] || { echo "usage: $0 RUN_DIR [ITERATIONS [MODEL]] [-- TASK...]" >&2; exit 2; }
run_dir="$1"; shift
iterations=20; model="qwen2.5-coder-1.5b"
if [[ $# -gt 0 && $1 != "--" ]]; then iterations="$1"; shift; fi
if [[ $# -gt 0 && $1 != "--" ]]; then model="$1"; shift; fi
if [[ $# -gt 0 && $1 == "--" ]]; then shift; fi
python="${PYTHON:-python}"
port="${PORT:-8765}"
mkdir -p "$run_dir/openevolve"
run_dir="$(cd "$run_dir" && pwd)"

gguf="$("$python" -c 'import sys; from embedding_ttc.llm.gguf import model_path; print(model_path(sys.argv[1]))' "$model")"
echo "model $model: $gguf"

# The OpenAI-compatible server, the same settings as our llama-cpp proposer (8192 tokens of
# context, one thread); stopped when this script ends, however it ends.
"$python" -m llama_cpp.server --model "$gguf" --model_alias "$model" --n_ctx 8192 \
    --n_threads "${LLM_THREADS:-1}" --host 127.0.0.1 --port "$port" \
    >"$run_dir/openevolve/llama-server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
    if "$python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
        "http://127.0.0.1:$port/v1/models" 2>/dev/null; then break; fi
    kill -0 "$server" 2>/dev/null || { echo "the llama.cpp server died: see $run_dir/openevolve/llama-server.log" >&2; exit 1; }
    sleep 1
done

export EMBEDDING_TTC_OE_RUN_DIR="$run_dir"
EMBEDDING_TTC_OE_TASKS="$(IFS=,; echo "$*")"
export EMBEDDING_TTC_OE_TASKS
export EMBEDDING_TTC_OE_MODEL="$model"
resume=()
latest="$(ls -d "$run_dir"/openevolve/checkpoints/checkpoint_* 2>/dev/null | sort -t_ -k2 -n | tail -1 || true)"
if [[ -n $latest ]]; then
    # A resumed OpenEvolve runs --iterations more iterations: ask only for the rest.
    done_so_far="${latest##*_}"
    iterations=$(( iterations - done_so_far ))
    resume=(--checkpoint "$latest")
    echo "resuming from $latest: $iterations iterations to go"
fi

start=$(date +%s)
status=0
if [[ $iterations -gt 0 ]]; then
    "$python" -c 'import sys; from openevolve.cli import main; sys.exit(main())' \
        "$here/initial_program.py" "$here/evaluator.py" --config "$here/config.yaml" \
        --output "$run_dir/openevolve" --iterations "$iterations" \
        --api-base "http://127.0.0.1:$port/v1" --primary-model "$model" "${resume[@]}" || status=$?
fi
echo "openevolve: exit $status after $(( $(date +%s) - start )) s"

# Our view of OpenEvolve's run (even a failed one): the same frontier rule as for our proposers.
"$python" -m embedding_ttc.cli frontier "$run_dir" --rule transfer
exit "$status"
