#!/usr/bin/env python3
"""Stagewise against the plain-PyTorch code a researcher would write instead (issue 19).

Each round runs every row once, the order rotated from round to round so that slow phases of
the machine fall on different rows; the table gives each row's median samples/s over rounds and
its ratio to the faster of the two local peers (dgl, threads).

    python3 bench/peers/bench_peers.py --cli build/app/cli/stagewise-cli --rounds 5 --steps 1875
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LOCAL_PEERS = ("peer dgl", "peer threads")
OFF = ["--set", "eval.interval=0", "--set", "probe.interval=-1"]  # no evaluation, no probes


def rows(args, python):
    """(name, what, command, is_peer) for every row of the table."""
    def peer(script, *extra):
        return [python, os.path.join(HERE, script), "--steps", str(args.steps),
                "--seed", str(args.seed), *extra]

    def cli(*sets):
        return [args.cli, "train", "--config", args.config, "--json", "--quiet", "--db", args.db,
                "--set", f"train.max_steps={args.steps}", "--set", f"train.seed={args.seed}",
                *sets]

    out = [
        ("peer dgl", "one loop, stage after stage, 1 thread", peer("peer_dgl.py"), True),
        ("peer threads", "a Python thread per stage, queues of 4", peer("peer_threads.py"), True),
        ("peer backprop t1", "end to end, 1 intra-op thread",
         peer("peer_backprop.py", "--threads", "1"), True),
        ("peer backprop t2", "end to end, 2 intra-op threads",
         peer("peer_backprop.py", "--threads", "2"), True),
    ]
    if not args.peers_only:
        out += [
            ("stagewise local", "mode=local, eval and probes off",
             cli("--set", "mode=local", *OFF), False),
            ("stagewise local, defaults", "mode=local, the preset's eval and probes",
             cli("--set", "mode=local"), False),
            ("stagewise backprop t1", "mode=backprop, backprop_threads=1, eval and probes off",
             cli("--set", "mode=backprop", "--set", "train.backprop_threads=1", *OFF), False),
            ("stagewise backprop t2", "mode=backprop, backprop_threads=2, eval and probes off",
             cli("--set", "mode=backprop", "--set", "train.backprop_threads=2", *OFF), False),
        ]
    return out


def find_python(wanted):
    """A Python that imports torch: Debian's python3-torch lives in /usr/bin/python3, which
    a pyenv or venv python3 first on PATH does not see."""
    tried = [wanted] if wanted else [sys.executable, "/usr/bin/python3"]
    for exe in tried:
        try:
            if subprocess.run([exe, "-c", "import torch"], capture_output=True).returncode == 0:
                return exe
        except OSError:
            pass
    sys.exit(f"bench_peers: no Python with torch among {', '.join(tried)}; "
             "install Debian's with `bash scripts/deps.sh --bench`")


def peer_env():
    """The peers' environment: the same short OpenMP spin that stagewise-cli gives itself
    (docs/architecture.md, "Idle OpenMP workers") unless the user chose a wait policy."""
    env = dict(os.environ)
    if "GOMP_SPINCOUNT" not in env and "OMP_WAIT_POLICY" not in env:
        env["GOMP_SPINCOUNT"] = "10000"
    return env


def run(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"bench_peers: {' '.join(cmd)} ran past {timeout} s")
    if p.returncode != 0:
        sys.exit(f"bench_peers: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    return json.loads(lines[-1])  # both peers and `--json` end stdout with a summary object


def table(names, what, results):
    """Markdown rows; the ratio is the median over rounds of row / reference in that round."""
    speeds = {n: [r["samples_per_sec"] for r in results if r["row"] == n] for n in names}
    med = {n: statistics.median(v) for n, v in speeds.items()}
    ref = max(LOCAL_PEERS, key=lambda n: med[n])
    per_round = {(r["round"], r["row"]): r["samples_per_sec"] for r in results}
    rounds = sorted({r["round"] for r in results})
    lines = [f"| row | what | median samples/s | min–max | × {ref} |", "|---|---|---:|---:|---:|"]
    for n in names:
        ratio = statistics.median(per_round[(k, n)] / per_round[(k, ref)] for k in rounds)
        lines.append(f"| {n} | {what[n]} | {med[n]:,.0f} | {min(speeds[n]):,.0f}–"
                     f"{max(speeds[n]):,.0f} | {ratio:.2f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/app/cli/stagewise-cli"))
    ap.add_argument("--config",
                    default=os.path.join(ROOT, "resources/experiments/mlp-fmnist-4stage.json"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=1875, help="steps of every run (1 epoch: 1875)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--python", help="the Python that runs the peers (default: one with torch)")
    ap.add_argument("--peers-only", action="store_true", help="skip the Stagewise rows")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds one run may take")
    ap.add_argument("--out", help="write every run of every round to this JSON file")
    args = ap.parse_args()
    if not args.peers_only and not (os.path.isfile(args.cli) and os.access(args.cli, os.X_OK)):
        sys.exit(f"bench_peers: no stagewise-cli at {args.cli}: build it first "
                 "(scripts/run.sh, or cmake --build build --target stagewise-cli), pass --cli, "
                 "or pass --peers-only to run the Python peers alone")
    python = find_python(args.python)
    env = peer_env()

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        args.db = os.path.join(tmp, "runs.db")
        plan = rows(args, python)
        for k in range(args.rounds):
            order = plan[k % len(plan):] + plan[:k % len(plan)]  # rotate: interleaved rounds
            for name, _, cmd, is_peer in order:
                s = run(cmd, env if is_peer else None, args.timeout)
                results.append({"round": k + 1, "row": name, "cmd": cmd, **s})
                print(f"round {k + 1}: {name}: {s['samples_per_sec']:,.0f} samples/s",
                      file=sys.stderr, flush=True)

    names = [p[0] for p in plan]
    print(table(names, {p[0]: p[1] for p in plan}, results))
    first_peer = next(r for r in results if r["row"].startswith("peer"))
    cli_blas = sorted({r.get("blas") for r in results if r["row"].startswith("stagewise")} - {None})
    print(f"\n{os.cpu_count()} cores, batch 32, {args.steps} steps per run, "
          f"{args.rounds} round(s), rows in rotated order. samples/s counts the samples the last "
          "stage finished after its first 20 steps, over the time since step 20 ended.")
    print(f"Peers: {python}, torch {first_peer['torch']}, BLAS {first_peer['blas']}, "
          f"GOMP_SPINCOUNT={env.get('GOMP_SPINCOUNT', 'unset')}, "
          f"OMP_WAIT_POLICY={env.get('OMP_WAIT_POLICY', 'unset')} "
          "(10000 spins unless set, as stagewise-cli gives itself).")
    if cli_blas:
        print(f"Stagewise: {args.cli}, BLAS {'; '.join(map(str, cli_blas))}.")
    if any("openblas" not in str(b).lower() for b in [first_peer["blas"], *cli_blas]):
        print("WARNING: not OpenBLAS: reference BLAS is several times slower; "
              "run `bash scripts/deps.sh --bench`.")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"steps": args.steps, "rounds": args.rounds, "python": python,
                       "env": {k: env.get(k) for k in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")},
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
