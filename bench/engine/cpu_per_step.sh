#!/usr/bin/env bash
# CPU time and run-queue wait per training step, per thread, from the kernel's own accounting
# (/proc/PID/task/TID/schedstat: time on a CPU, time waiting for one, slices), sampled over 6 s
# in the middle of a 6,000-step run of the MLP preset through stagewise-cli (probe and
# evaluation off, FLOPs-balanced cuts). Compares what a step really costs on the CPU with the
# estimate's profile of the same stages measured alone (docs/benchmarks.md, "The estimate per
# method").
#   bench/engine/cpu_per_step.sh MODE STAGES [BUILD]     e.g. cpu_per_step.sh pipeline 4
set -euo pipefail
mode=${1:?mode: local, pipeline or backprop}
stages=${2:?stage count}
build=${3:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
cli="$root/$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "cpu_per_step.sh: no $cli: build it first (cmake --build $build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" train --config "$root/resources/experiments/mlp-fmnist-4stage.json" --no-store --quiet \
  --json --set partition.balance=flops --set "partition.stages=$stages" --set "mode=$mode" \
  --set train.max_steps=6000 --set probe.interval=-1 --set eval.interval=0 >"$tmp/summary.json" &
pid=$!
snap() { for t in /proc/$pid/task/*; do echo "$(basename "$t") $(cat "$t/schedstat")"; done; }
sleep 4
snap >"$tmp/a"
sleep 6
snap >"$tmp/b"
wait $pid
python3 - "$tmp" "$mode" "$stages" <<'PY'
import json, sys
tmp, mode, k = sys.argv[1:]
a = {l.split()[0]: l.split() for l in open(f"{tmp}/a")}
b = {l.split()[0]: l.split() for l in open(f"{tmp}/b")}
sps = json.load(open(f"{tmp}/summary.json"))["samples_per_sec"]
steps = sps / 32 * 6  # batch 32, 6 s between the samples
cpu_total = wait_total = 0
for tid, v in b.items():
    if tid not in a:
        continue
    cpu, wait, n = ((int(v[i]) - int(a[tid][i])) for i in (1, 2, 3))
    if cpu < 10e6:  # the main, loader and analysis threads: under 10 ms in 6 s
        continue
    cpu_total += cpu; wait_total += wait
    print(f"thread {tid}: cpu {cpu / 1e6 / steps:.3f} ms/step, waiting for a cpu "
          f"{wait / 1e6 / steps:.3f} ms/step, {n / steps:.1f} slices/step")
print(f"{mode}, {k} stages: {sps:.0f} samples/s, a step every {1e3 * 32 / sps:.3f} ms; "
      f"compute threads' cpu {cpu_total / 1e6 / steps:.3f} ms/step, waiting {wait_total / 1e6 / steps:.3f}")
PY
