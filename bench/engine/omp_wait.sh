#!/usr/bin/env bash
# How long idle OpenMP workers spin before they sleep, and what it does to training throughput.
# Stagewise's programs that train set GOMP_SPINCOUNT=10000 unless the user set a wait policy
# (engine/src/runtime/omp_wait.cpp); libgomp's own default is 300,000 spins.
#
# Usage: bench/engine/omp_wait.sh [ROUNDS] [STEPS]
#   env: CLI (default build/app/cli/stagewise-cli),
#        SPEC (default resources/experiments/mlp-fmnist-4stage.json),
#        MODES (default "backprop local"),
#        SPINS (default "300000 10000 0": libgomp's default, Stagewise's, passive)
# Each round runs every mode with every spin count back to back (the CLI, --no-store, probe and
# evaluation off) and prints samples/s. The table gives, per mode and spin count, the median,
# the lowest and the highest over rounds, and the median over rounds of each round's ratio to
# libgomp's default (runs made back to back, so slow phases of the machine mostly cancel).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ROUNDS="${1:-6}"
STEPS="${2:-3000}"
CLI="${CLI:-$ROOT/build/app/cli/stagewise-cli}"
SPEC="${SPEC:-$ROOT/resources/experiments/mlp-fmnist-4stage.json}"
MODES="${MODES:-backprop local}"
SPINS="${SPINS:-300000 10000 0}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

python3 "$ROOT/bench/throughput_spec.py" "$SPEC" "$TMP/s.json" "$STEPS"

echo "$("$CLI" inspect --config "$TMP/s.json" | grep -E '^BLAS')"
echo "$(nproc) cores, $STEPS steps per run, $ROUNDS rounds, spec $(basename "$SPEC")"
for ((r = 1; r <= ROUNDS; r++)); do
  for mode in $MODES; do
    for spin in $SPINS; do
      # OMP_WAIT_POLICY stays unset: GOMP_SPINCOUNT alone decides, and the CLI does not re-execute.
      sps=$(env -u OMP_WAIT_POLICY GOMP_SPINCOUNT="$spin" "$CLI" train --config "$TMP/s.json" \
        --set mode="$mode" --no-store --quiet --json | tail -1 |
        python3 -c "import json,sys; print(round(json.load(sys.stdin)['samples_per_sec']))")
      echo "$r $mode $spin $sps" >>"$TMP/rows"
      echo "round $r: $mode, spin $spin: $sps samples/s" >&2
    done
  done
done

python3 - "$TMP/rows" "$SPINS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
spins = sys.argv[2].split()
base = spins[0]
data = {}
for r, mode, spin, sps in rows:
    data.setdefault(mode, {}).setdefault(spin, {})[r] = int(sps)
name = {'300000': 'libgomp default', '10000': 'Stagewise default', '0': 'passive'}
print(f"\n{'mode':9} {'GOMP_SPINCOUNT':26} {'median':>7} {'lowest':>7} {'highest':>7} {'paired ÷ ' + base:>16}")
for mode, by in data.items():
    for spin in spins:
        v = by.get(spin, {})
        if not v:
            continue
        ratios = [v[r] / by[base][r] for r in v if r in by.get(base, {})]
        label = f"{spin} ({name[spin]})" if spin in name else spin
        print(f"{mode:9} {label:26} {statistics.median(v.values()):7.0f} {min(v.values()):7d} "
              f"{max(v.values()):7d} {statistics.median(ratios):16.3f}")
PY
