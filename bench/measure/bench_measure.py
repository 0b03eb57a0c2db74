#!/usr/bin/env python3
"""What measuring costs: every preset with its shipped probes and evaluations against the same
run with both off, in paired rounds (issue 19).

In each round every preset runs twice, shipped defaults and off, the order alternating between
rounds; the round's ratio is defaults' samples/s over off's. The table gives the median ratio
per preset (target >= 0.95), the measure_share the runs with defaults reported by the engine's
own accounting, and how many probes and evaluations they measured and left out. With
--no-budget the defaults run with measure.budget=0 (every point the intervals ask for), the
behaviour before the budget.

    python3 bench/measure/bench_measure.py --cli build/app/cli/stagewise-cli --rounds 5
"""
import argparse
import json
import statistics
import subprocess
import sys

PRESETS = ["mlp-fmnist-4stage", "cnn-fmnist-4stage", "vit-fmnist-4stage"]
OFF = ["--set", "eval.interval=0", "--set", "probe.interval=-1"]


def summary(cli, preset, sets):
    cmd = [cli, "train", "--config", preset, "--no-store", "--json", "--quiet", *sets]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_measure: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return json.loads([line for line in p.stdout.splitlines() if line.strip()][-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default="build/app/cli/stagewise-cli")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--presets", nargs="*", default=PRESETS)
    ap.add_argument("--steps", type=int, default=0, help="train.max_steps (0: the preset's epoch)")
    ap.add_argument("--no-budget", action="store_true", help="defaults with measure.budget=0")
    args = ap.parse_args()
    common = ["--set", f"train.max_steps={args.steps}"] if args.steps else []
    defaults = common + (["--set", "measure.budget=0"] if args.no_budget else [])
    results = {p: [] for p in args.presets}
    for r in range(args.rounds):
        for preset in args.presets:
            order = [("defaults", defaults), ("off", common + OFF)]
            if r % 2:
                order.reverse()
            got = {name: summary(args.cli, preset, sets) for name, sets in order}
            d, o = got["defaults"], got["off"]
            results[preset].append((d, o))
            print(f"round {r + 1} {preset}: defaults {d['samples_per_sec']:.0f}, off "
                  f"{o['samples_per_sec']:.0f} samples/s, measure_share {d['measure_share']}",
                  file=sys.stderr)
    budget = "measure.budget=0" if args.no_budget else "shipped measure.budget"
    print(f"shipped probes and evaluations ({budget}) against both off, {args.rounds} paired "
          f"rounds, {'the preset' + chr(39) + 's epoch' if not args.steps else str(args.steps) + ' steps'}")
    print(f"| preset | defaults samples/s | off samples/s | ratio (median) | ratio min-max "
          f"| measure_share | probes / evaluations measured | left out |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for preset, rows in results.items():
        ratios = [d["samples_per_sec"] / o["samples_per_sec"] for d, o in rows]
        shares = [d["measure_share"] for d, _ in rows if d["measure_share"] is not None]
        points = rows[-1][0]["measure_points"]
        worst = min(worst, statistics.median(ratios))
        print(f"| {preset} | {statistics.median([d['samples_per_sec'] for d, _ in rows]):.0f} "
              f"| {statistics.median([o['samples_per_sec'] for _, o in rows]):.0f} "
              f"| {statistics.median(ratios):.3f} | {min(ratios):.3f}-{max(ratios):.3f} "
              f"| {statistics.median(shares) * 100:.1f} % "
              f"| {points['probes']} / {points['evaluations']} "
              f"| {points['left_out']} |")
    print(f"lowest median ratio {worst:.3f} (target >= 0.95): {'yes' if worst >= 0.95 else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
