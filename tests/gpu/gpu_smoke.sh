#!/usr/bin/env bash
# GPU check (label gpu): trains every preset briefly with all stages on cuda:0 in every mode
# (local, pipeline, backprop) and checks that each stage reports peak_memory_bytes, read from
# the CUDA caching allocator. Exits 77 (skipped) when the engine sees no CUDA device.
set -euo pipefail
cli=${1:?usage: gpu_smoke.sh STAGEWISE_CLI SOURCE_DIR}
src=${2:?usage: gpu_smoke.sh STAGEWISE_CLI SOURCE_DIR}
devices=$("$cli" inspect --config "$src/resources/experiments/mlp-fmnist-4stage.json" --json |
  python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["devices"]))')
case " $devices " in *" cuda:0 "*) ;; *) echo "no CUDA device (devices: $devices): skipped"; exit 77 ;; esac
for preset in mlp-fmnist-4stage cnn-fmnist-4stage vit-fmnist-4stage; do
  for mode in local pipeline backprop; do
    out=$("$cli" train --config "$src/resources/experiments/$preset.json" --no-store --json --quiet \
      --set stage_defaults.device=cuda:0 --set mode=$mode --set train.max_steps=100 --set eval.max_samples=1000 | tail -1)
    echo "$preset $mode: $out" | cut -c1-200
    echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
peaks = [s["peak_memory_bytes"] for s in d["stages"]]
print("  peak_memory_bytes per stage (CUDA caching allocator):", peaks)
if d["status"] != "completed": sys.exit("run did not complete")
if any(p is None or p <= 0 for p in peaks): sys.exit("a CUDA stage has no peak_memory_bytes")'
  done
done
echo "gpu smoke: all presets trained on cuda:0"
