#!/usr/bin/env python3
"""How long a live re-partition stops training (issue 35): the default preset with a change of
its cuts at a step, each kind of change in turn (move one cut, join four stages into two, split
four into five), several rounds each.

Each run is `stagewise-cli train --change STEP:partition.cuts=[...]`, the same mechanism as a cut
dragged while the run trains. The pause is what the engine reports in the summary's `changes`:
from the moment the loader stopped feeding (the drain begins: the stages finish what is queued)
to the moment the rebuilt stages may take the next step (layers, optimizer state and aux heads
moved, channels rebuilt). The table gives the median and the largest pause per kind, and the
samples/s of the runs against the same run without a change, twice: with the probe and the
periodic evaluations off, and as the preset ships them (every 185 steps). The change comes at step
372 by default, two steps after the second probe and evaluation, when the analysis thread still has
them to measure: the pause must not wait for it (each segment's analysis thread finishes its queue
on its own copies of the modules while the next segment trains).

    python3 bench/steer/bench_repartition.py --cli build/app/cli/stagewise-cli --rounds 3
"""
import argparse
import json
import statistics
import subprocess
import sys

PRESET = "mlp-fmnist-4stage"  # 8 x 512 MLP + classifier, cuts [2,4,6], batch 32
KINDS = {
    "none": None,
    "move one cut": "[3,4,6]",
    "join 4 -> 2": "[4]",
    "split 4 -> 5": "[2,4,6,7]",
}


def run(cli, preset, steps, at, cuts, measured):
    cmd = [cli, "train", "--config", preset, "--no-store", "--json", "--quiet",
           "--set", f"train.max_steps={steps}"]
    if not measured:
        cmd += ["--set", "eval.interval=0", "--set", "probe.interval=-1"]
    if cuts:
        cmd += ["--change", f"{at}:partition.cuts={cuts}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_repartition: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return json.loads([line for line in p.stdout.splitlines() if line.strip()][-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default="build/app/cli/stagewise-cli")
    ap.add_argument("--preset", default=PRESET)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--at", type=int, default=372, help="the step of the change")
    args = ap.parse_args()
    rows = [(kind, measured) for measured in (False, True) for kind in KINDS]
    pauses = {r: [] for r in rows}
    rates = {r: [] for r in rows}
    for _ in range(args.rounds):
        for row in rows:  # interleaved, so drift hits every kind alike
            kind, measured = row
            s = run(args.cli, args.preset, args.steps, args.at, KINDS[kind], measured)
            rates[row].append(s["samples_per_sec"])
            for c in s.get("changes", []):
                if c["key"] == "partition.cuts":
                    pauses[row].append(c["pause_s"])
    print(f"{args.preset}, {args.steps} steps, change at step {args.at}, {args.rounds} round(s)")
    print(f"{'probe+eval':<11} {'change':<14} {'cuts':<11} {'pause median (s)':>17} "
          f"{'pause max (s)':>14} {'samples/s':>10}")
    for row in rows:
        kind, measured = row
        p = pauses[row]
        med = f"{statistics.median(p):.4f}" if p else "-"
        top = f"{max(p):.4f}" if p else "-"
        print(f"{'on' if measured else 'off':<11} {kind:<14} {KINDS[kind] or '[2,4,6]':<11} "
              f"{med:>17} {top:>14} {statistics.median(rates[row]):>10.0f}")


if __name__ == "__main__":
    main()
