#!/usr/bin/env python3
"""Stagewise against the plain-PyTorch code a researcher would write instead (issue 19).

Each round runs every row once, the order rotated from round to round so that slow phases of
the machine fall on different rows; the table gives each row's median samples/s over rounds and
its ratio to the fastest peer of its kind (local: dgl or threads; backprop), tuned peers
included. A tuned peer is the code a careful engineer writes (issue 32): denormals flushed in
every compute thread, and the faster of Adam's two CPU implementations (the per-parameter loop,
torch 1.13's CPU default, or foreach=True), measured for each peer before the rounds.

    python3 bench/peers/bench_peers.py --cli build/app/cli/stagewise-cli --rounds 5 --steps 1875

--text (issue 34): the gpt-text-4stage preset instead, against peer_gpt.py (a small GPT script:
end-to-end backprop, and a local-loss version with an lm head per stage), Stagewise in local,
pipeline and backprop mode; the table adds tokens/s (samples/s x the context of 64).
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
# The peers' kinds: each row is compared with the fastest peer of its kind.
KIND_OF = {"peer dgl": "local", "peer threads": "local", "peer backprop t1": "backprop",
           "peer backprop t2": "backprop", "stagewise local": "local",
           "stagewise local, defaults": "local", "stagewise backprop t1": "backprop",
           "stagewise backprop t2": "backprop",
           # --text
           "peer gpt backprop": "backprop", "peer gpt local": "local",
           "stagewise gpt local": "local", "stagewise gpt pipeline": "backprop",
           "stagewise gpt backprop": "backprop"}
PEER_SCRIPTS = {"peer dgl": ("peer_dgl.py",), "peer threads": ("peer_threads.py",),
                "peer backprop t1": ("peer_backprop.py", "--threads", "1"),
                "peer backprop t2": ("peer_backprop.py", "--threads", "2")}
TEXT_PEER_SCRIPTS = {"peer gpt backprop": ("peer_gpt.py", "--method", "backprop"),
                     "peer gpt local": ("peer_gpt.py", "--method", "local")}
TEXT_CONTEXT = 64  # dataset.context of gpt-text-4stage.json (and peer_gpt.CONTEXT)


def peer_scripts(args):
    return TEXT_PEER_SCRIPTS if args.text else PEER_SCRIPTS


def kind(name):
    return KIND_OF[name.replace(", tuned", "")]
OFF = ["--set", "eval.interval=0", "--set", "probe.interval=-1"]  # no evaluation, no probes


def rows(args, python, adam=None):
    """(name, what, command, is_peer) for every row of the table; `adam` gives each tuned
    peer's Adam (no tuned rows without it)."""
    def peer(script, *extra):
        return [python, os.path.join(HERE, script), "--steps", str(args.steps),
                "--seed", str(args.seed), *extra]

    def cli(*sets):
        # The peers initialise as PyTorch does by default; the preset's kaiming init (issue 32)
        # would change the weights' scale, and with it how many denormals the steps meet.
        return [args.cli, "train", "--config", args.config, "--json", "--quiet", "--db", args.db,
                "--set", f"train.max_steps={args.steps}", "--set", f"train.seed={args.seed}",
                *([] if args.text else ["--set", "model.init=default"]), *sets]

    if args.text:
        out = [("peer gpt backprop", "one loop, end to end, 1 intra-op thread",
                peer("peer_gpt.py", "--method", "backprop"), True),
               ("peer gpt local", "one loop, stage after stage, lm head per stage, 1 thread",
                peer("peer_gpt.py", "--method", "local"), True)]
        for name, script in TEXT_PEER_SCRIPTS.items():
            if adam and name in adam:
                out.append((f"{name}, tuned", f"as {name}, denormals flushed, Adam {adam[name]}",
                            peer(*script, "--flush-denormal", "--adam",
                                 adam[name]), True))
        if not args.peers_only:
            out += [
                ("stagewise gpt local", "mode=local, eval and probes off",
                 cli("--set", "mode=local", *OFF), False),
                ("stagewise gpt pipeline", "mode=pipeline (GPipe, M = 4), eval and probes off",
                 cli("--set", "mode=pipeline", *OFF), False),
                ("stagewise gpt backprop", "mode=backprop, backprop_threads=1, eval and probes off",
                 cli("--set", "mode=backprop", "--set", "train.backprop_threads=1", *OFF), False),
            ]
        return out

    out = [
        ("peer dgl", "one loop, stage after stage, 1 thread", peer("peer_dgl.py"), True),
        ("peer threads", "a Python thread per stage, queues of 4", peer("peer_threads.py"), True),
        ("peer backprop t1", "end to end, 1 intra-op thread",
         peer("peer_backprop.py", "--threads", "1"), True),
        ("peer backprop t2", "end to end, 2 intra-op threads",
         peer("peer_backprop.py", "--threads", "2"), True),
    ]
    for name, script in PEER_SCRIPTS.items():
        if adam and name in adam:
            out.append((f"{name}, tuned", f"as {name.split()[1]}, denormals flushed, Adam "
                        f"{adam[name]}", peer(*script, "--flush-denormal", "--adam", adam[name]),
                        True))
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


def calibrate(args, python, env):
    """For each peer, its tuned run with each Adam implementation, alternating, `rounds` times:
    the faster by median is the one the tuned row uses. Returns ({peer: adam}, table lines)."""
    chosen, lines = {}, ["| peer (tuned) | Adam loop, samples/s | Adam foreach, samples/s | "
                         "chosen |", "|---|---:|---:|---|"]
    for name, script in peer_scripts(args).items():
        speeds = {"loop": [], "foreach": []}
        for k in range(args.calibrate_rounds):
            order = ("loop", "foreach") if k % 2 == 0 else ("foreach", "loop")
            for adam in order:
                cmd = [python, os.path.join(HERE, script[0]), *script[1:], "--steps",
                       str(args.calibrate_steps), "--seed", str(args.seed), "--flush-denormal",
                       "--adam", adam]
                speeds[adam].append(run(cmd, env, args.timeout)["samples_per_sec"])
        med = {a: statistics.median(v) for a, v in speeds.items()}
        chosen[name] = max(med, key=med.get)
        lines.append(f"| {name} | {med['loop']:,.0f} | {med['foreach']:,.0f} | {chosen[name]} |")
        print(f"calibration: {name}: loop {med['loop']:,.0f}, foreach {med['foreach']:,.0f} "
              f"samples/s: {chosen[name]}", file=sys.stderr, flush=True)
    return chosen, lines


def table(names, what, results, context=0):
    """Markdown rows; the ratio is the median over rounds of row / the fastest peer of its kind
    (by median) in that round. `context` > 0: a tokens/s column (samples/s x context)."""
    speeds = {n: [r["samples_per_sec"] for r in results if r["row"] == n] for n in names}
    med = {n: statistics.median(v) for n, v in speeds.items()}
    refs = {}
    for k in ("local", "backprop"):
        peers = [n for n in names if n.startswith("peer") and kind(n) == k]
        if peers:
            refs[k] = max(peers, key=lambda n: med[n])
    per_round = {(r["round"], r["row"]): r["samples_per_sec"] for r in results}
    rounds = sorted({r["round"] for r in results})
    tok = " median tokens/s |" if context else ""
    lines = [f"| row | what | median samples/s |{tok} min–max | × fastest peer of its kind |",
             "|---|---|---:|" + ("---:|" if context else "") + "---:|---:|"]
    for n in names:
        ref = refs[kind(n)]
        ratio = statistics.median(per_round[(k, n)] / per_round[(k, ref)] for k in rounds)
        tokens = f" {med[n] * context:,.0f} |" if context else ""
        lines.append(f"| {n} | {what[n]} | {med[n]:,.0f} |{tokens} {min(speeds[n]):,.0f}–"
                     f"{max(speeds[n]):,.0f} | {ratio:.2f} × {ref} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/app/cli/stagewise-cli"))
    ap.add_argument("--config", help="the preset (default mlp-fmnist-4stage.json; --text: "
                    "gpt-text-4stage.json)")
    ap.add_argument("--text", action="store_true",
                    help="the GPT on text: peer_gpt.py against local, pipeline and backprop")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int,
                    help="steps of every run (default: 1 epoch, 1875; --text: 600)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--python", help="the Python that runs the peers (default: one with torch)")
    ap.add_argument("--peers-only", action="store_true", help="skip the Stagewise rows")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds one run may take")
    ap.add_argument("--out", help="write every run of every round to this JSON file")
    ap.add_argument("--no-tuned", action="store_true",
                    help="leave out the tuned peers (denormals flushed, the faster Adam)")
    ap.add_argument("--calibrate-steps", type=int, default=400,
                    help="steps of each run that picks a tuned peer's Adam")
    ap.add_argument("--calibrate-rounds", type=int, default=2)
    args = ap.parse_args()
    preset = "gpt-text-4stage.json" if args.text else "mlp-fmnist-4stage.json"
    args.config = args.config or os.path.join(ROOT, "resources/experiments", preset)
    args.steps = args.steps or (600 if args.text else 1875)
    if not args.peers_only and not (os.path.isfile(args.cli) and os.access(args.cli, os.X_OK)):
        sys.exit(f"bench_peers: no stagewise-cli at {args.cli}: build it first "
                 "(scripts/run.sh, or cmake --build build --target stagewise-cli), pass --cli, "
                 "or pass --peers-only to run the Python peers alone")
    python = find_python(args.python)
    env = peer_env()

    results = []
    adam, calibration = ({}, []) if args.no_tuned else calibrate(args, python, env)
    with tempfile.TemporaryDirectory() as tmp:
        args.db = os.path.join(tmp, "runs.db")
        plan = rows(args, python, adam)
        for k in range(args.rounds):
            order = plan[k % len(plan):] + plan[:k % len(plan)]  # rotate: interleaved rounds
            for name, _, cmd, is_peer in order:
                s = run(cmd, env if is_peer else None, args.timeout)
                results.append({"round": k + 1, "row": name, "cmd": cmd, **s})
                print(f"round {k + 1}: {name}: {s['samples_per_sec']:,.0f} samples/s",
                      file=sys.stderr, flush=True)

    names = [p[0] for p in plan]
    print(table(names, {p[0]: p[1] for p in plan}, results,
                TEXT_CONTEXT if args.text else 0))
    if calibration:
        print(f"\nEach tuned peer's Adam, chosen by {args.calibrate_rounds} alternating runs of "
              f"{args.calibrate_steps} steps each (median samples/s, denormals flushed):\n")
        print("\n".join(calibration))
    first_peer = next(r for r in results if r["row"].startswith("peer"))
    cli_blas = sorted({r.get("blas") for r in results if r["row"].startswith("stagewise")} - {None})
    print(f"\n{os.cpu_count()} cores, batch 32{', context 64' if args.text else ''}, "
          f"{args.steps} steps per run, "
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
                       "adam": adam,
                       "env": {k: env.get(k) for k in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")},
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
