#!/usr/bin/env python3
"""A study of N runs against the same N runs as N separate `stagewise-cli train` calls.

Both record into a run store (a study's runs are always recorded). In each round the study and
the separate calls run the same points (train.lr varied, seed 1) one after the other, the order
alternating between rounds; the round's ratio is the study's mean samples/s over the separate
calls' mean. Target (issue 15): the median ratio is >= 0.98.

    python3 bench/study/bench_study.py --cli build/app/cli/stagewise-cli --rounds 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def last_json(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return json.loads(lines[-1])


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_study: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return p.stdout


def study_round(cli, config, sets, lrs, db):
    out = run([cli, "study", "run", "--config", config, *sets, "--vary",
               "train.lr=" + json.dumps(lrs), "--db", db, "--json", "--quiet"])
    study = last_json(out)["study_id"]
    rows = json.loads(run([cli, "study", "export", str(study), "--format", "json", "--db", db]))
    return [r["samples_per_sec"] for r in rows]


def train_round(cli, config, sets, lrs, db):
    speeds = []
    for lr in lrs:
        out = run([cli, "train", "--config", config, *sets, "--set", f"train.lr={lr}", "--set",
                   "train.seed=1", "--db", db, "--json", "--quiet"])
        speeds.append(last_json(out)["samples_per_sec"])
    return speeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default="build/app/cli/stagewise-cli")
    ap.add_argument("--config", default="mlp-fmnist-4stage")
    ap.add_argument("--runs", type=int, default=3, help="points per study (N)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=400, help="train.max_steps of every run")
    args = ap.parse_args()
    lrs = [round(0.001 * (1 + i), 6) for i in range(args.runs)]
    sets = ["--set", f"train.max_steps={args.steps}"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            db_study = os.path.join(tmp, f"study-{r}.db")
            db_train = os.path.join(tmp, f"train-{r}.db")
            if r % 2 == 0:
                s = study_round(args.cli, args.config, sets, lrs, db_study)
                t = train_round(args.cli, args.config, sets, lrs, db_train)
            else:
                t = train_round(args.cli, args.config, sets, lrs, db_train)
                s = study_round(args.cli, args.config, sets, lrs, db_study)
            rows.append((r + 1, statistics.mean(s), statistics.mean(t)))
            print(f"round {r + 1}: study {statistics.mean(s):.0f}, separate {statistics.mean(t):.0f}"
                  " samples/s", file=sys.stderr)
    print(f"{args.config}, {args.runs} runs of {args.steps} steps per round, paired rounds "
          f"(order alternating)")
    print(f"{'round':>5}  {'study samples/s':>15}  {'train calls samples/s':>21}  {'ratio':>6}")
    ratios = []
    for r, s, t in rows:
        ratios.append(s / t)
        print(f"{r:>5}  {s:>15.0f}  {t:>21.0f}  {s / t:>6.3f}")
    median = statistics.median(ratios)
    print(f"median ratio {median:.3f} (target >= 0.98): {'yes' if median >= 0.98 else 'NO'}")
    return 0 if median >= 0.98 else 3


if __name__ == "__main__":
    sys.exit(main())
