#!/usr/bin/env bash
# GPU check (label gpu): trains every preset briefly with all stages on cuda:0, local and
# backprop. Exits 77 (skipped) when the engine sees no CUDA device.
set -euo pipefail
cli=${1:?usage: gpu_smoke.sh STAGEWISE_CLI SOURCE_DIR}
src=${2:?usage: gpu_smoke.sh STAGEWISE_CLI SOURCE_DIR}
devices=$("$cli" inspect --config "$src/resources/experiments/mlp-fmnist-4stage.json" --json |
  python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["devices"]))')
case " $devices " in *" cuda:0 "*) ;; *) echo "no CUDA device (devices: $devices): skipped"; exit 77 ;; esac
for preset in mlp-fmnist-4stage cnn-fmnist-4stage vit-fmnist-4stage; do
  for mode in local backprop; do
    out=$("$cli" train --config "$src/resources/experiments/$preset.json" --no-store --json --quiet \
      --set stage_defaults.device=cuda:0 --set mode=$mode --set train.max_steps=100 --set eval.max_samples=1000 | tail -1)
    echo "$preset $mode: $out" | cut -c1-200
    echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["status"]=="completed" else 1)'
  done
done
echo "gpu smoke: all presets trained on cuda:0"
