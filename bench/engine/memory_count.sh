#!/usr/bin/env bash
# What counting memory costs: the default preset trained with the counting allocator (as shipped)
# and without it (STAGEWISE_COUNT_MEMORY=0), in interleaved rounds; prints samples/s and the ratio.
# usage: bench/engine/memory_count.sh [BUILD_DIR] [ROUNDS] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; rounds=${2:-5}; steps=${3:-1000}
cli="$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "memory_count: build $cli first" >&2; exit 2; }
run() {  # prints samples/s of one run
  env "$@" "$cli" train --config resources/experiments/mlp-fmnist-4stage.json --no-store --quiet --json \
    --set train.max_steps="$steps" --set probe.interval=-1 --set eval.interval=0 |
    tail -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["samples_per_sec"])'
}
printf '%-6s %14s %14s %8s\n' round counted/s uncounted/s ratio
on=(); off=()
for r in $(seq "$rounds"); do
  a=$(run STAGEWISE_COUNT_MEMORY=1); b=$(run STAGEWISE_COUNT_MEMORY=0)
  on+=("$a"); off+=("$b")
  printf '%-6s %14.0f %14.0f %8.3f\n' "$r" "$a" "$b" "$(echo "$a / $b" | bc -l)"
done
python3 - "${on[*]}" "${off[*]}" <<'PY'
import statistics, sys
on = [float(x) for x in sys.argv[1].split()]; off = [float(x) for x in sys.argv[2].split()]
print(f"median {statistics.median(on):14.0f} {statistics.median(off):14.0f} "
      f"{statistics.median([a / b for a, b in zip(on, off)]):8.3f}")
PY
