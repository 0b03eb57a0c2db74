#!/usr/bin/env bash
# What the malloc thresholds buy (docs/architecture.md, "Freed tensors stay in the process"): every
# preset in every mode trained with them (as shipped) and with glibc's defaults
# (STAGEWISE_MALLOC_TUNING=0), in interleaved rounds whose order alternates, through
# stagewise-cli; prints samples/s, the ratio per round and the median ratio.
# usage: bench/engine/malloc_tuning.sh [BUILD_DIR] [ROUNDS] [STEPS] [PRESETS] [MODES]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; rounds=${2:-5}; steps=${3:-500}
presets=${4:-mlp cnn vit}; modes=${5:-local pipeline backprop}
cli="$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "malloc_tuning: build $cli first" >&2; exit 2; }
run() {  # PRESET MODE TUNING: prints samples/s of one run
  STAGEWISE_MALLOC_TUNING=$3 "$cli" train --config "resources/experiments/$1-fmnist-4stage.json" \
    --no-store --quiet --json --set train.max_steps="$steps" --set probe.interval=-1 \
    --set eval.interval=0 --set mode="$2" |
    tail -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["samples_per_sec"])'
}
printf '%-6s %-9s %7s %12s %12s %7s\n' preset mode rounds tuned/s glibc/s ratio
for preset in $presets; do
  for mode in $modes; do
    on=(); off=()
    for r in $(seq "$rounds"); do
      if (( r % 2 )); then a=$(run "$preset" "$mode" 1); b=$(run "$preset" "$mode" 0)
      else b=$(run "$preset" "$mode" 0); a=$(run "$preset" "$mode" 1); fi
      on+=("$a"); off+=("$b")
    done
    python3 - "$preset" "$mode" "${on[*]}" "${off[*]}" <<'PY'
import statistics, sys
preset, mode = sys.argv[1], sys.argv[2]
on = [float(x) for x in sys.argv[3].split()]; off = [float(x) for x in sys.argv[4].split()]
ratios = [a / b for a, b in zip(on, off)]
print(f"{preset:6} {mode:9} {len(on):7} {statistics.median(on):12.0f} {statistics.median(off):12.0f} "
      f"{statistics.median(ratios):7.3f}  (rounds {min(ratios):.3f}-{max(ratios):.3f})")
PY
  done
done
