#!/usr/bin/env python3
"""The backprop baseline: the same 9 layers end to end, one Adam, cross-entropy on the
classifier, with N intra-op threads."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import common


def main():
    args = common.parse_args(__doc__.splitlines()[0], lambda ap: ap.add_argument(
        "--threads", type=int, default=1, help="intra-op threads"))
    torch.set_num_threads(args.threads)
    x_all, y_all = common.load_fashion_mnist()
    torch.manual_seed(args.seed)
    model = nn.Sequential(*common.build_layers())
    opt = common.make_adam(model.parameters(), args)
    meter = common.Meter()
    for x, y in common.batches(x_all, y_all, args.steps, args.seed):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        meter.step_done(len(y), loss.item())
    meter.report("backprop", threads=torch.get_num_threads(), **common.tuning(args))


if __name__ == "__main__":
    main()
