#!/usr/bin/env python3
"""Local learning with one Python thread per stage: each stage learns from its own aux loss as
soon as its input arrives, and the stages are joined by bounded queues (4 batches), as in
Stagewise's local mode."""
import os
import queue
import threading
import traceback

import torch
import torch.nn.functional as F

import common

CAPACITY = 4


def stage_loop(body, aux, opt, inbox, outbox, meter, args):
    # torch.set_num_threads is process-wide only for PyTorch's own parallel kernels, and only
    # lazily: each thread applies the stored count on its first parallel_for. A new thread
    # starts with libgomp's default team size (one per core, or OMP_NUM_THREADS), and OpenBLAS
    # (OpenMP build) reads that per call, so the stage's first Linear would run on a team of
    # nproc threads. Setting it here, in the thread, makes every op of the stage use one.
    torch.set_num_threads(1)
    common.tune_thread(args)  # per thread: flush denormals here too
    while (item := inbox.get()) is not None:
        x, y = item
        out = body(x)
        loss = F.cross_entropy(aux(out), y)  # the last stage's aux is the identity
        opt.zero_grad()
        loss.backward()
        opt.step()
        if outbox is not None:
            outbox.put((out.detach(), y))  # no gradient crosses the boundary
        else:
            meter.step_done(len(y), loss.item())
    if outbox is not None:
        outbox.put(None)


def run_stage(*args):
    try:
        stage_loop(*args)
    except BaseException:
        traceback.print_exc()
        os._exit(1)  # the other stages would wait on their queues for ever


def main():
    args = common.parse_args(__doc__.splitlines()[0])
    torch.set_num_threads(1)
    x_all, y_all = common.load_fashion_mnist()
    stages = common.build_stages(args.seed, args)
    queues = [queue.Queue(maxsize=CAPACITY) for _ in stages]
    meter = common.Meter()
    threads = [threading.Thread(target=run_stage, args=(
        body, aux, opt, queues[k], queues[k + 1] if k + 1 < len(stages) else None, meter, args))
        for k, (body, aux, opt) in enumerate(stages)]
    for t in threads:
        t.start()
    for x, y in common.batches(x_all, y_all, args.steps, args.seed):  # the main thread loads
        queues[0].put((x, y))
    queues[0].put(None)
    for t in threads:
        t.join()
    meter.report("threads", threads=1, **common.tuning(args))


if __name__ == "__main__":
    main()
