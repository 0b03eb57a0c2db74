"""What the three peers share: the data, the model, the command line and the throughput count.

The numbers are those of resources/experiments/mlp-fmnist-4stage.json, Stagewise's default
preset, written out as a researcher would in a script of their own.
"""
import argparse
import ctypes
import gzip
import json
import os
import struct
import time

import torch
import torch.nn as nn

DATA = os.environ.get("STAGEWISE_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")
HIDDEN = [512] * 8  # fc1..fc8, each Linear + ReLU
CLASSES = 10
CUTS = [2, 4, 6]  # stage k runs layers CUTS[k-1] .. CUTS[k]-1; the last ends in the classifier
BATCH = 32
LR = 1e-3
EPOCH_STEPS = 60000 // BATCH  # 1875
WARMUP = 20  # steps of the last stage not counted in samples/s, as in Stagewise


def parse_args(description, extra=None):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--steps", type=int, default=EPOCH_STEPS, help="batches to train on")
    ap.add_argument("--seed", type=int, default=1)
    # What a careful engineer adds (issue 32): denormals flushed to zero in every thread that
    # computes (the flag is per thread; a thread started later inherits the one that starts it),
    # and the faster of Adam's two CPU implementations, measured (bench_peers.py --tuned).
    ap.add_argument("--flush-denormal", action="store_true",
                    help="torch.set_flush_denormal(True) in every compute thread")
    ap.add_argument("--adam", choices=("loop", "foreach"), default="loop",
                    help="Adam's per-parameter loop (torch 1.13's CPU default) or foreach=True")
    if extra:
        extra(ap)
    args = ap.parse_args()
    tune_thread(args)
    return args


def tune_thread(args):
    """Applies the per-thread settings in the calling thread (call it in every thread)."""
    if args.flush_denormal and not torch.set_flush_denormal(True):
        raise SystemExit("this CPU cannot flush denormals (no SSE3)")


def make_adam(params, args):
    return torch.optim.Adam(params, lr=LR, foreach=args.adam == "foreach")


def tuning(args):
    """The report's fields that say how the peer was tuned."""
    return {"flush_denormal": bool(args.flush_denormal), "adam": args.adam}


def read_idx(path):
    """One IDX file (big-endian dims after a 4-byte magic) as a uint8 tensor."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8).view(*dims)


def load_fashion_mnist():
    """Training images as float /255, normalised by their global mean and std, flattened."""
    x = read_idx(f"{DATA}/train-images-idx3-ubyte.gz").float().div_(255)
    y = read_idx(f"{DATA}/train-labels-idx1-ubyte.gz").long()
    x = (x - x.mean()) / x.std()
    return x.view(len(x), -1).contiguous(), y


def batches(x, y, steps, seed):
    """`steps` shuffled batches, a new permutation each epoch from one seeded generator."""
    g = torch.Generator().manual_seed(seed)
    step = 0
    while True:
        perm = torch.randperm(len(x), generator=g)
        for i in range(0, len(x) - BATCH + 1, BATCH):
            if step == steps:
                return
            idx = perm[i:i + BATCH]
            yield x[idx], y[idx]
            step += 1


def build_layers(in_features=784):
    """The 9 layers indexed 0..8: eight Linear(·, 512) + ReLU, then the classifier."""
    layers, width = [], in_features
    for h in HIDDEN:
        layers.append(nn.Sequential(nn.Linear(width, h), nn.ReLU()))
        width = h
    layers.append(nn.Linear(width, CLASSES))
    return layers


def build_stages(seed, args=None):
    """The layers cut at CUTS; each stage but the last gets an aux head Linear(512, 10)."""
    torch.manual_seed(seed)
    layers = build_layers()
    bounds = [0, *CUTS, len(layers)]
    stages = []
    for k in range(len(bounds) - 1):
        body = nn.Sequential(*layers[bounds[k]:bounds[k + 1]])
        last = k == len(bounds) - 2
        aux = nn.Identity() if last else nn.Linear(HIDDEN[bounds[k + 1] - 1], CLASSES)
        params = [*body.parameters(), *aux.parameters()]
        opt = make_adam(params, args) if args else torch.optim.Adam(params, lr=LR)
        stages.append((body, aux, opt))
    return stages


class Meter:
    """Samples/s as Stagewise counts it: samples the last stage finished after its first 20
    steps, over the time from the end of step 20 to the end of the last step."""

    def __init__(self):
        self.start = time.perf_counter()
        self.steps = 0
        self.samples = 0
        self.warm_end = None
        self.last_end = None
        self.losses = []

    def step_done(self, samples, loss):
        now = time.perf_counter()
        self.steps += 1
        self.losses.append(loss)
        if self.steps == WARMUP:
            self.warm_end = now
        elif self.steps > WARMUP:
            self.samples += samples
        self.last_end = now

    def report(self, peer, **extra):
        span = (self.last_end - self.warm_end) if self.warm_end else 0
        tail = self.losses[-50:] or [float("nan")]
        print(json.dumps({
            "peer": peer,
            "steps": self.steps,
            "samples_per_sec": round(self.samples / span, 1) if span > 0 else 0,
            "wall_seconds": round(time.perf_counter() - self.start, 3),
            "first_loss": round(self.losses[0], 4) if self.losses else None,
            "final_loss": round(sum(tail) / len(tail), 4),  # mean of the last 50 steps
            "torch": torch.__version__,
            "blas": blas_in_use(),
            **extra,
        }), flush=True)


def blas_in_use():
    """The BLAS this process calls, named as Stagewise's summary names it. Debian's torch calls
    the libblas.so.3 alternative, which must be OpenBLAS: reference BLAS is several times
    slower."""
    torch.ones(2, 2) @ torch.ones(2, 2)  # make sure it is loaded
    with open("/proc/self/maps") as f:
        paths = sorted({os.path.realpath(line.split()[-1]) for line in f
                        if "/libblas" in line or "/libopenblas" in line})
    for path in paths:
        if "openblas" in os.path.basename(path):
            get_config = ctypes.CDLL(path).openblas_get_config  # already mapped: no new load
            get_config.restype = ctypes.c_char_p
            flavour = os.path.basename(os.path.dirname(path))  # e.g. openblas-openmp
            return f"{get_config().decode()} ({flavour})"
    return f"not OpenBLAS: {', '.join(paths) or 'unknown'}"
