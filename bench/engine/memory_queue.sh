#!/usr/bin/env bash
# How much of a local stage's measured memory is the bounded queue: trains the CNN preset at 4
# stages (FLOPs-balanced cuts, probe and evaluation off) in local mode with each queue capacity
# and prints every stage's peak_memory_bytes (the counting allocator) beside the bytes it sends
# a step. A batch waiting in the queue counts for the stage that sent it, so each further slot
# should add about one boundary activation to the sender's peak (docs/benchmarks.md, "Peak
# memory per stage per mode").
# usage: bench/engine/memory_queue.sh [BUILD_DIR] [STEPS] [CAPACITIES] [PRESET]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; steps=${2:-150}; capacities=${3:-1 4 8}; preset=${4:-cnn}
cli="$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "memory_queue: build $cli first" >&2; exit 2; }
printf '%-6s %8s | %-36s | %s\n' preset capacity "peak_memory_bytes per stage, MB" "MB sent per step"
for q in $capacities; do
  out=$("$cli" train --config "resources/experiments/$preset-fmnist-4stage.json" --no-store --json \
    --quiet --set train.max_steps="$steps" --set probe.interval=-1 --set eval.interval=0 \
    --set partition.balance=flops --set partition.stages=4 --set train.queue_capacity="$q") ||
    { echo "memory_queue: the $preset run with queue_capacity=$q failed (above)" >&2; exit 1; }
  echo "$out" | tail -1 | python3 -c "
import json, sys
d = json.load(sys.stdin)
if d['status'] != 'completed': sys.exit('memory_queue: run ' + d['status'])
mb = lambda v: '%.3f' % (v / 1e6) if v is not None else '-'
peaks = ' '.join(mb(s['peak_memory_bytes']) for s in d['stages'])
sent = ' '.join(mb(s['bytes_sent'] / max(1, d['steps'])) for s in d['stages'])
print('%-6s %8s | %-36s | %s' % ('$preset', '$q', peaks, sent))"
done
