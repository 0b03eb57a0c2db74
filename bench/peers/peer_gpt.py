#!/usr/bin/env python3
"""The gpt-text-4stage preset as a small GPT training script writes it (issue 34): byte tokens,
one loop. --method backprop: end to end, one Adam. --method local: the blocks cut as the preset
cuts them, each stage but the last with a language-model head (LayerNorm + Linear to the
vocabulary) on the detached output of the stage before it, each stage its own Adam."""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import common

# resources/experiments/gpt-text-4stage.json
CORPUS = os.environ.get("STAGEWISE_TEXT", "/usr/share/games/fortunes")
VOCAB, CONTEXT, DIM, HEADS, DEPTH, MLP_RATIO = 256, 64, 64, 4, 4, 2
CUTS = [2, 3, 4]  # layers: 0 embedding, 1..4 blocks, 5 the final LayerNorm + Linear
BATCH, LR, TEST_FRACTION = 32, 3e-3, 0.1


def read_corpus(path):
    """The training bytes: a file, or a folder's text files in name order (the fortunes index
    .dat files and .u8 links left out, % separator lines read as blank lines)."""
    if os.path.isfile(path):
        names = [path]
    else:
        names = [os.path.join(path, n) for n in sorted(os.listdir(path))
                 if not n.endswith((".dat", ".u8")) and os.path.isfile(os.path.join(path, n))
                 and not os.path.islink(os.path.join(path, n))]
    text = bytearray()
    for name in names:
        with open(name, "rb") as f:
            data = f.read()
        if b"\0" in data:
            continue
        text += b"\n".join(b"" if line == b"%" else line for line in data.split(b"\n"))
    if len(text) < CONTEXT + 2:
        raise SystemExit(f"peer_gpt: {path}: fewer than {CONTEXT + 2} bytes of text")
    train = text[:int(len(text) * (1 - TEST_FRACTION))]
    return torch.frombuffer(train, dtype=torch.uint8).long()


def batches(tokens, steps, seed):
    """`steps` batches of windows at offsets drawn from one seeded generator."""
    g = torch.Generator().manual_seed(seed)
    span = len(tokens) - CONTEXT - 1
    ar = torch.arange(CONTEXT)
    for _ in range(steps):
        at = torch.randint(0, span, (BATCH, 1), generator=g) + ar
        yield tokens[at], tokens[at + 1]


class Block(nn.Module):
    """Pre-norm causal block: x + attn(ln1(x)), then x + mlp(ln2(x)), GELU."""

    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.fc1, self.fc2 = nn.Linear(DIM, MLP_RATIO * DIM), nn.Linear(MLP_RATIO * DIM, DIM)
        self.register_buffer("mask", torch.ones(CONTEXT, CONTEXT, dtype=torch.bool).triu(1))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // HEADS)
        att = att.masked_fill(self.mask[:t, :t], float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(1, CONTEXT, DIM) * 0.02)

    def forward(self, idx):
        return self.tok(idx) + self.pos[:, :idx.size(1)]


def lm_head():
    return nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, VOCAB))


def layers():
    return [Embed(), *[Block() for _ in range(DEPTH)], lm_head()]


def lm_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))


def main():
    args = common.parse_args(__doc__.splitlines()[0], lambda ap: (
        ap.add_argument("--method", choices=("backprop", "local"), default="backprop"),
        ap.add_argument("--threads", type=int, default=1, help="intra-op threads")))
    torch.set_num_threads(args.threads)
    tokens = read_corpus(CORPUS)
    torch.manual_seed(args.seed)
    all_layers = layers()
    if args.method == "backprop":
        model = nn.Sequential(*all_layers)
        stages = [(model, nn.Identity(), torch.optim.Adam(model.parameters(), lr=LR,
                                                          foreach=args.adam == "foreach"))]
    else:
        bounds = [0, *CUTS, len(all_layers)]
        stages = []
        for k in range(len(bounds) - 1):
            body = nn.Sequential(*all_layers[bounds[k]:bounds[k + 1]])
            aux = nn.Identity() if k == len(bounds) - 2 else lm_head()
            opt = torch.optim.Adam([*body.parameters(), *aux.parameters()], lr=LR,
                                   foreach=args.adam == "foreach")
            stages.append((body, aux, opt))
    meter = common.Meter()
    for x, y in batches(tokens, args.steps, args.seed):
        for body, aux, opt in stages:
            out = body(x)
            loss = lm_loss(aux(out), y)  # the last stage's aux is the identity
            opt.zero_grad()
            loss.backward()
            opt.step()
            x = out.detach()  # local: no gradient crosses the boundary
        meter.step_done(len(y), loss.item())
    meter.report(f"gpt {args.method}", threads=torch.get_num_threads(), context=CONTEXT,
                 **common.tuning(args))


if __name__ == "__main__":
    main()
