#!/usr/bin/env bash
# The estimate's pipeline error against the number of micro-batches M, at 4 stages: for each
# preset, round and M, `inspect --profile` predicts the pipeline's speed-up over backprop, then
# pipeline and backprop train (probe and evaluation off, FLOPs-balanced cuts), through
# stagewise-cli. Prints one line per round and M (docs/benchmarks.md, "The estimate per method").
# usage: bench/engine/pipeline_micro_batches.sh [BUILD_DIR] [ROUNDS] [STEPS] [PRESETS] [MS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; rounds=${2:-2}; steps=${3:-500}
presets=${4:-cnn vit}; ms=${5:-2 4 8}
cli="$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "pipeline_micro_batches: build $cli first" >&2; exit 2; }
common=(--set probe.interval=-1 --set eval.interval=0 --set partition.balance=flops
        --set partition.stages=4)
json() {  # EXPR over d, the JSON document on stdin (train --json: its last line)
  python3 -c "
import json, sys
t = sys.stdin.read().strip()
try: d = json.loads(t)
except ValueError: d = json.loads(t.splitlines()[-1])
print($1)"
}
train() {  # CONFIG MODE M: samples/s of one run
  "$cli" train --config "$1" --no-store --quiet --json "${common[@]}" \
    --set train.max_steps="$steps" --set mode="$2" --set pipeline.micro_batches="$3" |
    json 'd["samples_per_sec"]'
}
printf '%-6s %5s %3s | %9s %9s %7s | %9s %9s\n' preset round M predicted measured err pipe/s bp/s
for preset in $presets; do
  cfg="resources/experiments/$preset-fmnist-4stage.json"
  for r in $(seq "$rounds"); do
    for m in $ms; do
      pred=$("$cli" inspect --config "$cfg" --profile --json "${common[@]}" \
        --set pipeline.micro_batches="$m" | json 'd["methods"]["pipeline_speedup"]')
      pipe=$(train "$cfg" pipeline "$m"); bp=$(train "$cfg" backprop "$m")
      python3 - "$preset" "$r" "$m" "$pred" "$pipe" "$bp" <<'PY'
import sys
preset, r, m, pred, pipe, bp = sys.argv[1], sys.argv[2], sys.argv[3], *map(float, sys.argv[4:])
meas = pipe / bp
print(f"{preset:<6} {r:>5} {m:>3} | {pred:9.2f} {meas:9.2f} {100 * (pred / meas - 1):+6.0f}% | "
      f"{pipe:9.0f} {bp:9.0f}")
PY
    done
  done
done
