#!/usr/bin/env python3
"""Pipeline schedules side by side with local updates (issue 37's benchmark).

For each preset, stage count K and micro-batch count M: samples/s of gpipe, 1f1b, interleaved
(v = 2 chunks per worker: the model is cut into 2K FLOPs-balanced stages run by K workers) and
zb-h1, with and without recomputation where asked, next to local updates at K stages; and each
schedule's bubble, measured (the idle share between a stage's first and last pass of a step) and
planned (the schedule simulated with the run's own mean F, B, W times), as the mean over stages
of the summary's `bubble_measured` / `bubble_planned` (docs/metrics.md, "Bubble"). All rows of a
round run back to back through stagewise-cli, probe and evaluation off, so ratios within a round
compare like with like on a noisy machine.

    python3 bench/engine/bench_schedules.py --cli build/app/cli/stagewise-cli \
        --presets mlp,cnn --stages 2,4 --micro 4,8 --steps 300 --rounds 1
"""
import argparse
import json
import math
import subprocess
import sys

SCHEDULES = ["gpipe", "1f1b", "interleaved", "zb-h1"]


def train(cli, config, sets):
    cmd = [cli, "train", "--config", config, "--no-store", "--quiet", "--json"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[-1]
    lines = [line for line in p.stdout.strip().splitlines() if line.strip()]
    return json.loads(lines[-1]), None


def mean(values):
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if vals else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default="build/app/cli/stagewise-cli")
    ap.add_argument("--presets", default="mlp,cnn")
    ap.add_argument("--stages", default="2,4")
    ap.add_argument("--micro", default="4,8")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--recompute", action="store_true", help="also each schedule with recompute")
    ap.add_argument("--json", default="", help="write every row here too")
    a = ap.parse_args()
    rows = []
    head = (f"{'preset':<6} {'K':>2} {'M':>2} {'rnd':>3} {'schedule':<21} {'samples/s':>9} "
            f"{'x local':>7} {'bubble meas.':>12} {'planned':>8} {'peak act. MiB':>13}")
    print(head)
    print("-" * len(head))
    for preset in a.presets.split(","):
        config = f"resources/experiments/{preset}-fmnist-4stage.json"
        for k in map(int, a.stages.split(",")):
            for m in map(int, a.micro.split(",")):
                for rnd in range(1, a.rounds + 1):
                    common = ["probe.interval=-1", "eval.interval=0", "partition.balance=flops",
                              f"train.max_steps={a.steps}"]
                    variants = [("local", common + ["mode=local", f"partition.stages={k}"])]
                    for s in SCHEDULES:
                        stages = 2 * k if s == "interleaved" else k
                        sets = common + ["mode=pipeline", f"pipeline.schedule={s}",
                                         f"pipeline.micro_batches={m}",
                                         f"partition.stages={stages}"]
                        if s == "interleaved":
                            sets.append("pipeline.chunks=2")
                        variants.append((s, sets))
                        if a.recompute:
                            variants.append((s + "+recompute", sets + ["pipeline.recompute=true"]))
                    local_rate = None
                    for name, sets in variants:
                        d, err = train(a.cli, config, sets)
                        if d is None:
                            print(f"{preset:<6} {k:>2} {m:>2} {rnd:>3} {name:<21} refused: {err}")
                            continue
                        rate = d.get("samples_per_sec") or float("nan")
                        if name == "local":
                            local_rate = rate
                        st = d.get("stages", [])
                        meas = mean([s.get("bubble_measured") for s in st])
                        plan = mean([s.get("bubble_planned") for s in st])
                        act = max((s.get("peak_activation_bytes") or 0) for s in st) / 2**20
                        ratio = rate / local_rate if local_rate else float("nan")
                        print(f"{preset:<6} {k:>2} {m:>2} {rnd:>3} {name:<21} {rate:>9.0f} "
                              f"{ratio:>7.2f} {meas:>12.3f} {plan:>8.3f} {act:>13.1f}",
                              flush=True)
                        rows.append({"preset": preset, "stages": k, "micro": m, "round": rnd,
                                     "variant": name, "samples_per_sec": rate,
                                     "bubble_measured": meas, "bubble_planned": plan,
                                     "peak_activation_mib": act})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
