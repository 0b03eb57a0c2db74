#!/usr/bin/env bash
# GPU benchmark for a machine with an NVIDIA GPU and the CUDA LibTorch inside Python's torch
# package (no Qt needed): builds the engine and the CLI against it, then prints samples/s of
# local vs backprop for every preset at batch 32 and 256, all stages on cuda:0.
# Needs: cmake, a C++20 compiler, nlohmann-json and zlib headers (carry them if the machine has
# none). Usage: bench/gpu/run_on_device.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build-gpu/results}
torch_dir=$(python3 -c 'import torch, os; print(os.path.join(torch.utils.cmake_prefix_path, "Torch"))')
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$torch_dir" \
  -DSTAGEWISE_BUILD_GUI=OFF -DSTAGEWISE_BUILD_TESTS=OFF -DSTAGEWISE_BUILD_STORE=OFF -DSTAGEWISE_BENCH=OFF
cmake --build build-gpu -j"$(nproc)" --target stagewise-cli
cli=build-gpu/app/cli/stagewise-cli
mkdir -p "$out"
bash tests/gpu/gpu_smoke.sh "$cli" . | tee "$out/smoke.txt"
printf '%-20s %-9s %5s %12s %9s\n' preset mode batch samples/s test_acc | tee "$out/table.txt"
for preset in mlp-fmnist-4stage cnn-fmnist-4stage vit-fmnist-4stage; do
  for batch in 32 256; do
    for mode in local backprop; do
      line=$("$cli" train --config "resources/experiments/$preset.json" --no-store --json --quiet \
        --set stage_defaults.device=cuda:0 --set mode=$mode --set train.batch_size=$batch \
        --set train.max_steps=400 --set probe.interval=-1 --set eval.interval=0 | tail -1)
      echo "$line" >> "$out/runs.jsonl"
      echo "$line" | python3 -c "import json,sys; d=json.load(sys.stdin); print('%-20s %-9s %5d %12.0f %9.4f' % ('$preset','$mode',$batch,d['samples_per_sec'],d['test_accuracy'] or 0))" | tee -a "$out/table.txt"
    done
  done
done
