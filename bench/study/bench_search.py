#!/usr/bin/env python3
"""Samplers and pruning on a preset: the best validation accuracy each sampler finds after 4, 8
and 16 trials, with and without pruning, and the training steps each search spends.

For every mode and sampler it runs one search of TRIALS trials of `train.lr` (log-uniform over
[1e-5, 1e-1]) WITHOUT pruning, each trial evaluated on the validation split every 100 steps, so
the value of every trial at every rung (100 x 3^k steps) is stored. Searches are prefixes of one
another (a sampler's first 4 trials are the same in a 4-, 8- or 16-trial search), so the best
after 4, 8 and 16 trials is read off that one search. Pruning only stops trials early and the
runs are deterministic, so what asynchronous successive halving would have kept, and the steps
it would have spent, follow from the stored values at the rungs by the rule of
study::AshaPruner (a trial goes on at a rung when it is among the best max(1, n // reduction) of
the n trials of its point that reached the rung so far, itself included). With --check, one
search is also run with --prune for real and its pruned trials compared with the replay's.

    python3 bench/study/bench_search.py --cli build/app/cli/stagewise-cli \
        --config resources/experiments/mlp-fmnist-4stage.json --modes local,backprop \
        --trials 16 --steps 1000 --check
"""
import argparse
import json
import math
import os
import sqlite3
import subprocess
import sys
import tempfile
import time


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):  # 1: a trial failed (diverged): a result of the search
        sys.exit(f"bench_search: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    lines = [line for line in p.stdout.strip().splitlines() if line.strip()]
    return json.loads(lines[-1])


def trials_of(db, study):
    """Per trial (in order): its lr, status, final val accuracy, steps, and value per rung."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT sr.point, sr.run_id, sr.values_json, r.status, r.steps, r.summary_json "
        "FROM study_runs sr JOIN runs r ON r.id = sr.run_id WHERE sr.study_id = ? "
        "AND sr.replaced = 0 ORDER BY sr.point", (study,)).fetchall()
    out = []
    for point, run_id, values, status, steps, summary in rows:
        s = json.loads(summary) if summary else {}
        curve = {}
        for step, value in con.execute(
                "SELECT p.step, p.value FROM points p JOIN series se ON se.id = p.series_id "
                "WHERE se.run_id = ? AND se.name = 'val_accuracy' AND se.stage = -1", (run_id,)):
            curve[step + 1] = value
        out.append({"point": point, "lr": json.loads(values)[-1], "status": status,
                    "val": s.get("val_accuracy"), "steps": steps or 0, "curve": curve,
                    "run": run_id})
    return out


def rungs(min_steps, reduction, total):
    r, out = min_steps, []
    while r < total:
        out.append(r)
        if r > total // reduction:
            break
        r *= reduction
    return out


def replay(trials, total, min_steps=100, reduction=3):
    """ASHA over the trials in order: which survive, and the steps each spends."""
    seen = {}  # rung -> values of the trials that reached it
    kept, spent = [], []
    for t in trials:
        pruned_at = None
        if t["status"] == "completed":
            for r in rungs(min_steps, reduction, total):
                v = t["curve"].get(r, float("nan"))
                others = seen.setdefault(r, [])
                rank = 1 + sum(1 for o in others if (o > v) or (math.isnan(v) and not math.isnan(o)))
                others.append(v)
                if rank > max(1, len(others) // reduction):
                    pruned_at = r
                    break
        kept.append(pruned_at is None and t["status"] == "completed")
        spent.append(pruned_at if pruned_at else t["steps"])
    return kept, spent


def best(trials, kept, n):
    vals = [t["val"] for t, k in zip(trials[:n], kept[:n]) if k and t["val"] is not None]
    return max(vals) if vals else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/app/cli/stagewise-cli")
    ap.add_argument("--config", default="resources/experiments/mlp-fmnist-4stage.json")
    ap.add_argument("--modes", default="local,backprop")
    ap.add_argument("--samplers", default="random,sobol,maxlipo")
    ap.add_argument("--trials", type=int, default=16)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--validation", type=float, default=0.1)
    ap.add_argument("--check", action="store_true", help="also run one pruned search for real")
    ap.add_argument("--db", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    db = a.db or os.path.join(tempfile.mkdtemp(prefix="bench_search-"), "runs.db")
    base = [a.cli, "study", "run", "--config", a.config, "--db", db, "--json", "--quiet",
            "--set", f"dataset.validation={a.validation}", "--set", f"train.max_steps={a.steps}",
            "--set", "eval.interval=100", "--set", "measure.budget=0",
            "--search", "train.lr=log_uniform:1e-5:1e-1", "--trials", str(a.trials)]
    results = {}
    start = time.time()
    for mode in a.modes.split(","):
        for sampler in a.samplers.split(","):
            t0 = time.time()
            shown = run(base + ["--set", f"mode={mode}", "--sampler", sampler,
                                "--name", f"{mode} {sampler}"])
            trials = trials_of(db, shown["study_id"])
            results[(mode, sampler)] = trials
            print(f"[{time.time() - start:6.0f} s] {mode} {sampler}: {len(trials)} trials in "
                  f"{time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    ns = [n for n in (4, 8, 16) if n <= a.trials]
    print(f"\nbest val_accuracy after n trials of train.lr ~ log_uniform[1e-5, 1e-1], "
          f"{a.steps} steps per trial; steps: total training steps spent by the search")
    header = ["mode", "sampler"] + [f"n={n}" for n in ns] + [f"pruned n={n}" for n in ns] + \
             [f"steps n={ns[-1]}", f"pruned steps n={ns[-1]}", "share"]
    print("  ".join(f"{h:>14}" for h in header))
    table = []
    for (mode, sampler), trials in results.items():
        full = [t["status"] == "completed" for t in trials]
        kept, spent = replay(trials, a.steps)
        row = {"mode": mode, "sampler": sampler,
               "best": {n: best(trials, full, n) for n in ns},
               "best_pruned": {n: best(trials, kept, n) for n in ns},
               "steps": sum(t["steps"] for t in trials[:ns[-1]]),
               "steps_pruned": sum(spent[:ns[-1]]),
               "lrs": [t["lr"] for t in trials], "vals": [t["val"] for t in trials]}
        table.append(row)
        cells = [mode, sampler] + [f"{row['best'][n]:.4f}" for n in ns] + \
                [f"{row['best_pruned'][n]:.4f}" for n in ns] + \
                [str(row["steps"]), str(row["steps_pruned"]),
                 f"{row['steps_pruned'] / max(1, row['steps']):.2f}"]
        print("  ".join(f"{c:>14}" for c in cells))
    if a.check:
        mode, sampler = a.modes.split(",")[0], a.samplers.split(",")[0]
        shown = run(base + ["--set", f"mode={mode}", "--sampler", sampler, "--prune",
                            "--name", f"{mode} {sampler} pruned"])
        real = trials_of(db, shown["study_id"])
        kept, _ = replay(results[(mode, sampler)], a.steps)
        real_kept = [t["status"] == "completed" for t in real]
        same = kept == real_kept and \
            [t["lr"] for t in real] == [t["lr"] for t in results[(mode, sampler)]]
        print(f"\ncheck: {mode} {sampler} with --prune for real: kept {real_kept}; replay kept "
              f"{kept}: {'the same' if same else 'DIFFERENT'}")
        print(f"real pruned search spent {sum(t['steps'] for t in real)} steps, best "
              f"{best(real, real_kept, len(real)):.4f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"steps": a.steps, "trials": a.trials, "rows": table}, f, indent=1)
    print(f"\nstore: {db}")


if __name__ == "__main__":
    main()
