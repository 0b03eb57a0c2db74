#!/usr/bin/env bash
# What the malloc thresholds buy (docs/architecture.md, "Freed tensors stay in the process"): every
# preset in every mode trained with them (as shipped) and with glibc's defaults
# (STAGEWISE_MALLOC_TUNING=0), in interleaved rounds whose order alternates, through
# stagewise-cli; prints samples/s, the median ratio and its range over the rounds, and the
# process's minor page faults per training step (getrusage of the child, start-up included),
# and the same by thread (the engine names its threads sw-stage-N and sw-loader; the rest are
# "other": the main thread, OpenMP workers; read from /proc every 50 ms while the run lasts).
# MODES may also hold "profile": `inspect --profile` in place of a run, its row the local
# samples/s the profile predicts, its faults per profile (not per step).
# usage: bench/engine/malloc_tuning.sh [BUILD_DIR] [ROUNDS] [STEPS] [PRESETS] [MODES]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; rounds=${2:-5}; steps=${3:-500}
presets=${4:-mlp cnn vit}; modes=${5:-local pipeline backprop}
cli="$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "malloc_tuning: build $cli first" >&2; exit 2; }
run() {  # PRESET MODE TUNING: prints "samples/s faults-per-step per-thread" of one run
  STAGEWISE_MALLOC_TUNING=$3 python3 - "$cli" "$1" "$2" "$steps" <<'PY'
import json, os, resource, subprocess, sys, time
cli, preset, mode, steps = sys.argv[1:]
config = f"resources/experiments/{preset}-fmnist-4stage.json"
if mode == "profile":  # the layer profile: what inspect --profile predicts for local mode
    steps = "1"
    args = [cli, "inspect", "--config", config, "--profile", "--json"]
else:
    args = [cli, "train", "--config", config, "--no-store", "--quiet", "--json", "--set",
            f"train.max_steps={steps}", "--set", "probe.interval=-1", "--set", "eval.interval=0",
            "--set", f"mode={mode}"]
p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
last = {}  # tid: (name, minor faults) at its last reading; the engine names its threads sw-*
while p.poll() is None:
    try: tids = os.listdir(f"/proc/{p.pid}/task")
    except OSError: break
    for tid in tids:
        try:
            with open(f"/proc/{p.pid}/task/{tid}/stat") as f: stat = f.read()
            with open(f"/proc/{p.pid}/task/{tid}/comm") as f: name = f.read().strip()
        except OSError: continue
        last[tid] = (name if name.startswith("sw-") else "other", int(stat.rsplit(")", 1)[1].split()[7]))
    time.sleep(0.05)
out = p.communicate()[0]
if p.returncode: sys.exit(f"malloc_tuning: {cli} failed ({p.returncode})")
faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt  # the whole process, start-up too
per = {}
for name, n in last.values(): per[name] = per.get(name, 0) + n
threads = ",".join(f"{k}={v / int(steps):.0f}" for k, v in sorted(per.items()))
try: d = json.loads(out)
except ValueError: d = json.loads(out.strip().splitlines()[-1])  # train --json: its last line
sps = d["methods"]["local_samples_per_sec"] if mode == "profile" else d["samples_per_sec"]
print(sps, faults / int(steps), threads)
PY
}
printf '%-6s %-9s %7s %12s %12s %7s %22s\n' preset mode rounds tuned/s glibc/s ratio \
  'faults/step tuned|glibc'
for preset in $presets; do
  for mode in $modes; do
    on=(); off=(); fon=(); foff=(); ton=(); toff=()
    for r in $(seq "$rounds"); do
      if (( r % 2 )); then a=$(run "$preset" "$mode" 1); b=$(run "$preset" "$mode" 0)
      else b=$(run "$preset" "$mode" 0); a=$(run "$preset" "$mode" 1); fi
      read -r sa fa ta <<< "$a"; read -r sb fb tb <<< "$b"
      on+=("$sa"); off+=("$sb"); fon+=("$fa"); foff+=("$fb"); ton+=("$ta"); toff+=("$tb")
    done
    python3 - "$preset" "$mode" "${on[*]}" "${off[*]}" "${fon[*]}" "${foff[*]}" "${ton[*]}" \
      "${toff[*]}" <<'PY'
import statistics, sys
preset, mode = sys.argv[1], sys.argv[2]
on, off, fon, foff = ([float(x) for x in a.split()] for a in sys.argv[3:7])
def threads(runs):  # median faults per step of each thread name over the rounds
    per = {}
    for run in runs.split():
        for kv in run.split(","):
            k, v = kv.split("="); per.setdefault(k, []).append(float(v))
    return " ".join(f"{k} {statistics.median(v):.0f}" for k, v in sorted(per.items()))
ratios = [a / b for a, b in zip(on, off)]
print(f"{preset:6} {mode:9} {len(on):7} {statistics.median(on):12.0f} {statistics.median(off):12.0f} "
      f"{statistics.median(ratios):7.3f} {statistics.median(fon):10.1f} | {statistics.median(foff):<9.1f}"
      f" (rounds {min(ratios):.3f}-{max(ratios):.3f})")
print(f"{'':16} faults/step by thread, tuned: {threads(sys.argv[7])}")
print(f"{'':16} faults/step by thread, glibc: {threads(sys.argv[8])}")
PY
  done
done
