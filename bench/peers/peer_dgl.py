#!/usr/bin/env python3
"""Local learning as DGL / InfoPro reference code writes it: one loop; per batch, each stage in
turn learns from its own aux loss on the detached output of the stage before it."""
import torch
import torch.nn.functional as F

import common


def main():
    args = common.parse_args(__doc__.splitlines()[0])
    torch.set_num_threads(1)  # one intra-op thread, as each Stagewise stage has
    x_all, y_all = common.load_fashion_mnist()
    stages = common.build_stages(args.seed, args)
    meter = common.Meter()
    for x, y in common.batches(x_all, y_all, args.steps, args.seed):
        for body, aux, opt in stages:
            out = body(x)
            loss = F.cross_entropy(aux(out), y)  # the last stage's aux is the identity
            opt.zero_grad()
            loss.backward()
            opt.step()
            x = out.detach()  # no gradient crosses the boundary
        meter.step_done(len(y), loss.item())
    meter.report("dgl", threads=1, **common.tuning(args))


if __name__ == "__main__":
    main()
