#!/usr/bin/env python3
"""throughput_spec.py SPEC OUT STEPS: SPEC with max_steps=STEPS and probe and evaluation off, as
the throughput benchmarks run it (bench/engine/omp_wait.sh, bench/ui/gui_vs_cli.sh)."""
import json
import sys

spec_path, out_path, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(spec_path) as f:
    d = json.load(f)
d['train']['max_steps'] = steps
d['eval']['interval'] = 0
d['probe']['interval'] = -1
with open(out_path, 'w') as f:
    json.dump(d, f)
