#!/usr/bin/env bash
# Which initialisation and normalisation the presets use (issue 32 §3): the default MLP preset
# trained for its own length (one epoch) with each model.init x model.norm, per mode and learning
# rate, on a 10 % validation split. The choice is made on val_accuracy; test_accuracy is printed
# beside it, never used to choose. One line per run, then each mode's best by validation.
# usage: bench/engine/init_norm.sh [BUILD_DIR] [PRESET] [SEEDS] [MODES] [LRS] [INITS] [NORMS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; preset=${2:-mlp}; seeds=${3:-1}
modes=${4:-local backprop}; lrs=${5:-1e-3 1e-4}
inits=${6:-default kaiming xavier}; norms=${7:-none layernorm batchnorm}
cli="$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "init_norm: build $cli first" >&2; exit 2; }
cfg="resources/experiments/$preset-fmnist-4stage.json"
out=$(mktemp); trap 'rm -f "$out"' EXIT
printf '%-9s %-8s %-8s %-10s %4s | %8s %8s\n' mode lr init norm seed val_acc test_acc
for mode in $modes; do for lr in $lrs; do for init in $inits; do for norm in $norms; do
  for seed in $(seq "$seeds"); do
    line=$("$cli" train --config "$cfg" --no-store --quiet --json --set mode="$mode" \
      --set train.lr="$lr" --set model.init="$init" --set model.norm="$norm" \
      --set train.seed="$seed" --set dataset.validation=0.1 --set probe.interval=-1 | tail -1)
    python3 - "$mode" "$lr" "$init" "$norm" "$seed" "$line" <<'PY' | tee -a "$out"
import json, sys
mode, lr, init, norm, seed, line = sys.argv[1:]
d = json.loads(line)
print(f"{mode:<9} {lr:<8} {init:<8} {norm:<10} {seed:>4} | {d['val_accuracy']:8.4f} {d['test_accuracy']:8.4f}")
PY
  done
done; done; done; done
echo "best by validation (mean over seeds):"
python3 - "$out" <<'PY'
import collections, sys
rows = collections.defaultdict(list)
for l in open(sys.argv[1]):
    mode, lr, init, norm, seed, _, val, test = l.split()
    rows[(mode, lr, init, norm)].append((float(val), float(test)))
best = {}
for k, v in rows.items():
    m = (sum(x for x, _ in v) / len(v), sum(y for _, y in v) / len(v))
    if k[0] not in best or m[0] > best[k[0]][1][0]:
        best[k[0]] = (k, m)
for mode, (k, (val, test)) in best.items():
    print(f"  {mode:<9} lr {k[1]:<8} init {k[2]:<8} norm {k[3]:<10} val {val:.4f} test {test:.4f}")
PY
