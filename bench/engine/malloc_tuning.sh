#!/usr/bin/env bash
# What the malloc thresholds buy (docs/architecture.md, "Freed tensors stay in the process"): every
# preset in every mode trained with them (as shipped) and with glibc's defaults
# (STAGEWISE_MALLOC_TUNING=0), in interleaved rounds whose order alternates, through
# stagewise-cli; prints samples/s, the median ratio and its range over the rounds, and the
# process's minor page faults per training step (getrusage of the child, start-up included).
# usage: bench/engine/malloc_tuning.sh [BUILD_DIR] [ROUNDS] [STEPS] [PRESETS] [MODES]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; rounds=${2:-5}; steps=${3:-500}
presets=${4:-mlp cnn vit}; modes=${5:-local pipeline backprop}
cli="$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "malloc_tuning: build $cli first" >&2; exit 2; }
run() {  # PRESET MODE TUNING: prints "samples/s minor-page-faults-per-step" of one run
  STAGEWISE_MALLOC_TUNING=$3 python3 - "$cli" "$1" "$2" "$steps" <<'PY'
import json, resource, subprocess, sys
cli, preset, mode, steps = sys.argv[1:]
out = subprocess.run([cli, "train", "--config", f"resources/experiments/{preset}-fmnist-4stage.json",
                      "--no-store", "--quiet", "--json", "--set", f"train.max_steps={steps}",
                      "--set", "probe.interval=-1", "--set", "eval.interval=0", "--set",
                      f"mode={mode}"], check=True, capture_output=True, text=True).stdout
faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt  # the whole process, start-up too
print(json.loads(out.strip().splitlines()[-1])["samples_per_sec"], faults / int(steps))
PY
}
printf '%-6s %-9s %7s %12s %12s %7s %22s\n' preset mode rounds tuned/s glibc/s ratio \
  'faults/step tuned|glibc'
for preset in $presets; do
  for mode in $modes; do
    on=(); off=(); fon=(); foff=()
    for r in $(seq "$rounds"); do
      if (( r % 2 )); then a=$(run "$preset" "$mode" 1); b=$(run "$preset" "$mode" 0)
      else b=$(run "$preset" "$mode" 0); a=$(run "$preset" "$mode" 1); fi
      on+=("${a% *}"); off+=("${b% *}"); fon+=("${a#* }"); foff+=("${b#* }")
    done
    python3 - "$preset" "$mode" "${on[*]}" "${off[*]}" "${fon[*]}" "${foff[*]}" <<'PY'
import statistics, sys
preset, mode = sys.argv[1], sys.argv[2]
on, off, fon, foff = ([float(x) for x in a.split()] for a in sys.argv[3:7])
ratios = [a / b for a, b in zip(on, off)]
print(f"{preset:6} {mode:9} {len(on):7} {statistics.median(on):12.0f} {statistics.median(off):12.0f} "
      f"{statistics.median(ratios):7.3f} {statistics.median(fon):10.1f} | {statistics.median(foff):<9.1f}"
      f" (rounds {min(ratios):.3f}-{max(ratios):.3f})")
PY
  done
done
